package mcpadapter_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/mcpadapter"
)

// The revisions a go-sdk v1.8.0 client is pinned to in these tests.
var revisions = []string{"2026-07-28", "2025-11-25"}

// recorder is a client transport that keeps, per JSON-RPC method of the
// request body, the Traceparent header of the last answer.
type recorder struct {
	base http.RoundTripper

	mu     sync.Mutex
	traces map[string]string
}

func (rt *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	var method string
	if r.GetBody != nil {
		if b, err := r.GetBody(); err == nil {
			var msg struct {
				Method string `json:"method"`
			}
			body, _ := io.ReadAll(b)
			_ = json.Unmarshal(body, &msg)
			method = msg.Method
		}
	}
	res, err := rt.base.RoundTrip(r)
	if err == nil && method != "" {
		rt.mu.Lock()
		rt.traces[method] = res.Header.Get("Traceparent")
		rt.mu.Unlock()
	}
	return res, err
}

func (rt *recorder) trace(method string) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	tp := rt.traces[method]
	if len(tp) != 55 {
		return ""
	}
	return tp[3:35]
}

// pinned connects a go-sdk client pinned to revision to /mcp over real
// HTTP with tok; rec sees every answer.
func (h *harness) pinned(t testing.TB, tok, revision string) (*mcp.ClientSession, *recorder) {
	t.Helper()
	rec := &recorder{base: &gatewaytest.BearerTransport{Token: tok, Base: h.client.Transport}, traces: map[string]string{}}
	cs, err := newClient().Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: &http.Client{Transport: rec}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != revision {
		t.Fatalf("pinned to %s, negotiated %s", revision, v)
	}
	return cs, rec
}

func newTrace(t testing.TB) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// TestListCacheFields: at 2026-07-28 tools/list carries ttlMs and
// cacheScope, private over /mcp (the list follows the token's tool
// allowlist); at 2025-11-25, which does not define them, it carries
// neither.
func TestListCacheFields(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			cs, _ := h.pinned(t, tok, rev)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := mcp.Cacheable{}
			if rev >= "2026-07-28" {
				// Stateless /mcp cannot announce a reload's new tools:
				// the list is stale at once.
				want = mcp.Cacheable{TTLMs: 0, CacheScope: "private"}
			}
			if res.Cacheable != want {
				t.Errorf("tools/list at %s: %+v, want %+v", rev, res.Cacheable, want)
			}
			if len(res.Tools) != 14 {
				t.Errorf("tools/list at %s: %d tools, want 14", rev, len(res.Tools))
			}
		})
	}
}

// TestListCacheFieldsStdio: the stdio server (praxa mcp) says private when
// its list follows the credential's allowlist, public when it does not
// (a remote gateway's client lists every tool); a server that announces
// list changes lets the list be kept ListTTL, one that cannot, not at all.
func TestListCacheFieldsStdio(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	for _, tc := range []struct {
		name      string
		allowed   func(context.Context, string) bool
		announces bool
		scope     string
		ttl       int
	}{
		{"narrowed, announcing", func(context.Context, string) bool { return true }, true, "private", int(mcpadapter.ListTTL.Milliseconds())},
		{"not narrowed, silent", nil, false, "public", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := h.inMemory(t, tok, &mcpadapter.Options{Allowed: tc.allowed, ToolListChanged: tc.announces})
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %s", v)
			}
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.CacheScope != tc.scope || res.TTLMs != tc.ttl {
				t.Errorf("tools/list: %+v, want scope %s, ttlMs %d", res.Cacheable, tc.scope, tc.ttl)
			}
		})
	}
}

// TestTraceparentInMeta: a W3C traceparent in a call's _meta is the trace
// of the call's audit events, of the answer's Traceparent and of the
// request's log line, at both revisions; a malformed one is ignored and
// the call answered as usual.
func TestTraceparentInMeta(t *testing.T) {
	h := newHarness(t, &harnessOptions{requestLines: true})
	tok := h.token(t, nil, nil)
	ctx := context.Background()
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			cs, rec := h.pinned(t, tok, rev)
			trace := newTrace(t)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolPraxecCommand,
				Arguments: map[string]any{"definitionId": "deploy_pipeline"},
				Meta:      mcp.Meta{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}})
			if err != nil {
				t.Fatal(err)
			}
			success(t, contracts.ToolPraxecCommand, res)
			if got := rec.trace("tools/call"); got != trace {
				t.Errorf("the answer's Traceparent names trace %q, want %q", got, trace)
			}
			events := call(t, cs, contracts.ToolGetTrace, map[string]any{"traceId": trace})
			var got struct {
				Events []struct {
					Type string `json:"type"`
				} `json:"events"`
			}
			if err := json.Unmarshal(events.raw, &got); err != nil || len(got.Events) == 0 {
				t.Fatalf("trace %s holds no audit events: %s", trace, events.raw)
			}
			if !h.logged(t, "trace_id", trace) {
				t.Errorf("no request line of trace %s", trace)
			}

			// Malformed (upper-case hex, all-zero ids, a wrong length):
			// ignored, the call keeps a trace of its own.
			for _, bad := range []any{"00-" + strings.ToUpper(trace) + "-00f067aa0ba902b7-01",
				"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-" + trace + "-0000000000000000-01",
				"00-" + trace, 42} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{},
					Meta: mcp.Meta{"traceparent": bad}})
				if err != nil {
					t.Fatalf("traceparent %v: %v", bad, err)
				}
				success(t, contracts.ToolPraxecQuery, res)
				if got := rec.trace("tools/call"); got == "" || got == trace || strings.Trim(got, "0") == "" {
					t.Errorf("traceparent %v: the answer's trace is %q", bad, got)
				}
			}
		})
	}
}

// logged reports whether a request line of /mcp carries key=value. The
// line is written once the answer has gone, so it waits for it a while.
func (h *harness) logged(t testing.TB, key, value string) bool {
	t.Helper()
	return gatewaytest.Poll(5*time.Second, func() bool {
		for _, line := range strings.Split(h.g.Logs.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "request" || rec["route"] != "/mcp" {
				continue
			}
			if rec[key] == value {
				return true
			}
		}
		return false
	})
}

// rawMCP posts one JSON-RPC request of revision 2026-07-28 to /mcp with
// the given Mcp-Method and Mcp-Name headers.
func (h *harness) rawMCP(t testing.TB, tok, method, name, mcpMethod, mcpName string) (int, []byte) {
	t.Helper()
	params := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}}
	if name != "" {
		params["name"], params["arguments"] = name, map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, h.url+"/mcp", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	if mcpMethod != "" {
		req.Header.Set("Mcp-Method", mcpMethod)
	}
	if mcpName != "" {
		req.Header.Set("Mcp-Name", mcpName)
	}
	res, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestMcpHeadersInLogsAndMetrics: /mcp requests are counted and logged
// under their Mcp-Method and Mcp-Name; the labels stay bounded (a tool the
// server does not register and an unknown method count as "other"); and
// headers that contradict the body are refused before any call runs.
func TestMcpHeadersInLogsAndMetrics(t *testing.T) {
	h := newHarness(t, &harnessOptions{requestLines: true})
	tok := h.token(t, nil, nil)
	cs, _ := h.pinned(t, tok, "2026-07-28")
	call(t, cs, contracts.ToolPraxecQuery, map[string]any{})
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	old, _ := h.pinned(t, tok, "2025-11-25")
	call(t, old, contracts.ToolPraxecQuery, map[string]any{})

	// A tool nobody registered, named consistently in body and header
	// (the SDK refuses it: 400).
	h.rawMCP(t, tok, "tools/call", "no_such_tool", "tools/call", "no_such_tool")
	// A method MCP does not have.
	h.rawMCP(t, tok, "made/up", "", "made/up", "")

	// Headers contradicting the body: refused with the SDK's header
	// mismatch error, and no call runs.
	for _, tc := range []struct{ name, method, mcpMethod, mcpName string }{
		{"Mcp-Name names another tool", "tools/call", "tools/call", contracts.ToolGetTrace},
		{"Mcp-Method names another method", "tools/call", "tools/list", contracts.ToolPraxecQuery},
		{"Mcp-Name missing", "tools/call", "tools/call", ""},
	} {
		status, body := h.rawMCP(t, tok, tc.method, contracts.ToolPraxecQuery, tc.mcpMethod, tc.mcpName)
		var msg struct {
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(body, &msg)
		if status != http.StatusBadRequest || msg.Error == nil || msg.Result != nil {
			t.Errorf("%s: %d %s, want 400 with a JSON-RPC error", tc.name, status, body)
		}
	}

	// A request is counted once its handler returned, which may be just
	// after its client read the answer (and a request the client sent on
	// its own, such as its tools/list, may still be running): read the
	// metrics until every count below is reached.
	want := []struct {
		labels  map[string]string
		atLeast float64
	}{
		{map[string]string{"route": "/mcp", "status": "200", "mcp_method": "tools/call", "mcp_tool": contracts.ToolPraxecQuery}, 1},
		{map[string]string{"route": "/mcp", "status": "200", "mcp_method": "tools/list", "mcp_tool": ""}, 1},
		{map[string]string{"route": "/mcp", "status": "200", "mcp_method": "server/discover"}, 1},
		{map[string]string{"route": "/mcp", "mcp_method": "tools/call", "mcp_tool": "other"}, 2},
		{map[string]string{"route": "/mcp", "mcp_method": "other", "mcp_tool": ""}, 1},
		{map[string]string{"route": "/mcp", "status": "400", "mcp_method": "tools/call"}, 3},
		// 2025-11-25 sends no Mcp-Method: counted without MCP labels.
		{map[string]string{"route": "/mcp", "status": "200", "mcp_method": ""}, 1},
		{map[string]string{"route": "/v8/intents", "mcp_method": ""}, -1},
	}
	holds := func(text string, labels map[string]string, atLeast float64) bool {
		got := gatewaytest.MetricValue(text, "praxa_http_requests_total", labels)
		return atLeast < 0 && got == -1 || atLeast >= 0 && got >= atLeast
	}
	var text string
	// When the counts never hold, the loop after says which one failed.
	gatewaytest.Poll(5*time.Second, func() bool {
		res, err := h.client.Get(h.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		text = string(b)
		for _, w := range want {
			if w.atLeast >= 0 && !holds(text, w.labels, w.atLeast) {
				return false
			}
		}
		return true
	})
	for _, w := range want {
		if !holds(text, w.labels, w.atLeast) {
			t.Errorf("praxa_http_requests_total%v = %v, want at least %v", w.labels,
				gatewaytest.MetricValue(text, "praxa_http_requests_total", w.labels), w.atLeast)
		}
	}
	if strings.Contains(text, "no_such_tool") || strings.Contains(text, "made/up") {
		t.Errorf("a client-chosen name became a metric label")
	}
	if got := gatewaytest.MetricValue(text, "praxa_http_request_duration_seconds_count",
		map[string]string{"route": "/mcp", "mcp_method": "tools/call", "mcp_tool": contracts.ToolPraxecQuery}); got < 1 {
		t.Errorf("latency of tools/call %s: count %v", contracts.ToolPraxecQuery, got)
	}
	if !h.logged(t, "mcp_name", contracts.ToolPraxecQuery) || !h.logged(t, "mcp_method", "tools/call") || !h.logged(t, "mcp_name", "no_such_tool") {
		t.Errorf("the request lines lack mcp_method/mcp_name:\n%s", h.g.Logs.String())
	}
}

// startInTrace starts deploy_pipeline over cs with a traceparent of a new
// trace in _meta, and returns that trace.
func startInTrace(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	trace := newTrace(t)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolPraxecCommand,
		Arguments: map[string]any{"definitionId": "deploy_pipeline"},
		Meta:      mcp.Meta{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}})
	if err != nil {
		t.Fatal(err)
	}
	success(t, contracts.ToolPraxecCommand, res)
	return trace
}

// wantTraceEvents fails unless aura_get_trace over cs reads events of
// trace.
func wantTraceEvents(t *testing.T, cs *mcp.ClientSession, trace string) {
	t.Helper()
	got := call(t, cs, contracts.ToolGetTrace, map[string]any{"traceId": trace})
	if !strings.Contains(string(got.raw), `"events":[{`) {
		t.Errorf("trace %s: %s", trace, got.raw)
	}
}

// TestTraceparentInMetaStdio: over the stdio server (praxa mcp's Local
// bound to a credential), a traceparent in _meta is the trace of the
// call's audit events too.
func TestTraceparentInMetaStdio(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.inMemory(t, h.token(t, nil, nil), nil)
	trace := startInTrace(t, cs)
	wantTraceEvents(t, cs, trace)
}

// TestTraceparentInMetaBatchRevision: at 2025-03-26, whose requests may
// come in a batch sharing one HTTP answer, a traceparent in _meta is the
// trace of the call's audit events, not of the shared answer.
func TestTraceparentInMetaBatchRevision(t *testing.T) {
	h := newHarness(t, nil)
	cs, rec := h.pinned(t, h.token(t, nil, nil), "2025-03-26")
	trace := startInTrace(t, cs)
	if got := rec.trace("tools/call"); got == trace || got == "" {
		t.Errorf("the answer's Traceparent names trace %q", got)
	}
	wantTraceEvents(t, cs, trace)
}
