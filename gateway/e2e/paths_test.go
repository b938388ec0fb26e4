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
	if err := os.WriteFile(allowed, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g, w := fileGateway(t, ti, cfgPath)
	tok := ti.token(t, tenantA, userA)
	ran := func() int {
		b, _ := os.ReadFile(marker)
		return len(b) / len("ran\n")
	}

	// A start whose first move is refused.
	res := w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "files.read", "file": "/etc/passwd"}})
	wantProblem(t, res, http.StatusForbidden, contracts.CodePathForbidden)
	if ran() != 0 {
		t.Fatalf("the command ran %d times", ran())
	}

	// A run, then a refused move on it: the same version still moves.
	res = w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "files.read", "file": allowed}})
	wantStatus(t, res, http.StatusOK)
	body := res.object(t)
	wf, v := str(t, body, "workflow.id"), num(t, body, "workflow.version")
	submit := func(file string) *resp {
		return w.command(t, tok, map[string]any{"workflowId": wf, "expectedVersion": v, "transition": "files.read", "arguments": map[string]any{"file": file}})
	}
	wantProblem(t, submit(filepath.Join(root, "..", "..", "etc", "passwd")), http.StatusForbidden, contracts.CodePathForbidden)
	wantStatus(t, submit(allowed), http.StatusOK)
	if ran() != 2 {
		t.Errorf("the command ran %d times, want 2 (the allowed calls)", ran())
	}

	// The light path of the direct tool.
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{tok: tok}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
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
