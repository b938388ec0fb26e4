package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
)

// serve serves srv the way the harness does and returns a client session
// on it.
func serve(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(benchmcp.Handler(srv))
	t.Cleanup(hs.Close)
	cs, err := benchmcp.Connect(context.Background(), "test", hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func upstream() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo it.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "up:" + a.Text}}}, nil
		})
	return srv
}

func TestRelayForwardsCalls(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) { testRelayForwardsCalls(t, raw) })
	}
}

func testRelayForwardsCalls(t *testing.T, raw bool) {
	ctx := context.Background()
	hs := httptest.NewServer(benchmcp.Handler(upstream()))
	t.Cleanup(hs.Close)
	rec := &recorder{next: http.DefaultTransport}
	hc := &http.Client{Transport: rec}
	up, err := benchmcp.Connect(ctx, "test", hs.URL, hc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	var rc *rawCaller
	if raw {
		if rc, err = newRawCaller(ctx, up, rec, hc, hs.URL, "echo", map[string]any{"text": "first"}); err != nil {
			t.Fatal(err)
		}
	}
	relay, err := newRelay(ctx, up, rc, "echo")
	if err != nil {
		t.Fatal(err)
	}
	if raw {
		// Nothing but the raw caller may reach the upstream from here on.
		up.Close()
	}
	cs := serve(t, relay)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" || tools.Tools[0].Description != "Echo it." {
		t.Fatalf("tools/list: %+v", tools.Tools)
	}
	// Concurrent calls share the one upstream session (or the raw caller).
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			text := fmt.Sprintf("call-%d", i)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Errorf("call %d: %v %+v", i, err, res)
				return
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "up:"+text {
				t.Errorf("call %d answered %q", i, got)
			}
		})
	}
	wg.Wait()
}

func TestRelayNeedsTheTool(t *testing.T) {
	_, err := newRelay(context.Background(), serve(t, upstream()), nil, "missing")
	if err == nil || !strings.Contains(err.Error(), `no tool "missing"`) {
		t.Fatalf("err %v", err)
	}
}
