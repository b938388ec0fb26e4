package openapi

//go:generate go run ./internal/genopenapi -o openapi.json
