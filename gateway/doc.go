// Package gateway is the Praxa runtime: the one service layer every surface
// calls, and the REST API under /v8 that serves it. It enforces OAuth bearer
// tokens, scopes, tenant isolation, idempotency keys, guards and audit, and
// runs missions as praxec workflows over a durable store.
//
// Routes, scopes, idempotency classes and schemas are read from package
// contracts, never repeated here. This package must not import mcpadapter or
// conformance.
package gateway
