// Package e2e holds end-to-end tests of the gateway's REST surface: real
// HTTP servers over httpapi.New, a real SQLite file, the embedded example
// workflows, and a real OIDC issuer served over HTTP minting the tokens.
// The package has no non-test code; its tests drive the example missions
// by following the links the gateway returns, meet every error code of the
// mission surface, and run two gateways over one database file.
package e2e
