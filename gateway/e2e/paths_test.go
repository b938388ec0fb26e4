package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestForbiddenPathRunsNothing: a path argument outside the connection's
// roots answers 403 path-forbidden and nothing runs, whether the call
// starts a run, moves one (whose version stays usable: the refused move
// took nothing) or takes the light path of a direct tool. Before, the
// refusal was taken for a call that may have acted: 504 outcome-unknown,
// and the run's version was used up.
func TestForbiddenPathRunsNothing(t *testing.T) {
	ti := newIssuer(t)
	root := t.TempDir()
	allowed := filepath.Join(root, "notes.txt")
	writeFile(t, allowed, "hello")
	marker := filepath.Join(t.TempDir(), "ran")
	cfg := fmt.Sprintf(`connections:
  files:
    kind: cli
    command: /bin/sh
    workingDirectory: %q
    roots:
      read: [%q]
proxy:
  expose:
    - name: files.read
      description: Read a file under the root.
      exposeDirectly: true
      inputSchema:
        type: object
        required: [file]
        properties:
          file: { type: string }
      executor:
        kind: cli
        connection: files
        args: ["-c", 'echo ran >> %s; cat "$1"', "sh", "$.arguments.file"]
        paths:
          read: ["$.arguments.file"]
`, root, root, marker)
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, cfgPath, cfg)
	g, w := fileGateway(t, ti, cfgPath)
	tok := mint(t, ti, tenantA, userA)
	ran := func() int { return gatewaytest.FileCount(t, marker, "ran") }

	// A start whose first move is refused.
	res := w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "files.read", "file": "/etc/passwd"}})
	wantProblem(t, res, http.StatusForbidden, contracts.CodePathForbidden)
	if ran() != 0 {
		t.Fatalf("the command ran %d times", ran())
	}

	// A run, then a refused move on it: the same version still moves.
	res = w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "files.read", "file": allowed}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	body := res.Object(t)
	wf, v := str(t, body, "workflow.id"), num(t, body, "workflow.version")
	submit := func(file string) *gatewaytest.Response {
		return w.command(t, tok, map[string]any{"workflowId": wf, "expectedVersion": v, "transition": "files.read", "arguments": map[string]any{"file": file}})
	}
	wantProblem(t, submit(filepath.Join(root, "..", "..", "etc", "passwd")), http.StatusForbidden, contracts.CodePathForbidden)
	gatewaytest.WantStatus(t, submit(allowed), http.StatusOK)
	if ran() != 2 {
		t.Errorf("the command ran %d times, want 2 (the allowed calls)", ran())
	}

	// The light path of the direct tool.
	cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tok)
	out, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "files.read", Arguments: map[string]any{"file": "/etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	if !out.IsError || len(out.Content) == 0 {
		t.Fatalf("direct call: %+v", out)
	}
	if txt := out.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, `"code":"`+string(contracts.CodePathForbidden)+`"`) {
		t.Errorf("direct call answered %s, want path-forbidden", txt)
	}
	if ran() != 2 {
		t.Errorf("the command ran %d times after the direct call, want 2", ran())
	}
}

// TestCallerOptionNeverReachesTheCommand is the case of the safety issue:
// /bin/cp with src a read path and dst a write path. A dst of
// --target-directory=/elsewhere used to pass the roots check as a
// relative path and make cp write outside every root; it is refused 403
// path-forbidden and nothing is written. A dst inside the write root is
// copied, cp receiving the absolute path that was checked.
func TestCallerOptionNeverReachesTheCommand(t *testing.T) {
	if _, err := os.Stat("/bin/cp"); err != nil {
		t.Skip("no /bin/cp")
	}
	ti := newIssuer(t)
	base := t.TempDir()
	readRoot, writeRoot, elsewhere := filepath.Join(base, "read"), filepath.Join(base, "write"), filepath.Join(base, "elsewhere")
	for _, d := range []string{readRoot, writeRoot, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(readRoot, "ok.txt"), []byte("ok"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`connections:
  copy:
    kind: cli
    command: /bin/cp
    workingDirectory: %q
    roots: {read: [%q], write: [%q]}
proxy:
  expose:
    - name: files.copy
      description: Copy a file from the read root into the write root.
      inputSchema:
        type: object
        required: [src, dst]
        properties:
          src: {type: string}
          dst: {type: string}
      executor:
        kind: cli
        connection: copy
        args: [$.arguments.src, $.arguments.dst]
        paths: {read: [$.arguments.src], write: [$.arguments.dst]}
`, writeRoot, readRoot, writeRoot)
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, cfgPath, cfg)
	_, w := fileGateway(t, ti, cfgPath)
	tok := mint(t, ti, tenantA, userA)
	copyTo := func(dst string) *gatewaytest.Response {
		return w.command(t, tok, map[string]any{"definitionId": "proxy_default",
			"input": map[string]any{"capability": "files.copy", "src": filepath.Join(readRoot, "ok.txt"), "dst": dst}})
	}

	for _, dst := range []string{"--target-directory=" + elsewhere, "-t" + elsewhere, filepath.Join(elsewhere, "copied.txt")} {
		wantProblem(t, copyTo(dst), http.StatusForbidden, contracts.CodePathForbidden)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Fatalf("cp wrote outside every root: %v", entries)
	}
	gatewaytest.WantStatus(t, copyTo("copied.txt"), http.StatusOK)
	if b, err := os.ReadFile(filepath.Join(writeRoot, "copied.txt")); err != nil || string(b) != "ok" {
		t.Fatalf("the allowed copy: %q, %v", b, err)
	}
}
