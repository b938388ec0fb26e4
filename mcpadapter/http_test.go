package mcpadapter_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
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
		hc := &http.Client{Transport: &bearerTransport{token: tok, base: h.client.Transport}}
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

	// A refusal inside the session is a tool error, never a transport one.
	ro := h.overHTTP(t, h.token(t, scopesWithout(contracts.ScopeMissionsWrite), nil))
	callErr(t, ro, contracts.ToolPraxecCommand, map[string]any{"definitionId": "deploy_pipeline"}, contracts.CodeInsufficientScope)
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
	post := func(path string, header map[string]string) *http.Response {
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
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", res.StatusCode)
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
				s, err := h.iss.Mint(h.issURL, "https://elsewhere.example", userA, tenantA, allScopes(), 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}(),
		} {
			res := post("/mcp", map[string]string{"Authorization": "Bearer " + bad})
			if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Errorf("%s: %d %q, want 401 with error=\"invalid_token\"", name, res.StatusCode, res.Header.Get("WWW-Authenticate"))
			}
		}
	})
	t.Run("foreign origin", func(t *testing.T) {
		for _, hdr := range []map[string]string{
			{"Authorization": "Bearer " + tok, "Origin": "https://evil.example"},
			{"Origin": "https://evil.example"}, // the origin check answers before authentication
		} {
			if res := post("/mcp", hdr); res.StatusCode != http.StatusForbidden {
				t.Errorf("Origin https://evil.example: %d, want 403", res.StatusCode)
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
			if res := post("/mcp", map[string]string{"Authorization": "Bearer " + tok, "Origin": o}); res.StatusCode != http.StatusOK {
				t.Errorf("own origin %s: %d, want 200", o, res.StatusCode)
			}
		}
		for _, o := range []string{"http://localhost:1", "https://localhost:" + u.Port(), "http://localhost.evil.example:" + u.Port(), "null"} {
			if res := post("/mcp", map[string]string{"Authorization": "Bearer " + tok, "Origin": o}); res.StatusCode != http.StatusForbidden {
				t.Errorf("origin %s: %d, want 403", o, res.StatusCode)
			}
		}
	})
	t.Run("token in the query string", func(t *testing.T) {
		res := post("/mcp?access_token="+tok, nil)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("?access_token=: %d, want 400", res.StatusCode)
		}
		res = post("/mcp?access_token="+tok, map[string]string{"Authorization": "Bearer " + tok})
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("token twice: %d, want 400", res.StatusCode)
		}
	})
	t.Run("raw call with a token", func(t *testing.T) {
		if res := post("/mcp", map[string]string{"Authorization": "Bearer " + tok}); res.StatusCode != http.StatusOK {
			t.Errorf("tools/list with a token: %d, want 200", res.StatusCode)
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
	hc := &http.Client{Transport: &bearerTransport{token: tok, base: rec}}
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
