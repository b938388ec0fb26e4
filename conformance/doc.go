// Package conformance is a black-box suite that checks a running gateway,
// this one or another that claims the Praxa contract, over HTTP and MCP
// against the contract. It speaks only to a base URL: REST through
// gateway/restclient and raw net/http, MCP through the official go-sdk
// client.
//
// Cases are data (Case): an id, a title, a group, the checklist item or
// seed section the case proves, the operations it exercises and a run
// function whose verdict is pass, fail (with a reason) or skip (with a
// reason). Run runs a selection of them against a Target and returns a
// Report, which praxa conformance prints, compares with a baseline of known
// failures and can record in the target as coverage evidence.
//
// The suite cannot mint tokens for a gateway that does not trust it. It
// therefore either runs its own OIDC issuer (StartIssuer: discovery and
// JWKS over HTTP) that the target is told to trust for the run, or is
// handed tokens: an issuer the target already trusts (IssuerTokens, e.g.
// the key of praxa serve --dev), a minting function (MintFunc) or tokens
// minted beforehand (PreMinted). Cases that need forged tokens (alg none,
// a foreign key, a wrong audience, ...) run only when the suite signs.
//
// This package must not import gateway internals: its imports are
// contracts, gateway/restclient, issuer and the go-sdk client, which a test
// (go list -deps) keeps so.
package conformance
