package conformance

// Payload is payload for the external tests: one decoder of a token's
// claims serves the suite and the tests that play a broken gateway.
var Payload = payload
