package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestServeRetriesImport: praxa serve starts although its proxy.import
// connection's MCP server is not up; /readyz answers 200 and says the
// import is retrying; once the server is up the gateway imports its tools
// by itself (no reload asked for), and /readyz says ok.
func TestServeRetriesImport(t *testing.T) {
	bin := buildPraxa(t)
	var up atomic.Bool
	srv := mcp.NewServer(&mcp.Implementation{Name: "late", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	upstream := gatewaytest.LateMCPServer(t, srv, &up)
	dir := t.TempDir()
	_, gw := serveConfig(t, bin, dir, "connections:\n  late:\n    kind: mcp\n    url: "+upstream.URL+"/mcp\n"+
		"proxy:\n  import:\n    - connection: late\n      prefix: late\n")
	tok := mintToken(t, bin, dir)

	type state struct {
		Connection, State, LastError string
		Attempts                     int
	}
	readyz := func() state {
		t.Helper()
		res, err := http.Get(gw.url + "/readyz")
		must(t, err, "GET /readyz")
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var body struct{ Imports []state }
		if res.StatusCode != http.StatusOK || json.Unmarshal(b, &body) != nil || len(body.Imports) != 1 {
			t.Fatalf("/readyz answered %d: %s", res.StatusCode, b)
		}
		return body.Imports[0]
	}
	if st := readyz(); st.Connection != "late" || st.State != "retrying" || st.Attempts < 1 || st.LastError == "" {
		t.Fatalf("/readyz while the upstream is down: %+v", st)
	}
	if status, body := post(t, gw.url+"/v8/praxec/query", tok, map[string]any{"subject": "late.echo"}); status != http.StatusNotFound {
		t.Fatalf("late.echo described before its upstream is up: %d %s", status, body)
	}

	up.Store(true)
	if !gatewaytest.Poll(2*time.Minute, func() bool { return readyz().State == "ok" }) {
		t.Fatalf("the import was not retried:\n%s", gw.stderr())
	}
	if status, body := post(t, gw.url+"/v8/praxec/query", tok, map[string]any{"subject": "late.echo"}); status != http.StatusOK {
		t.Fatalf("late.echo after its upstream came up: %d %s", status, body)
	}
}
