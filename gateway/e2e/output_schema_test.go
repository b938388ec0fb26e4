package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestOutputSchema: a capability's outputSchema, end to end. /mcp lists
// it as the direct tool's outputSchema; an output that satisfies it is
// the answer (structuredContent); one that does not is a failure, on the
// light path and in a run, naming where it broke the schema and handing
// over nothing of it. An imported tool lists no outputSchema of ours: the
// upstream's describes its structuredContent, not the capability's output.
func TestOutputSchema(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "typed-upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "lookup", InputSchema: map[string]any{"type": "object"},
		OutputSchema: map[string]any{"type": "object", "required": []any{"answer"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"answer": 42}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close)

	ti := newIssuer(t)
	// The cli executor's output is {exitCode, stdout, json}: json must hold
	// an integer count.
	const countSchema = "{ type: object, required: [json], properties: { json: { type: object, required: [count], properties: { count: { type: integer } } } } }"
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, `connections:
  sh: { kind: cli, command: /bin/sh }
  up: { kind: mcp, url: "`+up.URL+`/mcp" }
capabilities:
  count:
    exposeDirectly: true
    executor: { kind: cli, connection: sh, args: [-c, 'echo "{\"count\": 3}"'] }
    outputSchema: `+countSchema+`
  miscount:
    exposeDirectly: true
    executor: { kind: cli, connection: sh, args: [-c, 'echo "{\"count\": \"secret-value\"}"'] }
    outputSchema: `+countSchema+`
proxy:
  import:
    - { connection: up, prefix: up, exposeDirectly: true }
`)
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:     ti,
		ConfigFile: path,
		Edit:       func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	tok := mint(t, ti, tenantA, userA)
	ctx := context.Background()
	cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tok)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, tl := range tools.Tools {
		b, _ := json.Marshal(tl.OutputSchema)
		listed[tl.Name] = string(b)
	}
	if !strings.Contains(listed["count"], `"required":["json"]`) {
		t.Errorf("count lists the output schema %s", listed["count"])
	}
	if got, ok := listed["up.lookup"]; !ok || got != "null" {
		t.Errorf("up.lookup lists the output schema %s (listed: %v)", got, ok)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if sc, _ := res.StructuredContent.(map[string]any); res.IsError || sc["json"].(map[string]any)["count"] != 3.0 {
		t.Errorf("count: %+v", res)
	}

	const broken = "does not satisfy its outputSchema at /json/count (must be of type integer)"
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "miscount"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); !res.IsError || res.StructuredContent != nil || !strings.Contains(string(b), broken) || strings.Contains(string(b), "secret-value") {
		t.Errorf("miscount on the light path: %s", b)
	}
	w := wrapGateway(g)
	r := w.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "miscount"}}, token: tok})
	gatewaytest.WantStatus(t, r, http.StatusOK)
	out := r.Object(t)
	msg, _ := member(t, out, "context.lastRun.error").(string)
	if member(t, out, "context.lastRun.ok") != false || !strings.Contains(msg, broken) || strings.Contains(string(r.Body), "secret-value") {
		t.Errorf("miscount in a run: %s", r.Body)
	}

	// An imported tool is not held to its upstream's outputSchema by the
	// gateway (it describes the upstream's structuredContent).
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up.lookup"})
	if err != nil || res.IsError {
		t.Fatalf("up.lookup: %+v %v", res, err)
	}
}
