package mcpadapter_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/lightpath"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/mcpadapter"
)

// upstream is a real go-sdk MCP server over streamable HTTP with an echo
// tool, a fail tool (an MCP error result) and a count of the calls it
// served.
type upstream struct {
	url   string
	calls atomic.Int64
	// trace is the _meta.traceparent of the last echo call.
	trace atomic.Value
}

// configFile writes yaml to a praxec.yaml of its own and returns its path.
func configFile(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newUpstream(t testing.TB) *upstream {
	t.Helper()
	return serveUpstream(t, func(h http.Handler) http.Handler { return h })
}

// serveUpstream serves the upstream's go-sdk handler through wrap.
func serveUpstream(t testing.TB, wrap func(http.Handler) http.Handler) *upstream {
	t.Helper()
	u := &upstream{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.calls.Add(1)
			u.trace.Store(fmt.Sprint(req.Params.Meta["traceparent"]))
			var args struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + args.Text}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.calls.Add(1)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such branch"}}}, nil
		})
	hs := httptest.NewServer(wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true})))
	t.Cleanup(hs.Close)
	u.url = hs.URL
	return u
}

// lightConfig exposes the upstream's tools: up.echo and up.fail directly,
// without guard or evidence (the light path); up.tests produces evidence
// and up.guarded needs it, both exposed directly too (runs).
func lightConfig(url string) string {
	return fmt.Sprintf(lightYAML, url)
}

// lightYAML (testdata/light.yaml) is the template lightConfig fills.
//
//go:embed testdata/light.yaml
var lightYAML string

// traced sends every request with a traceparent naming trace, so the
// call's audit events can be read back.
type traced struct {
	tok, trace string
}

func (b traced) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	r.Header.Set("Traceparent", "00-"+b.trace+"-00f067aa0ba902b7-01")
	return http.DefaultTransport.RoundTrip(r)
}

// TestDirectLightPath: over /mcp (the real router, a go-sdk client, a real
// go-sdk upstream over HTTP), a direct call of a capability without guard
// or evidence takes the light path: the upstream is called once, no
// mission is stored, exactly one audit event records the call, and it is
// in the store when the answer arrives (committed, not queued). The
// answer's _meta holds the start link of a run and no run. A capability
// that produces evidence, or needs it, still runs as a one-move run.
func TestDirectLightPath(t *testing.T) {
	up := newUpstream(t)
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: configFile(t, lightConfig(up.url))})
	connect := func(t *testing.T, tok, trace string) *mcp.ClientSession {
		t.Helper()
		cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp",
			HTTPClient: &http.Client{Transport: traced{tok: tok, trace: trace}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// A light call's event must be in the store when the answer arrives:
	// read without flushing the asynchronous audit.
	events := func(t *testing.T, trace string) []store.Event { return g.StoredEvents(t, tenantA, trace) }
	tok := g.Token(t, tenantA, userA, nil, nil)

	t.Run("ok", func(t *testing.T) {
		trace := "4bf92f3577b34da6a3ce929d0e0e4736"
		cs := connect(t, tok, trace)
		before := up.calls.Load()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up.echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || textOf(t, res) != "echo: hi" {
			t.Fatalf("answer: isError %v %q", res.IsError, textOf(t, res))
		}
		if n := up.calls.Load() - before; n != 1 {
			t.Errorf("the upstream was called %d times, want 1", n)
		}
		if res.Meta[mcpadapter.WorkflowMetaKey] != nil {
			t.Errorf("a light call names a run: %v", res.Meta)
		}
		// The call's trace goes on to the upstream (a span of the gateway's).
		if got, _ := up.trace.Load().(string); !strings.HasPrefix(got, "00-"+trace+"-") {
			t.Errorf("the upstream saw traceparent %q, want the call's trace %s", got, trace)
		}
		links, _ := json.Marshal(res.Meta[mcpadapter.LinksMetaKey])
		want := `[{"args":{"definitionId":"proxy_default","input":{"capability":"up.echo"}},"input_schema":{"properties":{"text":{"maxLength":20,"type":"string"}},"required":["text"],"type":"object"},"method":"praxec.command","rel":"start"}]`
		if !jsonEqual(t, links, []byte(want)) {
			t.Errorf("links %s, want %s", links, want)
		}
		if n := gatewaytest.RowCount(t, g.DBPath, "missions"); n != 0 {
			t.Errorf("%d missions stored, want none", n)
		}
		evs := events(t, trace)
		if len(evs) != 1 || evs[0].Type != lightpath.EventCalled || evs[0].Outcome != "allowed" || evs[0].Subject != userA ||
			evs[0].Attributes["capability"] != "up.echo" || evs[0].Attributes["ok"] != true || evs[0].Attributes["kind"] != "mcp" {
			t.Fatalf("events %+v, want one %s event", evs, lightpath.EventCalled)
		}
	})

	t.Run("null arguments", func(t *testing.T) {
		// A raw tools/call whose arguments are null: no arguments, as the
		// run path has always read them (up.fail takes none).
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up.fail","arguments":null}}`
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), "no such branch") {
			t.Errorf("tools/call with null arguments: %d %s", res.StatusCode, b)
		}
	})

	t.Run("upstream failure", func(t *testing.T) {
		trace := "5bf92f3577b34da6a3ce929d0e0e4736"
		cs := connect(t, tok, trace)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up.fail", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(textOf(t, res), "no such branch") || res.StructuredContent != nil {
			t.Fatalf("answer: isError %v %q", res.IsError, textOf(t, res))
		}
		evs := events(t, trace)
		if len(evs) != 1 || evs[0].Attributes["ok"] != false || evs[0].Attributes["error"] == nil {
			t.Fatalf("events %+v", evs)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		before := up.calls.Load()
		cases := []struct {
			name string
			tok  string
			args map[string]any
			code contracts.Code
		}{
			{"invalid arguments", tok, map[string]any{"text": strings.Repeat("x", 21)}, contracts.CodeInvalidParams},
			{"missing scope", g.Token(t, tenantA, userA, scopesWithout(contracts.ScopeMissionsWrite), nil), map[string]any{"text": "hi"}, contracts.CodeInsufficientScope},
			{"praxec.command not allowed", g.Token(t, tenantA, userA, nil, map[string]any{"tools": []string{"praxec.query", "up.echo"}}), map[string]any{"text": "hi"}, contracts.CodeToolNotAllowed},
		}
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				trace := fmt.Sprintf("6bf92f3577b34da6a3ce929d0e0e47%02d", i)
				cs := connect(t, c.tok, trace)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up.echo", Arguments: c.args})
				var env *envelope
				switch {
				case c.code == contracts.CodeInsufficientScope:
					// Over HTTP a missing scope is a 403 scope challenge.
					env = scopeChallenged(t, "up.echo", res, err)
				case err != nil:
					t.Fatal(err)
				default:
					env = failure(t, "up.echo", res, c.code)
				}
				if c.code == contracts.CodeInvalidParams && (len(env.Errors) == 0 || env.Errors[0].Pointer != "/input/text") {
					t.Errorf("errors %+v, want /input/text", env.Errors)
				}
				g.Flush(t)
				evs := events(t, trace)
				if len(evs) != 1 || evs[0].Outcome != "refused" || evs[0].Code != string(c.code) {
					t.Errorf("events %+v, want one refusal", evs)
				}
			})
		}
		if n := up.calls.Load() - before; n != 0 {
			t.Errorf("refused calls reached the upstream %d times", n)
		}
	})

	t.Run("evidence still runs", func(t *testing.T) {
		cs := connect(t, tok, "7bf92f3577b34da6a3ce929d0e0e4736")
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up.tests", Arguments: map[string]any{"text": "go"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || res.Meta[mcpadapter.WorkflowMetaKey] == nil {
			t.Fatalf("up.tests: isError %v, _meta %v", res.IsError, res.Meta)
		}
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up.guarded", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		failure(t, "up.guarded", res, contracts.CodeGuardRejected)
	})
}
