// Package contracts declares the Praxa tool contract once: the twelve aura_*
// tools and the praxec pair (praxec.query, praxec.command), each with its name,
// description, JSON Schema 2020-12 input and output schemas, REST operation
// (operationId, method, path), OAuth scope, idempotency class and MCP
// annotations.
//
// Everything else in the module derives from these declarations: the REST
// routes of the gateway, the MCP tool registrations, the OpenAPI document and
// tools.json, the list that MCP hosts register. Beside the tools it declares
// the operator endpoints (Endpoint: token revocation and the approval
// queue), which the REST API serves and the OpenAPI document describes but
// which are no MCP tools and are not in tools.json. The package also holds the
// vocabulary those surfaces share: typed scopes, the error-code registry with
// each code's HTTP status, the praxec dispatch table and its classifier, the
// named smallest tool sets and their fingerprints, idempotency-key validation
// and JSON-RPC 2.0 message types.
//
// Definitions are immutable. Every accessor returns a detached copy, so a
// caller that modifies what it received changes nothing here.
//
// This package imports only the standard library and the JSON Schema compiler.
// It must not import any other package of this module, nor anything about
// HTTP transport or storage.
package contracts
