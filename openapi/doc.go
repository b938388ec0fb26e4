// Package openapi generates the OpenAPI 3.1 document of the /v8 REST API from
// the declarations in package contracts, and validates it with kin-openapi.
//
// This package must not import gateway or mcpadapter.
package openapi
