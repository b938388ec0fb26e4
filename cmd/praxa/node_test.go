package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestNodeClient drives `praxa serve --dev`'s /mcp with the official
// TypeScript MCP client (conformance/node/drive.mjs): tools/list, then
// deploy_pipeline to completed by copying links, every structuredContent
// validated by that client against the tool's outputSchema. It needs node
// and npm and runs only when PRAXA_NODE_TESTS is set (CI sets it); npm
// installs the pinned client from the checked-in package-lock.json.
func TestNodeClient(t *testing.T) {
	if os.Getenv("PRAXA_NODE_TESTS") == "" {
		t.Skip("set PRAXA_NODE_TESTS=1 to drive /mcp with the TypeScript client (needs node and npm)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm on PATH")
	}
	work := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "drive.mjs"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "conformance", "node", f))
		must(t, err, "read conformance/node/%s", f)
		must(t, os.WriteFile(filepath.Join(work, f), b, 0o644), "write %s", f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	install.Dir = work
	install.Env = os.Environ() // npm's own settings: registry, CA, cache (npm_config_cache)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}

	bin := buildPraxa(t)
	dir := t.TempDir()
	gw := startDevServe(t, bin, dir)
	tok := mintToken(t, bin, dir)

	drive := exec.CommandContext(ctx, node, "drive.mjs")
	drive.Dir = work
	drive.Env = childEnv("PRAXA_URL="+gw.url+"/mcp", "PRAXA_TOKEN="+tok)
	out, err := drive.CombinedOutput()
	t.Logf("node drive.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("node drive.mjs: %v\ngateway stderr:\n%s", err, gw.stderr())
	}
}
