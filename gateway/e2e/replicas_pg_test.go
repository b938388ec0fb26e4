package e2e_test

// Replicas on one PostgreSQL database (pgstore): what one replica writes,
// the other sees. The races of TestTwoEnginesOnePostgres are in
// engines_test.go; these tests skip without PRAXA_TEST_PG_DSN.

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
		return wrapGateway(gatewaytest.New(t, &gatewaytest.Options{
			Issuer:             ti,
			StoreDSN:           dsn,
			RevocationInterval: 50 * time.Millisecond,
			Edit:               func(cfg *config.Config) { cfg.Auth.Resource = resource },
		}))
	}
	g1, g2 := start(), start()
	const jti = "e2e-revoked-on-one-replica"
	victim := ti.Token(t, resource, gatewaytest.TokenSpec{Tenant: tenantA, Subject: userA, TTL: time.Hour, Claims: map[string]any{"jti": jti}})
	get := func(g *gw) *gatewaytest.Response {
		return g.do(t, req{method: http.MethodGet, path: "/v8/traces/" + newTraceID(), token: victim})
	}
	read := func(g *gw) int { return get(g).Status }
	// Both replicas accept the token (and cache it).
	for i, g := range []*gw{g1, g2} {
		if s := read(g); s == http.StatusUnauthorized {
			t.Fatalf("replica %d refuses the token before its revocation", i+1)
		}
	}
	operator := mint(t, ti, tenantA, operatorA, string(contracts.ScopeTokensWrite))
	r := g1.do(t, req{method: http.MethodPost, path: "/v8/tokens/revocations", body: map[string]any{"jti": jti, "reason": "e2e"}, token: operator})
	if r.Status/100 != 2 {
		t.Fatalf("revoke on replica 1: %d %s", r.Status, r.Body)
	}
	wantProblem(t, get(g1), http.StatusUnauthorized, contracts.CodeInvalidToken)
	gatewaytest.Eventually(t, "replica 2 refusing the token revoked on replica 1", 5*time.Second,
		func() bool { return read(g2) == http.StatusUnauthorized })
	wantProblem(t, get(g2), http.StatusUnauthorized, contracts.CodeInvalidToken)
}

// TestMCPAcrossPostgresReplicas: MCP over streamable HTTP works through
// either replica in turn on one PostgreSQL database, with nothing pinned
// to one process. A client on replica A starts deploy_pipeline with
// praxec.command; a second client, on replica B, submits the next
// transition from the link args of A's answer; A reads the result back.
func TestMCPAcrossPostgresReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	ti := newIssuer(t)
	ga := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:   ti,
		StoreDSN: dsn,
		Edit:     func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	gb := ga.Replica(t, nil)
	if ga.URL == gb.URL {
		t.Fatalf("the replicas share one server: %s", ga.URL)
	}
	tok := mint(t, ti, tenantA, userA)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(url string) *mcp.ClientSession {
		t.Helper()
		return gatewaytest.MCPSession(t, url+"/mcp", tok)
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("%s %v: MCP error %s", name, args, sc)
		}
		var out map[string]any
		if err := gatewaytest.DecodeJSON(sc, &out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, sc, err)
		}
		return out
	}

	csA := connect(ga.URL)
	started := call(csA, "praxec.command", map[string]any{"definitionId": "deploy_pipeline"})
	id := str(t, started, "workflow.id")
	next := findLink(t, linksOf(t, started), "run_lint")
	if next.Method != "praxec.command" {
		t.Fatalf("run_lint link method %q, want praxec.command", next.Method)
	}

	csB := connect(gb.URL)
	submitted := call(csB, next.Method, next.Args)
	if got := str(t, submitted, "workflow.id"); got != id {
		t.Fatalf("replica B answered for workflow %s, want %s", got, id)
	}
	stateB, versionB := str(t, submitted, "workflow.state"), num(t, submitted, "workflow.version")
	if versionB <= num(t, started, "workflow.version") {
		t.Errorf("the submit through replica B did not advance the version: %d after %d", versionB, num(t, started, "workflow.version"))
	}

	read := call(csA, "praxec.query", map[string]any{"workflowId": id})
	if s, v := str(t, read, "workflow.state"), num(t, read, "workflow.version"); s != stateB || v != versionB {
		t.Errorf("replica A reads state %q version %d, replica B wrote %q version %d", s, v, stateB, versionB)
	}
}
