package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// hookSecret travels in a call's arguments under a name that marks it
// secret; it must reach neither the audit sink nor the store.
const hookSecret = "sk-hook-5e1f0c77"

// TestCapabilityAuditHooks: seeds/004's audit hooks, end to end. A
// declared capability whose audit block records argument and output paths
// and names an http sink: its call on the light path (an MCP direct tool)
// and its move in a run each reach the endpoint once committed, recording
// the values its paths name, redacted by name; the trace shows the same;
// a capability without sinks sends nothing; /metrics counts what the sink
// delivered.
func TestCapabilityAuditHooks(t *testing.T) {
	var mu sync.Mutex
	var lines []map[string]any
	var bodies bytes.Buffer
	siem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer siem-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies.Write(b)
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			var l map[string]any
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("the endpoint received %q", sc.Text())
			}
			lines = append(lines, l)
		}
	}))
	t.Cleanup(siem.Close)
	t.Setenv("E2E_SIEM_TOKEN", "siem-token")

	ti := newIssuer(t)
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, `connections:
  sh: { kind: cli, command: /bin/sh }
capabilities:
  raw.open_pr:
    executor: { kind: cli, connection: sh, args: [-c, 'echo "{\"url\": \"https://git.example.com/pr/7\"}"'] }
    audit:
      record: [$.arguments.title]
  pr.open:
    wraps: raw.open_pr
    exposeDirectly: true
    inputSchema: { type: object, properties: { title: { type: string }, meta: { type: object } } }
    audit:
      record: [$.arguments.meta, $.output.json.url]
      sinks:
        - { kind: http, url: "`+siem.URL+`/ingest", headers: { Authorization: "Bearer ${E2E_SIEM_TOKEN}" }, backoffMs: 1 }
  quiet:
    exposeDirectly: true
    executor: { kind: noop }
`)
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:     ti,
		ConfigFile: path,
		Edit:       func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	tok := mint(t, ti, tenantA, userA)
	args := map[string]any{"title": "Fix the build", "meta": map[string]any{"apiKey": hookSecret, "labels": []any{"ci"}}}

	// The light path: the direct tool, no run.
	ctx := context.Background()
	cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tok)
	for _, name := range []string{"pr.open", "quiet"} {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
	}
	// A run: the capability fired as the first move of proxy_default.
	w := wrapGateway(g)
	trace := newTraceID()
	r := w.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", token: tok, trace: trace,
		body: map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "pr.open", "title": args["title"], "meta": args["meta"]}}})
	gatewaytest.WantStatus(t, r, http.StatusOK)

	// The trace shows what the sink receives; the store holds no secret.
	wantArgs := `{"meta":{"apiKey":"[redacted]","labels":["ci"]},"title":"Fix the build"}`
	for _, ev := range w.traceEvents(t, tok, trace) {
		if ev.Type == "transition.fired" {
			if b, _ := json.Marshal(ev.Attributes["arguments"]); string(b) != wantArgs {
				t.Errorf("the trace shows the arguments %s", b)
			}
		}
	}
	for _, ev := range g.Events(t, tenantA, trace) {
		if b, _ := json.Marshal(ev.Attributes); strings.Contains(string(b), hookSecret) {
			t.Errorf("the store holds the secret in %s: %s", ev.Type, b)
		}
	}

	// The sink counts what it delivered; closing the gateway delivers
	// whatever it still held, so the endpoint has all it will ever get.
	gatewaytest.Eventually(t, "the endpoint receiving both events", 10*time.Second, func() bool {
		res, err := g.Client.Get(g.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		metrics, _ := io.ReadAll(res.Body)
		return strings.Contains(string(metrics), `praxa_audit_sink_events_total{kind="http",outcome="delivered",sink="`+siem.URL+`/ingest"} 2`)
	})
	g.Close()
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(bodies.String(), hookSecret) {
		t.Errorf("the endpoint received the secret:\n%s", bodies.String())
	}
	byType := map[string]map[string]any{}
	for _, l := range lines {
		attrs, _ := l["attributes"].(map[string]any)
		if attrs["capability"] != "pr.open" || l["tenant"] != tenantA || l["subject"] != userA {
			t.Errorf("the endpoint received an event it should not have: %v", l)
		}
		byType[l["type"].(string)] = attrs
	}
	if len(lines) != 2 || byType["capability.called"] == nil || byType["transition.fired"] == nil {
		t.Fatalf("the endpoint received %v, want capability.called and transition.fired of pr.open", lines)
	}
	for typ, attrs := range byType {
		if b, _ := json.Marshal(attrs["arguments"]); string(b) != wantArgs {
			t.Errorf("%s records the arguments %s, want %s", typ, b, wantArgs)
		}
		if b, _ := json.Marshal(attrs["output"]); string(b) != `{"json":{"url":"https://git.example.com/pr/7"}}` {
			t.Errorf("%s records the output %s", typ, b)
		}
	}
}
