package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestMCPCommand runs `praxa mcp` as a child process over stdio, as an MCP
// host does: on the local store of a `praxa serve --dev` data directory,
// and as a client of the running gateway (--gateway URL).
func TestMCPCommand(t *testing.T) {
	bin, dir, gw, tok := devGateway(t) // --gateway talks to gw

	t.Run("local store", func(t *testing.T) {
		cs, stderr := connectStdio(t, bin, childEnv(), "mcp", "--dev", "--data-dir", dir, "--token", tok)
		started := stdioDrive(t, cs)
		// The store is the gateway's: the mission started over stdio is
		// read back over REST.
		assertMissionState(t, gw.url, tok, started, "test")
		if !strings.Contains(stderr.String(), "serving all tools on stdio for dev-user (tenant dev)") {
			t.Errorf("stderr does not announce the binding:\n%s", stderr.String())
		}
	})
	t.Run("local store, token from PRAXA_TOKEN, one tool set", func(t *testing.T) {
		cs, _ := connectStdio(t, bin, childEnv("PRAXA_TOKEN="+tok), "mcp", "--dev", "--data-dir", dir, "--tools", contracts.SetPraxec)
		res, err := cs.ListTools(context.Background(), nil)
		must(t, err, "tools/list")
		if len(res.Tools) != 2 {
			t.Errorf("--tools praxec lists %d tools, want 2", len(res.Tools))
		}
	})
	t.Run("gateway", func(t *testing.T) {
		cs, _ := connectStdio(t, bin, childEnv(), "mcp", "--gateway", gw.url, "--token", tok)
		started := stdioDrive(t, cs)
		assertMissionState(t, gw.url, tok, started, "test")
	})
	t.Run("metrics", func(t *testing.T) {
		for _, mode := range []struct {
			name string
			args []string
			own  string // a metric only a local store's gateway has
		}{
			{"local store", []string{"--dev", "--data-dir", dir}, "praxa_leases_swept_total"},
			{"gateway", []string{"--gateway", gw.url}, ""},
		} {
			t.Run(mode.name, func(t *testing.T) {
				cs, stderr := connectStdio(t, bin, childEnv(), append([]string{"mcp", "--token", tok, "--metrics-addr", "127.0.0.1:0"}, mode.args...)...)
				// stderr is copied from the child's pipe: it may trail the
				// session's start a little.
				var m []string
				if !gatewaytest.Poll(10*time.Second, func() bool {
					m = regexp.MustCompile(`praxa mcp: metrics at (http://\S+/metrics)`).FindStringSubmatch(stderr.String())
					return m != nil
				}) {
					t.Fatalf("stderr does not say where the metrics are:\n%s", stderr.String())
				}
				for range 2 {
					_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{}})
					must(t, err, "praxec.query")
				}
				res, err := http.Get(m[1])
				must(t, err, "GET %s", m[1])
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				want := `praxa_http_requests_total{mcp_method="tools/call",mcp_tool="praxec.query",method="",route="stdio",status="200"} 2`
				if res.StatusCode != http.StatusOK || !strings.Contains(string(body), want) || !strings.Contains(string(body), mode.own) {
					t.Errorf("GET %s: %d, want %s and %q:\n%s", m[1], res.StatusCode, want, mode.own, body)
				}
			})
		}
	})

	refusals := []struct {
		name, want string
		env        []string
		args       []string
	}{
		{"no token", "no credential: pass --token or set PRAXA_TOKEN", childEnv(), []string{"mcp", "--dev", "--data-dir", dir}},
		{"empty PRAXA_TOKEN", "no credential", childEnv("PRAXA_TOKEN="), []string{"mcp", "--dev", "--data-dir", dir}},
		{"invalid token", "the credential is not accepted", childEnv(), []string{"mcp", "--dev", "--data-dir", dir, "--token", tok[:len(tok)-6] + "AAAAAA"}},
		{"garbage token", "the credential is not accepted", childEnv(), []string{"mcp", "--dev", "--data-dir", dir, "--token", "not-a-token"}},
		{"no token, gateway", "no credential", childEnv(), []string{"mcp", "--gateway", gw.url}},
		{"bad token, gateway", "refuses the credential", childEnv(), []string{"mcp", "--gateway", gw.url, "--token", "not-a-token"}},
		{"unknown tool set", "unknown tool set", childEnv(), []string{"mcp", "--dev", "--data-dir", dir, "--token", tok, "--tools", "nope"}},
		{"metrics address", "--metrics-addr", childEnv(), []string{"mcp", "--dev", "--data-dir", dir, "--token", tok, "--metrics-addr", "no-port"}},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			code, stdout, stderr := runChild(t, bin, r.env, r.args...)
			if code == 0 {
				t.Errorf("exit 0, want non-zero")
			}
			if stdout != "" {
				t.Errorf("stdout, the protocol channel, holds %q", stdout)
			}
			if !strings.Contains(stderr, r.want) {
				t.Errorf("stderr %q does not say %q", stderr, r.want)
			}
		})
	}
}

// connectStdio starts bin args as an MCP server over stdio with env; it
// must exit cleanly when the session closes, as t ends.
func connectStdio(t *testing.T, bin string, env []string, args ...string) (*mcp.ClientSession, *gatewaytest.LogBuffer) {
	t.Helper()
	cs, cmd, stderr := startStdio(t, bin, env, nil, args...)
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("close: %v\nstderr:\n%s", err, stderr.String())
		}
		if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
			t.Errorf("praxa mcp did not exit cleanly on EOF: %v\nstderr:\n%s", cmd.ProcessState, stderr.String())
		}
	})
	return cs, stderr
}

// startStdio starts bin args as an MCP server over stdio with env and
// connects to it, a client with opts (nil: the defaults). The process has
// exited, and cmd.ProcessState is set, once the session is closed.
func startStdio(t *testing.T, bin string, env []string, opts *mcp.ClientOptions, args ...string) (*mcp.ClientSession, *exec.Cmd, *gatewaytest.LogBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	stderr := &gatewaytest.LogBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "praxa-mcp-test", Version: "0"}, opts).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return cs, cmd, stderr
}

// stdioDrive lists the tools, reads home, starts deploy_pipeline and follows
// its run_lint link verbatim. It returns the started workflow's id.
func stdioDrive(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	ctx := context.Background()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("stdio protocol %s, want 2026-07-28", v)
	}
	tools, err := cs.ListTools(ctx, nil)
	must(t, err, "tools/list")
	if len(tools.Tools) != 14 {
		t.Errorf("tools/list: %d tools, want 14", len(tools.Tools))
	}
	callOK := func(tool string, args any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		must(t, err, "%s", tool)
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("%s: %s", tool, text)
		}
		var body map[string]any
		must(t, json.Unmarshal([]byte(text), &body), "%s answer", tool)
		return body
	}
	callOK(contracts.ToolPraxecQuery, map[string]any{})
	started := callOK(contracts.ToolPraxecCommand, map[string]any{"definitionId": "deploy_pipeline"})
	for _, l := range started["links"].([]any) {
		l := l.(map[string]any)
		if l["rel"] == "run_lint" {
			next := callOK(l["method"].(string), l["args"])
			if s := next["workflow"].(map[string]any)["state"]; s != "test" {
				t.Errorf("after run_lint: state %v", s)
			}
		}
	}
	// A refusal is a tool error, and the server goes on.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolSubmitIntent, Arguments: map[string]any{"intent": "x"}})
	must(t, err, "aura_submit_intent without a key")
	if !res.IsError || res.StructuredContent != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"idempotency-key-missing"`) {
		t.Errorf("aura_submit_intent without a key: %+v", res)
	}
	return started["workflow"].(map[string]any)["id"].(string)
}

// assertMissionState reads a mission over REST.
func assertMissionState(t *testing.T, base, tok, id, state string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v8/missions/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	must(t, err, "GET mission")
	defer res.Body.Close()
	var m struct {
		Workflow struct{ State string } `json:"workflow"`
	}
	must(t, json.NewDecoder(res.Body).Decode(&m), "decode mission")
	if res.StatusCode != http.StatusOK || m.Workflow.State != state {
		t.Errorf("GET /v8/missions/%s: %d, state %q, want %q", id, res.StatusCode, m.Workflow.State, state)
	}
}
