package e2e_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/reload"
)

// upstreamEcho is a go-sdk MCP server with one tool, echo.
func upstreamEcho() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "late-upstream", Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
		})
	return s
}

// TestImportRetriedUntilTheUpstreamAnswers: a proxy.import connection
// whose MCP server is not up when the gateway starts does not stop it; the
// gateway serves without its tools, /readyz (still 200) and the
// connection's discovery item show the import retrying with the last
// error, and once the server comes up its tools appear everywhere a
// reload puts them: discovery, proxy_default, the MCP tool list (a session
// is told the list changed). A reload while it is retried is not refused.
func TestImportRetriedUntilTheUpstreamAnswers(t *testing.T) {
	// The upstream: a go-sdk MCP server over HTTP that answers 503 until
	// it is up.
	var isUp atomic.Bool
	up := gatewaytest.LateMCPServer(t, upstreamEcho(), &isUp)

	ti := newIssuer(t)
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, `connections:
  late:
    kind: mcp
    url: `+up.URL+`/mcp
proxy:
  import:
    - connection: late
      prefix: late
      exposeDirectly: true
`)
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:          ti,
		ConfigFile:      path,
		Edit:            func(cfg *config.Config) { cfg.Auth.Resource = resource },
		ImportRetryBase: 20 * time.Millisecond,
	})
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)

	// A stdio-like session on the gateway's direct tools, told when the
	// list changes (as praxa mcp's).
	cs, changed := g.StdioSession(t, tok)
	hasTool := func(name string) bool {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}
	importOf := func(body map[string]any) map[string]any {
		t.Helper()
		list, _ := body["imports"].([]any)
		if len(list) != 1 {
			t.Fatalf("/readyz lists %d imports, want 1: %v", len(list), body)
		}
		m, _ := list[0].(map[string]any)
		return m
	}
	readyz := func() map[string]any {
		t.Helper()
		res := w.do(t, req{method: http.MethodGet, path: "/readyz"})
		gatewaytest.WantStatus(t, res, http.StatusOK)
		return importOf(res.Object(t))
	}

	// Before the upstream is up: retrying, reported, nothing imported.
	st0 := readyz()
	if st0["connection"] != "late" || st0["state"] != catalogue.ImportRetrying || st0["lastError"] == "" || st0["nextAttemptAt"] == nil {
		t.Fatalf("/readyz before the upstream is up: %v", st0)
	}
	if n := num(t, st0, "attempts"); n < 1 {
		t.Errorf("attempts %d, want at least 1", n)
	}
	res := w.query(t, tok, map[string]any{"subject": "late"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if s := str(t, res.Object(t), "item.import.state"); s != catalogue.ImportRetrying {
		t.Errorf("the connection's discovery item says import %q, want retrying", s)
	}
	wantProblem(t, w.query(t, tok, map[string]any{"subject": "late.echo"}), http.StatusNotFound, contracts.CodeNotFound)
	if hasTool("late.echo") {
		t.Fatal("late.echo is listed before its upstream answered")
	}

	// A reload meanwhile is accepted (the connection being retried has no
	// capabilities to drop), and the retry goes on.
	if _, err := g.Reloader.Reload(context.Background(), reload.Trigger{Via: reload.ViaEndpoint}); err != nil {
		t.Fatalf("a reload while the import is retried: %v", err)
	}
	if st := readyz(); st["state"] != catalogue.ImportRetrying {
		t.Fatalf("/readyz after a reload while the upstream is down: %v", st)
	}

	// The upstream comes up.
	isUp.Store(true)
	select {
	case <-changed:
	case <-time.After(time.Minute):
		t.Fatalf("the session was not told the tool list changed; /readyz: %v\nlogs:\n%s", readyz(), g.Logs.String())
	}
	if st := readyz(); st["state"] != catalogue.ImportOK || st["lastError"] != nil || st["nextAttemptAt"] != nil {
		t.Errorf("/readyz after the upstream came up: %v", st)
	}
	if !hasTool("late.echo") {
		t.Error("late.echo is not listed after its upstream answered")
	}
	res = w.query(t, tok, map[string]any{"subject": "late"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if s := str(t, res.Object(t), "item.import.state"); s != catalogue.ImportOK {
		t.Errorf("the connection's discovery item says import %q, want ok", s)
	}
	res = w.query(t, tok, map[string]any{"subject": "late.echo"})
	gatewaytest.WantStatus(t, res, http.StatusOK)

	// The capability runs, through proxy_default.
	res = w.command(t, tok, map[string]any{"definitionId": config.ProxyDefaultWorkflow,
		"input": map[string]any{"capability": "late.echo", "message": "hello late"}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if !strings.Contains(string(res.Body), "hello late") {
		t.Errorf("late.echo through proxy_default answered %s", res.Body)
	}
}
