// Package conformance is a black-box suite that checks a running gateway,
// this one or another that claims the Praxa contract, over HTTP and MCP
// against the contract. It speaks only to a base URL.
//
// This package must not import gateway internals.
package conformance
