package connect_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

// TestTraceparentSentOn: the W3C trace context of the call reaches every
// kind of upstream: a REST request's traceparent header, an MCP call's
// _meta.traceparent, a command's TRACEPARENT environment variable.
func TestTraceparentSentOn(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := workflow.WithTraceparent(context.Background(), tp)

	var restSaw atomic.Value
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		restSaw.Store(r.Header.Get("Traceparent"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer api.Close()

	var mcpSaw atomic.Value
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mcpSaw.Store(req.Params.Meta["traceparent"])
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer up.Close()

	m := connect.New(map[string]config.Connection{
		"api": {Kind: "rest", BaseURL: api.URL},
		"up":  {Kind: "mcp", URL: up.URL},
		"sh":  {Kind: "cli", Command: "sh"},
	}, &connect.Options{Logger: quiet(), Getenv: env(map[string]string{"PATH": "/usr/bin:/bin"})})
	defer m.Close()
	run := func(x config.Executor) map[string]any {
		t.Helper()
		out, err := m.Runners()[x.Kind].Run(ctx, x, workflow.Scope{Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", x.Kind, err)
		}
		return out
	}
	run(config.Executor{Kind: "rest", Connection: "api", Method: "GET", Path: "/x"})
	run(config.Executor{Kind: "mcp", Connection: "up", Tool: "echo"})
	out := run(config.Executor{Kind: "cli", Connection: "sh", Args: []string{"-c", `printf %s "$TRACEPARENT"`}})
	if restSaw.Load() != tp || mcpSaw.Load() != tp || out["stdout"] != tp {
		t.Errorf("traceparent seen: rest %v, mcp %v, cli %v; want %s", restSaw.Load(), mcpSaw.Load(), out["stdout"], tp)
	}
}
