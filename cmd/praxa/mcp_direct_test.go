package main

import (
	"context"
	_ "embed"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// directYAML (testdata/direct.yaml) exposes notes.ping directly and
// notes.hidden through praxec only.
//
//go:embed testdata/direct.yaml
var directYAML []byte

// TestMCPCommandDirectTools: `praxa mcp` on the local store lists the
// capabilities marked exposeDirectly as tools of their own, as serve's
// /mcp does, and a call of one runs the capability.
func TestMCPCommandDirectTools(t *testing.T) {
	bin, dir, _, tok := devGateway(t)
	cfgPath := filepath.Join(t.TempDir(), "direct.yaml")
	if err := os.WriteFile(cfgPath, directYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	cs, stderr := connectStdio(t, bin, childEnv(), "mcp", "--dev", "--data-dir", dir, "--config", cfgPath, "--token", tok)
	res, err := cs.ListTools(context.Background(), nil)
	must(t, err, "tools/list")
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "notes.ping") {
		t.Fatalf("tools/list %v lacks the direct tool notes.ping\n%s", names, stderr.String())
	}
	if slices.Contains(names, "notes.hidden") {
		t.Errorf("tools/list %v lists notes.hidden, which is not exposed directly", names)
	}
	out, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes.ping", Arguments: map[string]any{"text": "hi"}})
	must(t, err, "tools/call notes.ping")
	if out.IsError {
		t.Fatalf("notes.ping answered an error: %+v", out.Content)
	}
	// notes.ping has no guard and produces no evidence: the light path
	// answers it without a run, with the link that starts one.
	if out.Meta[`io.praxa/workflow`] != nil || out.Meta[`io.praxa/links`] == nil {
		t.Errorf("the result's _meta: %+v, want links and no run", out.Meta)
	}
}
