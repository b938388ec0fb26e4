package e2e_test

// Replicas on one PostgreSQL database (pgstore): what one replica writes,
// the other sees. The races of TestTwoEnginesOnePostgres are in
// engines_test.go; these tests skip without PRAXA_TEST_PG_DSN.

import (
	"net/http"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
)

// TestRevocationAcrossPostgresReplicas: a token revoked through one
// replica is refused by the other once its revocation list has polled the
// database (here every 50ms; serve polls every 2s).
func TestRevocationAcrossPostgresReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	ti := newIssuer(t)
	start := func() *gw {
		return wrap(gatewaytest.New(t, &gatewaytest.Options{
			Issuer:             &gatewaytest.Issuer{Issuer: ti.iss, URL: ti.url},
			StoreDSN:           dsn,
			RevocationInterval: 50 * time.Millisecond,
			Edit:               func(cfg *config.Config) { cfg.Auth.Resource = resource },
		}))
	}
	g1, g2 := start(), start()
	const jti = "e2e-revoked-on-one-replica"
	victim, err := ti.iss.Mint(ti.url, resource, userA, tenantA, allScopes(), time.Hour, map[string]any{"jti": jti})
	if err != nil {
		t.Fatal(err)
	}
	get := func(g *gw) *resp {
		return g.do(t, req{method: http.MethodGet, path: "/v8/traces/" + newTraceID(), token: victim})
	}
	read := func(g *gw) int { return get(g).Status }
	// Both replicas accept the token (and cache it).
	for i, g := range []*gw{g1, g2} {
		if s := read(g); s == http.StatusUnauthorized {
			t.Fatalf("replica %d refuses the token before its revocation", i+1)
		}
	}
	operator := ti.token(t, tenantA, operatorA, string(contracts.ScopeTokensWrite))
	r := g1.do(t, req{method: http.MethodPost, path: "/v8/tokens/revocations", body: map[string]any{"jti": jti, "reason": "e2e"}, token: operator})
	if r.Status/100 != 2 {
		t.Fatalf("revoke on replica 1: %d %s", r.Status, r.Body)
	}
	wantProblem(t, get(g1), http.StatusUnauthorized, contracts.CodeInvalidToken)
	deadline := time.Now().Add(5 * time.Second)
	for read(g2) != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("replica 2 still accepts the token revoked on replica 1 after 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	wantProblem(t, get(g2), http.StatusUnauthorized, contracts.CodeInvalidToken)
}
