package auth

import (
	"context"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/issuer"
)

// benchVerify verifies one token of alg b.N times against issuer A, with the
// verified-token cache of the given size (-1: disabled, so every call pays
// for the full verification).
func benchVerify(b *testing.B, alg string, cacheSize int) {
	e := newEnv(b, func(a *config.Auth, o *Options) {
		a.CacheSize = cacheSize
		o.Revocations = nil
		o.OnRefusal = nil
	})
	c := e.claims()
	c["exp"] = e.clock.Now().Add(time.Hour).Unix()
	tok := e.sign(b, c, issuer.WithAlgorithm(alg))
	ctx := context.Background()
	if _, err := e.v.Verify(ctx, tok); err != nil { // fetch the keys
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyCold measures a full verification: parse, signature,
// go-oidc's checks, this package's claim checks.
func BenchmarkVerifyCold(b *testing.B) {
	for _, alg := range []string{issuer.RS256, issuer.ES256} {
		b.Run(alg, func(b *testing.B) { benchVerify(b, alg, -1) })
	}
}

// BenchmarkVerifyCached measures a verified-token cache hit: a SHA-256 of
// the token, an LRU lookup and a copy of the principal.
func BenchmarkVerifyCached(b *testing.B) {
	for _, alg := range []string{issuer.RS256, issuer.ES256} {
		b.Run(alg, func(b *testing.B) { benchVerify(b, alg, 0) })
	}
}
