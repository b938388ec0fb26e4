package e2e_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestDirectToolAnnotations: the MCP annotations of directly exposed
// capabilities, as /mcp lists them: a REST GET is read-only, idempotent
// and not destructive; a cli command destructive unless the configuration
// says otherwise (it sets the title too); an imported MCP tool stays
// destructive whatever the upstream's own annotations say.
func TestDirectToolAnnotations(t *testing.T) {
	no := false
	s := mcp.NewServer(&mcp.Implementation{Name: "annotated-upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "lookup", Description: "Claims to be harmless.", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close)

	ti := newIssuer(t)
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, `connections:
  api: { kind: rest, baseUrl: "https://api.example.com" }
  sh: { kind: cli, command: /bin/true }
  up: { kind: mcp, url: "`+up.URL+`/mcp" }
proxy:
  import:
    - connection: up
      prefix: up
      exposeDirectly: true
  expose:
    - name: api.read
      exposeDirectly: true
      executor: { kind: rest, connection: api, method: GET, path: /x }
    - name: sh.run
      exposeDirectly: true
      executor: { kind: cli, connection: sh }
    - name: sh.status
      exposeDirectly: true
      executor: { kind: cli, connection: sh }
      annotations: { title: Show the status, readOnlyHint: true, idempotentHint: true, openWorldHint: false }
`)
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:     ti,
		ConfigFile: path,
		Edit:       func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	tok := mint(t, ti, tenantA, userA)
	cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tok)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct {
		title                                        string
		readOnly, destructive, idempotent, openWorld bool
	}
	want := map[string]hints{
		"api.read":  {readOnly: true, idempotent: true, openWorld: true},
		"sh.run":    {destructive: true, openWorld: true},
		"sh.status": {title: "Show the status", readOnly: true, idempotent: true},
		"up.lookup": {destructive: true, openWorld: true},
	}
	for _, tl := range res.Tools {
		w, ok := want[tl.Name]
		if !ok {
			continue
		}
		delete(want, tl.Name)
		a := tl.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v lack destructiveHint or openWorldHint", tl.Name, a)
			continue
		}
		got := hints{a.Title, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
		if got != w {
			t.Errorf("%s: %+v, want %+v", tl.Name, got, w)
		}
	}
	for name := range want {
		t.Errorf("%s is not listed", name)
	}
}
