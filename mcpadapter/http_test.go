package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/mcpadapter"
)

func TestStreamableHTTP(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	cs := h.overHTTP(t, tok)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated protocol %s, want 2026-07-28 (stateless handler)", v)
	}
	if id := cs.ID(); id != "" {
		t.Errorf("stateless /mcp pinned a session %q", id)
	}
	if n := len(listTools(t, cs)); n != 14 {
		t.Errorf("tools/list over HTTP: %d tools, want 14", n)
	}
	driveDeployPipeline(t, cs)
	// A stateless request is a session of its own: the SDK's lifecycle
	// lines at Info would be three log lines per call.
	if logs := h.g.Logs.String(); strings.Contains(logs, "server session connected") || strings.Contains(logs, "server connecting") {
		t.Errorf("the SDK's per-request session lines reach the gateway's log")
	}

	// Clients of earlier protocol versions, with the SDK's default
	// transport (standalone SSE stream on), are served too.
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		hc := &http.Client{Transport: &gatewaytest.BearerTransport{Token: tok, Base: h.client.Transport}}
		old, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("protocol %s: %v", version, err)
		}
		if v := old.InitializeResult().ProtocolVersion; v != version {
			t.Errorf("asked for %s, negotiated %s", version, v)
		}
		call(t, old, contracts.ToolPraxecQuery, map[string]any{})
		old.Close()
	}

	// A refusal inside the session is a tool error; only a missing scope,
	// which a client can step up, is answered 403 (TestStreamableHTTPScopeChallenge).
	ro := h.overHTTP(t, h.token(t, scopesWithout(contracts.ScopeMissionsWrite), nil))
	res, err := ro.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolPraxecCommand, Arguments: map[string]any{"definitionId": "deploy_pipeline"}})
	scopeChallenged(t, contracts.ToolPraxecCommand, res, err)
	call(t, ro, contracts.ToolPraxecQuery, map[string]any{}) // the session goes on
	narrow := h.overHTTP(t, h.token(t, nil, map[string]any{"tools": []string{contracts.ToolPraxecQuery}}))
	// tools/list shows only what the token's allowlist lets it use...
	var listed []string
	for tool, err := range narrow.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tool.Name)
	}
	if len(listed) != 1 || listed[0] != contracts.ToolPraxecQuery {
		t.Errorf("a token allowing only praxec.query lists %v", listed)
	}
	// ...and a call outside it is refused whatever a client believes.
	callErr(t, narrow, contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": "http-narrow-key-00001", "intent": "x"},
		contracts.CodeToolNotAllowed)
}

// The transport refuses before the SDK runs, exactly as /v8 does.
func TestStreamableHTTPRefusals(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	const listBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	post := func(path string, header map[string]string) *gatewaytest.Response {
		t.Helper()
		hdr := map[string]string{"Accept": "application/json, text/event-stream"}
		for k, v := range header {
			hdr[k] = v
		}
		res, _ := h.rest(t, http.MethodPost, path, listBody, hdr)
		return res
	}

	t.Run("no token", func(t *testing.T) {
		res := post("/mcp", nil)
		if res.Status != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", res.Status)
		}
		ch := res.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, `resource_metadata="`+h.url+`/.well-known/oauth-protected-resource"`) {
			t.Errorf("WWW-Authenticate %q lacks resource_metadata", ch)
		}
		if strings.Contains(ch, "error=") {
			t.Errorf("a request without credentials got an error code: %q", ch)
		}
	})
	t.Run("bad token", func(t *testing.T) {
		for name, bad := range map[string]string{
			"tampered": tok[:len(tok)-4] + "AAAA",
			"garbage":  "not-a-jwt",
			"foreign audience": func() string {
				s, err := h.g.Issuer.Mint(h.issURL, "https://elsewhere.example", userA, tenantA, gatewaytest.AllScopes(), 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}(),
		} {
			res := post("/mcp", map[string]string{"Authorization": "Bearer " + bad})
			if res.Status != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Errorf("%s: %d %q, want 401 with error=\"invalid_token\"", name, res.Status, res.Header.Get("WWW-Authenticate"))
			}
		}
	})
	t.Run("foreign origin", func(t *testing.T) {
		for _, hdr := range []map[string]string{
			{"Authorization": "Bearer " + tok, "Origin": "https://evil.example"},
			{"Origin": "https://evil.example"}, // the origin check answers before authentication
		} {
			if res := post("/mcp", hdr); res.Status != http.StatusForbidden {
				t.Errorf("Origin https://evil.example: %d, want 403", res.Status)
			}
		}
		// The gateway's own origin passes, under any loopback name of its
		// loopback listener; another port or scheme, or a foreign host
		// that resolves nowhere near it, does not.
		u, err := url.Parse(h.url)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []string{h.url, "http://localhost:" + u.Port(), "http://[::1]:" + u.Port(), "http://127.0.0.2:" + u.Port()} {
			if res := post("/mcp", map[string]string{"Authorization": "Bearer " + tok, "Origin": o}); res.Status != http.StatusOK {
				t.Errorf("own origin %s: %d, want 200", o, res.Status)
			}
		}
		for _, o := range []string{"http://localhost:1", "https://localhost:" + u.Port(), "http://localhost.evil.example:" + u.Port(), "null"} {
			if res := post("/mcp", map[string]string{"Authorization": "Bearer " + tok, "Origin": o}); res.Status != http.StatusForbidden {
				t.Errorf("origin %s: %d, want 403", o, res.Status)
			}
		}
	})
	t.Run("token in the query string", func(t *testing.T) {
		res := post("/mcp?access_token="+tok, nil)
		if res.Status != http.StatusBadRequest {
			t.Errorf("?access_token=: %d, want 400", res.Status)
		}
		res = post("/mcp?access_token="+tok, map[string]string{"Authorization": "Bearer " + tok})
		if res.Status != http.StatusBadRequest {
			t.Errorf("token twice: %d, want 400", res.Status)
		}
	})
	t.Run("raw call with a token", func(t *testing.T) {
		if res := post("/mcp", map[string]string{"Authorization": "Bearer " + tok}); res.Status != http.StatusOK {
			t.Errorf("tools/list with a token: %d, want 200", res.Status)
		}
	})
}

// Two replicas over one SQLite file: a workflow started through one
// replica's /mcp advances through the other's, since no session is pinned.
func TestStreamableHTTPTwoReplicas(t *testing.T) {
	a := newHarness(t, nil)
	b := newHarness(t, &harnessOptions{replicaOf: a})
	tok := a.token(t, nil, nil)
	csA, csB := a.overHTTP(t, tok), b.overHTTP(t, tok)

	started := call(t, csA, contracts.ToolPraxecCommand, map[string]any{"definitionId": "deploy_pipeline"})
	linted := follow(t, csB, started, "run_lint", nil)
	if s := linted.str("workflow.state"); s != "test" {
		t.Fatalf("run_lint through replica B: state %q: %s", s, linted.raw)
	}
	tested := follow(t, csA, linted, "run_tests", map[string]any{"coverage": 90})
	if s := tested.str("workflow.state"); s != "build" {
		t.Fatalf("run_tests back through replica A: state %q", s)
	}
	got := call(t, csB, contracts.ToolPraxecQuery, map[string]any{"workflowId": started.str("workflow.id")})
	if got.str("workflow.state") != "build" {
		t.Errorf("replica B reads %s", got.raw)
	}
	// The exact replay of a submit through the other replica answers the
	// original response; the same stale version with other arguments is a
	// conflict.
	replay := call(t, csB, contracts.ToolPraxecCommand, followArgs(t, linted.link(t, "run_tests"), map[string]any{"coverage": 90}))
	if !jsonEqual(t, replay.raw, tested.raw) {
		t.Errorf("exact replay through replica B: %s, want the original %s", replay.raw, tested.raw)
	}
	callErr(t, csB, contracts.ToolPraxecCommand, followArgs(t, linted.link(t, "run_tests"), map[string]any{"coverage": 80}),
		contracts.CodeVersionConflict)
}

// traceRecorder keeps the trace id of the last answer's Traceparent.
type traceRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	last string
}

func (r *traceRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.base.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost {
		if parts := strings.Split(res.Header.Get("Traceparent"), "-"); len(parts) == 4 {
			r.mu.Lock()
			r.last = parts[1]
			r.mu.Unlock()
		}
	}
	return res, err
}

func (r *traceRecorder) trace() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// A tool error over /mcp names, as traceId, the trace of its HTTP answer's
// Traceparent: the trace that holds the refusal's audit event.
func TestStreamableHTTPErrorTrace(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	rec := &traceRecorder{base: h.client.Transport}
	hc := &http.Client{Transport: &gatewaytest.BearerTransport{Token: tok, Base: rec}}
	cs, err := newClient().Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
		code contracts.Code
	}{
		{contracts.ToolPraxecQuery, map[string]any{"bogus": 1}, contracts.CodeInvalidParams},
		{contracts.ToolSubmitIntent, map[string]any{"intent": "deploy"}, contracts.CodeIdempotencyKeyMissing},
		{contracts.ToolGetMission, map[string]any{"runId": "wf_nope"}, contracts.CodeNotFound},
	} {
		env, _ := callErr(t, cs, c.tool, c.args, c.code)
		if env.TraceID == "" || env.TraceID != rec.trace() {
			t.Errorf("%s: traceId %q, Traceparent of the answer %q", c.tool, env.TraceID, rec.trace())
		}
		evs := h.g.Events(t, tenantA, env.TraceID)
		if len(evs) == 0 || evs[len(evs)-1].Code != string(c.code) {
			t.Errorf("%s: the trace %s holds %+v, want the refusal", c.tool, env.TraceID, evs)
		}
	}
}

// stepUp is an MCP client's OAuth handler that answers a 403 scope
// challenge as an authorization server would grant it: a new token of the
// same principal with the scopes it had and those the challenge names.
type stepUp struct {
	t          testing.TB
	h          *harness
	mu         sync.Mutex
	scopes     []string
	token      string
	challenges []oauthex.Challenge
}

func (s *stepUp) TokenSource(context.Context) (oauth2.TokenSource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: s.token, TokenType: "Bearer"}), nil
}

func (s *stepUp) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.challenges = append(s.challenges, cs...)
	if resp.StatusCode != http.StatusForbidden || len(cs) != 1 || cs[0].Params["error"] != "insufficient_scope" || cs[0].Params["scope"] == "" {
		return fmt.Errorf("not a scope challenge: %d %v", resp.StatusCode, cs)
	}
	for _, sc := range strings.Fields(cs[0].Params["scope"]) {
		if !slices.Contains(s.scopes, sc) {
			s.scopes = append(s.scopes, sc)
		}
	}
	s.token = s.h.token(s.t, s.scopes, nil)
	return nil
}

// A tools/call whose token lacks the scope it needs answers HTTP 403 with a
// scope challenge (MCP authorization, 2025-11-25 and 2026-07-28): a go-sdk
// client with an OAuth handler steps up and its retry succeeds; one without
// gets the JSON-RPC error (the refusal's envelope as data) and its session
// goes on. Over stdio the same refusal is a tool error (TestToolErrors).
func TestStreamableHTTPScopeChallenge(t *testing.T) {
	h := newHarness(t, nil)
	narrow := scopesWithout(contracts.ScopeMissionsWrite)
	start := &mcp.CallToolParams{Name: contracts.ToolPraxecCommand, Arguments: map[string]any{"definitionId": "deploy_pipeline"}}

	t.Run("the raw answer", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"praxec.command","arguments":{"definitionId":"deploy_pipeline"}}}`
		res, b := h.rest(t, http.MethodPost, "/mcp", body, map[string]string{"Accept": "application/json, text/event-stream",
			"Authorization": "Bearer " + h.token(t, narrow, nil), "Mcp-Protocol-Version": "2025-11-25"})
		if res.Status != http.StatusForbidden {
			t.Fatalf("status %d, want 403: %s", res.Status, b)
		}
		cs, err := oauthex.ParseWWWAuthenticate(res.Header.Values("WWW-Authenticate"))
		if err != nil || len(cs) != 1 || cs[0].Scheme != "bearer" || cs[0].Params["error"] != "insufficient_scope" ||
			cs[0].Params["scope"] != string(contracts.ScopeMissionsWrite) || cs[0].Params["resource_metadata"] != h.url+"/.well-known/oauth-protected-resource" {
			t.Errorf("WWW-Authenticate %q (%v)", res.Header.Get("WWW-Authenticate"), err)
		}
		var msg rpcAnswer
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		if err := json.Unmarshal(b, &msg); err != nil || msg.JSONRPC != "2.0" || string(msg.ID) != `"call-7"` || msg.Error == nil || msg.Error.Code != mcpadapter.RPCInsufficientScope {
			t.Fatalf("body %s (%v), want the JSON-RPC error of call-7", b, err)
		}
		var env envelope
		if err := json.Unmarshal(msg.Error.Data, &env); err != nil || env.Error.Code != contracts.CodeInsufficientScope {
			t.Errorf("data %s (%v)", msg.Error.Data, err)
		}
		if parts := strings.Split(res.Header.Get("Traceparent"), "-"); len(parts) != 4 || env.TraceID != parts[1] {
			t.Errorf("traceId %q, Traceparent %q", env.TraceID, res.Header.Get("Traceparent"))
		}
	})

	t.Run("a client that steps up", func(t *testing.T) {
		su := &stepUp{t: t, h: h, scopes: narrow, token: h.token(t, narrow, nil)}
		cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + "/mcp",
			HTTPClient: h.client, OAuthHandler: su, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(context.Background(), start)
		if err != nil {
			t.Fatalf("after step-up: %v", err)
		}
		a := success(t, contracts.ToolPraxecCommand, res)
		if a.str("workflow.definitionId") != "deploy_pipeline" {
			t.Errorf("the retried start answered %s", textOf(t, res))
		}
		if len(su.challenges) != 1 || !slices.Contains(su.scopes, string(contracts.ScopeMissionsWrite)) {
			t.Errorf("challenges %v, scopes after step-up %v", su.challenges, su.scopes)
		}
	})

	t.Run("a client that cannot step up", func(t *testing.T) {
		cs := h.overHTTP(t, h.token(t, narrow, nil))
		res, err := cs.CallTool(context.Background(), start)
		env := scopeChallenged(t, contracts.ToolPraxecCommand, res, err)
		if !strings.Contains(env.Error.Message, string(contracts.ScopeMissionsWrite)) {
			t.Errorf("message %q", env.Error.Message)
		}
		call(t, cs, contracts.ToolPraxecQuery, map[string]any{})
		// Other refusals stay tool errors.
		callErr(t, cs, contracts.ToolGetMission, map[string]any{"runId": "wf_nope"}, contracts.CodeNotFound)
	})
}

// At every protocol revision, what the transport refuses is a JSON-RPC
// error object (application/json; the request's id, or null when it has
// none), never text/plain.
func TestStreamableHTTPJSONRPCErrors(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	for _, c := range []struct {
		name, version, body string
		status, code        int
		id                  string
	}{
		{"unknown method, 2025-11-25", "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/nope","params":{}}`, http.StatusBadRequest, -32601, "7"},
		{"unknown method, 2025-06-18", "2025-06-18", `{"jsonrpc":"2.0","id":"x","method":"nope","params":{}}`, http.StatusBadRequest, -32601, `"x"`},
		{"unknown method, 2025-03-26", "2025-03-26", `{"jsonrpc":"2.0","id":8,"method":"nope"}`, http.StatusBadRequest, -32601, "8"},
		{"unknown method, no version header", "", `{"jsonrpc":"2.0","id":9,"method":"nope"}`, http.StatusBadRequest, -32601, "9"},
		{"unknown method, 2026-07-28", "2026-07-28", `{"jsonrpc":"2.0","id":10,"method":"nope","params":{}}`, http.StatusNotFound, -32601, "10"},
		{"batch, 2025-11-25", "2025-11-25", `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}]`, http.StatusBadRequest, -32600, "null"},
		{"batch, 2025-06-18", "2025-06-18", `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}]`, http.StatusBadRequest, -32600, "null"},
		{"unsupported protocol version", "1999-01-01", `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{}}`, http.StatusBadRequest, mcp.CodeUnsupportedProtocolVersion, "11"},
		{"not JSON", "2025-11-25", `{"jsonrpc":`, http.StatusBadRequest, -32700, "null"},
		{"missing params", "2025-11-25", `{"jsonrpc":"2.0","id":12,"method":"tools/call"}`, http.StatusBadRequest, -32600, "12"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{"Accept": "application/json, text/event-stream", "Authorization": "Bearer " + tok}
			if c.version != "" {
				hdr["Mcp-Protocol-Version"] = c.version
			}
			res, b := h.rest(t, http.MethodPost, "/mcp", c.body, hdr)
			if res.Status != c.status || res.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q %s, want %d application/json", res.Status, res.Header.Get("Content-Type"), b, c.status)
			}
			var msg rpcAnswer
			if err := json.Unmarshal(b, &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error == nil {
				t.Fatalf("not a JSON-RPC error: %s (%v)", b, err)
			}
			if msg.Error.Code != c.code || string(msg.ID) != c.id || msg.Error.Message == "" {
				t.Errorf("code %d id %s message %q, want code %d id %s", msg.Error.Code, msg.ID, msg.Error.Message, c.code, c.id)
			}
			if c.code == mcp.CodeUnsupportedProtocolVersion {
				var data mcp.UnsupportedProtocolVersionData
				if err := json.Unmarshal(msg.Error.Data, &data); err != nil || data.Requested != c.version || !slices.Contains(data.Supported, "2025-11-25") {
					t.Errorf("data %s (%v)", msg.Error.Data, err)
				}
			}
		})
	}
}
