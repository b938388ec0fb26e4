package oauthtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// The audiences of the two upstreams, and one the OAuth server does not
// serve (its exchange is refused).
const (
	restAudience    = "https://upstream.test/rest"
	mcpAudience     = "https://upstream.test/mcp"
	unknownAudience = "https://unknown.test"
	actorAudience   = "https://as.test/gateway"
	gatewaySecret   = "gateway-secret-0123456789"
)

// seen is what an upstream received: one entry per request it accepted.
type seen struct {
	Sub, Aud, ClientID, Act, Session string
}

// upstream records the verified tokens its requests carried.
type upstream struct {
	verifier *auth.Verifier
	mu       sync.Mutex
	seen     []seen
	refused  int
}

func newUpstream(t *testing.T, issuer, audience string) *upstream {
	t.Helper()
	v, err := auth.NewVerifier(ctxT(t), config.Auth{Resource: audience, Issuers: []config.Issuer{{Issuer: issuer}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &upstream{verifier: v}
}

// check verifies r's bearer token (signature by the OAuth server, aud the
// upstream, live) and records it; false when it is refused.
func (u *upstream) check(t *testing.T, r *http.Request) (seen, bool) {
	p, cred, err := u.verifier.Authenticate(r)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		u.refused++
		return seen{}, false
	}
	c := gatewaytest.JWTClaims(t, cred.Token())
	s := seen{Sub: p.Subject, ClientID: p.ClientID, Session: r.Header.Get("Mcp-Session-Id")}
	s.Aud, _ = c["aud"].(string)
	if act, ok := c["act"].(map[string]any); ok {
		s.Act, _ = act["sub"].(string)
	}
	u.seen = append(u.seen, s)
	return s, true
}

func (u *upstream) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.seen...)
}

// restUpstream serves GET /whoami: the caller its token names.
func restUpstream(t *testing.T, u *upstream) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := u.check(t, r)
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// mcpUpstream is a go-sdk MCP server over streamable HTTP (stateful:
// sessions) with one tool, whoami, behind bearer verification.
func mcpUpstream(t *testing.T, u *upstream) *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	type out struct {
		Sub string `json:"sub"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Who the token names"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, out, error) {
			tok := strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
			p, err := u.verifier.Verify(ctx, tok)
			if err != nil {
				return nil, out{}, err
			}
			return nil, out{Sub: p.Subject}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := u.check(t, r); !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}

const workflowsYAML = `
workflows:
  ship:
    version: 1
    title: Ship
    initial: draft
    states:
      draft: {}
      shipped: {onEnter: {kind: rest, connection: api, method: GET, path: /whoami}}
      done: {terminal: true}
    transitions:
      - {name: ship, from: draft, to: shipped, executor: {kind: human, queue: ops}}
      - {name: finish, from: shipped, to: done}
`

// fixture is a gateway that trusts the OAuth server's tokens, with
// connections whose auth exchanges them, and the upstreams they call.
type fixture struct {
	p            *provider
	g            *gatewaytest.Gateway
	rest, mcpUp  *upstream
	alice, bob   string // the callers' tokens, issued by the OAuth server
	aliceJTI     string
	scopes       []string
	mcpUpstreamU string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	scopes := gatewaytest.AllScopes()
	keyPEM, jwk := ecKey(t, "gw-key-1")
	exchange := "urn:ietf:params:oauth:grant-type:token-exchange"
	caller := func(id string) client {
		return client{"client_id": id, "client_secret": id + "-secret-0123456789", "grant_types": []string{"client_credentials"},
			"response_types": []string{}, "redirect_uris": []string{}, "scope": strings.Join(scopes, " ")}
	}
	clients := []client{caller("alice"), caller("bob"),
		{"client_id": "gateway", "client_secret": gatewaySecret, "grant_types": []string{exchange},
			"response_types": []string{}, "redirect_uris": []string{}},
		{"client_id": "gateway-jwt", "token_endpoint_auth_method": "private_key_jwt", "jwks": map[string]any{"keys": []any{jwk}},
			"grant_types": []string{exchange, "client_credentials"}, "response_types": []string{}, "redirect_uris": []string{}},
	}
	p := startProvider(t, clients, scopes, []string{restAudience, mcpAudience}, actorAudience)
	f := &fixture{p: p, scopes: scopes}
	f.rest, f.mcpUp = newUpstream(t, p.Issuer, restAudience), newUpstream(t, p.Issuer, mcpAudience)
	restSrv, mcpSrv := restUpstream(t, f.rest), mcpUpstream(t, f.mcpUp)
	f.mcpUpstreamU = mcpSrv.URL
	t.Setenv("PRAXA_TEST_GATEWAY_SECRET", gatewaySecret)
	t.Setenv("PRAXA_TEST_GATEWAY_KEY", keyPEM)
	yaml := fmt.Sprintf(`
connections:
  api:
    kind: rest
    baseUrl: %[1]s
    auth: {kind: token-exchange, tokenEndpoint: %[2]s/token, audience: %[3]q, scope: upstream, clientId: gateway, clientSecret: "${PRAXA_TEST_GATEWAY_SECRET}"}
  refused:
    kind: rest
    baseUrl: %[1]s
    auth: {kind: token-exchange, tokenEndpoint: %[2]s/token, audience: %[4]q, clientId: gateway, clientSecret: "${PRAXA_TEST_GATEWAY_SECRET}"}
  tools:
    kind: mcp
    url: %[5]s
    auth: {kind: token-exchange, tokenEndpoint: %[2]s/token, audience: %[6]q, clientId: gateway-jwt, privateKey: "${PRAXA_TEST_GATEWAY_KEY}", keyId: gw-key-1, actor: true}
proxy:
  expose:
    - {name: whoami_rest, exposeDirectly: true, executor: {kind: rest, connection: api, method: GET, path: /whoami}}
    - {name: refused_rest, exposeDirectly: true, executor: {kind: rest, connection: refused, method: GET, path: /whoami}}
    - {name: whoami_mcp, exposeDirectly: true, executor: {kind: mcp, connection: tools, tool: whoami}}
`, restSrv.URL, p.Issuer, restAudience, unknownAudience, mcpSrv.URL, mcpAudience) + workflowsYAML
	f.g = gatewaytest.New(t, &gatewaytest.Options{
		Config: func() (*config.Config, error) { return config.Parse("tokex.yaml", []byte(yaml)) },
		Edit: func(cfg *config.Config) {
			// The OAuth server's tokens are accepted: the subject token
			// is the caller's real token from it.
			cfg.Auth.Issuers = append(cfg.Auth.Issuers, config.Issuer{Issuer: p.Issuer})
		},
	})
	f.alice = p.clientCredentials(t, "alice", "alice-secret-0123456789", f.g.Config.Auth.Resource, scopes)
	f.bob = p.clientCredentials(t, "bob", "bob-secret-0123456789", f.g.Config.Auth.Resource, scopes)
	f.aliceJTI, _ = gatewaytest.JWTClaims(t, f.alice)["jti"].(string)
	return f
}

// do sends a REST request to the gateway with tok and returns the status
// and the decoded body.
func (f *fixture) do(t *testing.T, tok, method, path string, body any) (int, map[string]any, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.g.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", fmt.Sprintf("tokex-%p-%d", req, len(f.rest.requests())))
	}
	resp, err := f.g.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, string(raw)
}

// start runs a capability in a proxy_default run over REST.
func (f *fixture) start(t *testing.T, tok, capability string) (int, map[string]any, string) {
	t.Helper()
	return f.do(t, tok, http.MethodPost, "/v8/praxec/command", map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": capability}})
}

// mcpSession opens an MCP session on the gateway's /mcp as tok.
func (f *fixture) mcpSession(t *testing.T, tok string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1"}, nil)
	cs, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: f.g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: &gatewaytest.BearerTransport{Token: tok, Base: f.g.Client.Transport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// noSecrets fails when text carries a token or a secret of the fixture.
func (f *fixture) noSecrets(t *testing.T, what, text string) {
	t.Helper()
	for name, s := range map[string]string{"alice's token": f.alice, "bob's token": f.bob, "the client secret": gatewaySecret} {
		if strings.Contains(text, s) {
			t.Errorf("%s carries %s", what, name)
		}
	}
}

// TestTokenExchangeREST: a rest connection with auth token-exchange sends
// each caller's own exchanged token: the upstream sees sub the caller and
// aud itself; a second call is served from the cache; a refused exchange
// fails the move before any upstream call; a revoked caller gets no
// upstream call and its cached tokens are dropped.
func TestTokenExchangeREST(t *testing.T) {
	f := newFixture(t)

	for _, c := range []struct{ name, tok string }{{"alice", f.alice}, {"bob", f.bob}, {"alice", f.alice}} {
		st, body, raw := f.start(t, c.tok, "whoami_rest")
		if st != http.StatusOK && st != http.StatusCreated {
			t.Fatalf("%s: whoami_rest answered %d: %s", c.name, st, raw)
		}
		_ = body
	}
	got := f.rest.requests()
	if len(got) != 3 {
		t.Fatalf("the upstream saw %d requests, want 3: %+v", len(got), got)
	}
	for i, want := range []string{"alice", "bob", "alice"} {
		if got[i].Sub != want || got[i].Aud != restAudience || got[i].ClientID != "gateway" {
			t.Errorf("request %d: the upstream saw sub %q aud %q client %q, want sub %q aud %q client gateway", i, got[i].Sub, got[i].Aud, got[i].ClientID, want, restAudience)
		}
	}
	// alice's second call reused her exchanged token: one exchange each.
	if n := f.g.Tokens.Fetches(); n != 2 {
		t.Errorf("%d requests to the token endpoint, want 2 (one per caller; the repeat is cached)", n)
	}

	// An exchange the OAuth server refuses: the move fails, nothing is
	// sent upstream, and the answer says why without the token.
	// In a proxy_default run the failed move is recorded in the run
	// (lastRun.ok false, with the reason); called directly it is the
	// call's error.
	st, body, raw := f.start(t, f.alice, "refused_rest")
	last, _ := body["context"].(map[string]any)["lastRun"].(map[string]any)
	if st >= 300 || last == nil || last["ok"] != false {
		t.Fatalf("refused_rest answered %d: %s", st, raw)
	}
	if msg, _ := last["error"].(string); !strings.Contains(msg, "nothing was sent") || !strings.Contains(msg, "refused the exchange") || !strings.Contains(msg, "invalid_target") {
		t.Errorf("the failed move does not say the exchange was refused: %s", raw)
	}
	f.noSecrets(t, "the failed move", raw)
	res, err := f.mcpSession(t, f.alice).CallTool(ctxT(t), &mcp.CallToolParams{Name: "refused_rest", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	raw = string(b)
	if !res.IsError || !strings.Contains(raw, "nothing was sent") || !strings.Contains(raw, "refused the exchange") {
		t.Errorf("the direct call of refused_rest answered %s, want an error saying the exchange was refused and nothing was sent", raw)
	}
	f.noSecrets(t, "the refusal", raw)
	if n := len(f.rest.requests()); n != 3 {
		t.Errorf("the upstream saw %d requests after a refused exchange, want still 3", n)
	}

	// alice is revoked: her cached tokens go, her next call is refused at
	// the edge, and the upstream sees nothing more.
	before := f.g.Tokens.Len()
	if err := f.g.Service.RevokeToken(context.Background(), nil, gateway.RevokeRequest{JTI: f.aliceJTI, Reason: "test"}, f.g.Revocations); err != nil {
		t.Fatal(err)
	}
	if after := f.g.Tokens.Len(); after != before-1 {
		t.Errorf("the token cache holds %d after alice's revocation, want %d (hers dropped, bob's kept)", after, before-1)
	}
	if st, _, raw := f.start(t, f.alice, "whoami_rest"); st != http.StatusUnauthorized {
		t.Errorf("a revoked caller's call answered %d, want 401: %s", st, raw)
	}
	if n := len(f.rest.requests()); n != 3 {
		t.Errorf("the upstream saw %d requests after alice's revocation, want still 3", n)
	}
	f.g.Flush(t)
	f.noSecrets(t, "the gateway's logs", f.g.Logs.String())
}

// TestTokenExchangeMCP: an mcp connection over HTTP acting as the caller
// keeps one upstream session per caller and never shares one between two;
// its tokens name the caller (sub), the upstream (aud) and the gateway
// acting for the caller (act, from an actor token obtained with
// private_key_jwt client credentials).
func TestTokenExchangeMCP(t *testing.T) {
	f := newFixture(t)
	sessions := map[string]*mcp.ClientSession{"alice": f.mcpSession(t, f.alice), "bob": f.mcpSession(t, f.bob)}
	for range 2 {
		for _, who := range []string{"alice", "bob"} {
			res, err := sessions[who].CallTool(ctxT(t), &mcp.CallToolParams{Name: "whoami_mcp", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("%s: %v", who, err)
			}
			b, _ := json.Marshal(res)
			if res.IsError || !strings.Contains(string(b), `\"sub\":\"`+who+`\"`) && !strings.Contains(string(b), `"sub":"`+who+`"`) {
				t.Fatalf("%s: whoami_mcp answered %s", who, b)
			}
		}
	}
	bySession := map[string]map[string]bool{}
	for _, s := range f.mcpUp.requests() {
		if s.Aud != mcpAudience || s.Act != "gateway-jwt" || s.ClientID != "gateway-jwt" {
			t.Errorf("the MCP upstream saw aud %q act %q client %q, want aud %q act gateway-jwt client gateway-jwt", s.Aud, s.Act, s.ClientID, mcpAudience)
		}
		if s.Session == "" {
			continue // initialize, before the session has an id
		}
		if bySession[s.Session] == nil {
			bySession[s.Session] = map[string]bool{}
		}
		bySession[s.Session][s.Sub] = true
	}
	if len(bySession) < 2 {
		t.Errorf("the MCP upstream saw %d sessions, want one per caller: %v", len(bySession), bySession)
	}
	for id, subs := range bySession {
		if len(subs) != 1 {
			t.Errorf("upstream session %s was used by %v: two callers shared it", id, subs)
		}
	}
	if n := f.g.Switch.Manager().CallerSessions("tools"); n != 2 {
		t.Errorf("the gateway keeps %d caller sessions for tools, want 2", n)
	}
}

// TestApprovalActsAsApprover: a move fired by an approval runs with the
// approver's token, not the requester's.
func TestApprovalActsAsApprover(t *testing.T) {
	f := newFixture(t)
	st, body, raw := f.do(t, f.alice, http.MethodPost, "/v8/praxec/command", map[string]any{"definitionId": "ship"})
	if st >= 300 {
		t.Fatalf("start: %d %s", st, raw)
	}
	wf, _ := body["workflow"].(map[string]any)
	id, _ := wf["id"].(string)
	version := wf["version"]
	st, _, raw = f.do(t, f.alice, http.MethodPost, "/v8/praxec/command", map[string]any{"workflowId": id, "expectedVersion": version, "transition": "ship"})
	if st >= 300 {
		t.Fatalf("ship: %d %s", st, raw)
	}
	st, list, raw := f.do(t, f.bob, http.MethodGet, "/v8/approvals", nil)
	if st != http.StatusOK {
		t.Fatalf("approvals: %d %s", st, raw)
	}
	approvals, _ := list["approvals"].([]any)
	if len(approvals) != 1 {
		t.Fatalf("approvals: %s", raw)
	}
	aid, _ := approvals[0].(map[string]any)["id"].(string)
	if st, _, raw := f.do(t, f.bob, http.MethodPost, "/v8/approvals/"+aid+"/approve", map[string]any{}); st >= 300 {
		t.Fatalf("approve: %d %s", st, raw)
	}
	got := f.rest.requests()
	if len(got) != 1 || got[0].Sub != "bob" {
		t.Fatalf("the approved move's upstream call carried %+v, want one call as bob (the approver)", got)
	}
}
