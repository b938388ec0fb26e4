package openapi

// DecodeSchema exposes the embedding guard to the external tests.
var DecodeSchema = decodeSchema
