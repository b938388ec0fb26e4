package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestMCPStdioAnswersBeforeEOF: requests piped into `praxa mcp` whose
// stdin then ends are all answered (and executed) before the process
// exits; before, the session closed at EOF and the start was dropped.
func TestMCPStdioAnswersBeforeEOF(t *testing.T) {
	bin, dir, _, tok := devGateway(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"praxec.command","arguments":{"definitionId":"guarded_merge","runId":"piped-1"}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"praxec.query","arguments":{"workflowId":"none"}}}`,
	}, "\n") // the last line without its newline
	cmd := exec.Command(bin, "mcp", "--dev", "--data-dir", dir, "--token", tok)
	cmd.Env = childEnv()
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("praxa mcp: %v\n%s", err, stderr.String())
	}
	answers := map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		if m.Result != nil {
			answers[string(m.ID)] = m.Result
		} else {
			answers[string(m.ID)] = m.Error
		}
	}
	for _, id := range []string{`1`, `2`, `"three"`} {
		if answers[id] == nil {
			t.Errorf("request %s was not answered; stdout:\n%s\nstderr:\n%s", id, stdout.String(), stderr.String())
		}
	}
	if !strings.Contains(string(answers[`2`]), `"definitionId":"guarded_merge"`) {
		t.Errorf("the start answered %s", answers[`2`])
	}
}
