// Package testkit holds small test helpers for the module's low-level
// packages, which cannot import gateway/gatewaytest without an import
// cycle. It depends on the standard library only, so that any package's
// tests may import it.
package testkit
