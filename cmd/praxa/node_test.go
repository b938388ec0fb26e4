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
// TypeScript MCP clients (conformance/node/drive.mjs, one link-copying
// agent): @modelcontextprotocol/sdk 1.x at 2025-11-25 and the 2.x split
// client package @modelcontextprotocol/client at 2025-11-25 and at
// 2026-07-28 (server/discover, per-request _meta, Mcp-Method and Mcp-Name
// headers). Each lists the tools, searches, describes deploy_pipeline,
// starts it and follows its links to completed, and recovers from a 422
// by following its retry_with_key link; every structuredContent is
// validated by the client against the tool's outputSchema. It needs node
// and npm and runs only when PRAXA_NODE_TESTS is set (CI sets it); npm
// installs the pinned clients from the checked-in package-lock.json.
func TestNodeClient(t *testing.T) {
	npm := needNPM(t, "drive /mcp with the TypeScript client")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	work := npmInstall(t, npm, filepath.Join("conformance", "node"), "drive.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	_, _, gw, tok := devGateway(t)

	for _, c := range []struct{ client, protocol string }{
		{"sdk", "2025-11-25"},
		{"client", "2025-11-25"},
		{"client", "2026-07-28"},
	} {
		t.Run(c.client+"@"+c.protocol, func(t *testing.T) {
			drive := exec.CommandContext(ctx, node, "drive.mjs")
			drive.Dir = work
			drive.Env = childEnv("PRAXA_URL="+gw.url+"/mcp", "PRAXA_TOKEN="+tok, "PRAXA_CLIENT="+c.client, "PRAXA_PROTOCOL="+c.protocol)
			out, err := drive.CombinedOutput()
			t.Logf("node drive.mjs:\n%s", out)
			if err != nil {
				t.Fatalf("node drive.mjs: %v\ngateway stderr:\n%s", err, gw.stderr())
			}
		})
	}
}

// npmInstall copies package.json, package-lock.json and the other files of
// dir (a folder of the repository) to a new folder and installs the pinned
// packages there with npm ci, as CI does; it returns the folder.
func npmInstall(t *testing.T, npm, dir string, files ...string) string {
	t.Helper()
	work := t.TempDir()
	for _, f := range append([]string{"package.json", "package-lock.json"}, files...) {
		b, err := os.ReadFile(filepath.Join("..", "..", dir, f))
		must(t, err, "read %s/%s", dir, f)
		must(t, os.WriteFile(filepath.Join(work, f), b, 0o644), "write %s", f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	install.Dir = work
	install.Env = os.Environ() // npm's own settings: registry, CA, cache (npm_config_cache)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	return work
}
