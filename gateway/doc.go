// Package gateway is the Praxa service layer: the one Service every
// surface (REST in gateway/httpapi, MCP in mcpadapter, the console, the
// operator commands) hands a Call and a verified principal. It admits the
// call through the one chain of checks (admission.go), runs the operation
// under idempotency, leases, guards and quotas, commits its audit events,
// and runs missions as praxec workflows over a durable store.
//
// Features that need only the pipeline live in packages of their own and
// register their operations through package op (Service.Register; a
// reload stages them through reload.Reloader.Features): gateway/knowledge serves the context, skills,
// certificates, coverage and trace reads. Parts that stand on their own
// are packages the service imports: gateway/catalogue (search, describe
// and the lexicon, registered through op as well; Service.Catalogue),
// gateway/audit (the Auditor, sinks, export and retention), gateway/pins
// (the quarantine of imported capabilities; Service.Pins),
// gateway/canonjson (the canonical JSON of fingerprints and pins),
// gateway/lightpath, gateway/ratelimit. gateway/reload reloads the
// configuration into a running Service (Service.Reload swaps a Runtime).
// The root keeps the pipeline (Service) and the missions (the type
// missions and its leases, which the Service hands the mission operations).
//
// Routes, scopes, idempotency classes and schemas are read from package
// contracts, never repeated here. This package must not import mcpadapter,
// conformance or a feature package (gateway/op's tests hold the last).
package gateway
