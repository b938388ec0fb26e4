package connect_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/connect/connecttest"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/workflow"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func everything(t *testing.T) *connect.Manager {
	t.Helper()
	cmd, args := connecttest.Everything(t)
	m := connect.New(map[string]config.Connection{"ev": {Kind: "mcp", Command: cmd, Args: args}}, &connect.Options{Logger: quiet()})
	t.Cleanup(func() { m.Close() })
	return m
}

func TestMCPImportAndCall(t *testing.T) {
	m := everything(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	caps, problems := m.Import(ctx, []config.Import{{Connection: "ev", Prefix: "ev", Tags: []string{"test"}}})
	byID := map[string]config.ExposedCapability{}
	for _, c := range caps {
		byID[c.ID] = c
	}
	echo, ok := byID["ev.echo"]
	if !ok || len(problems) != 0 {
		t.Fatalf("imported %d tools, problems %v", len(caps), problems)
	}
	b, _ := json.Marshal(echo.InputSchema)
	if echo.Description == "" || echo.Executor.Tool != "echo" || !strings.Contains(string(b), `"required":["message"]`) || strings.Contains(string(b), "$schema") ||
		len(echo.Tags) != 1 {
		t.Errorf("ev.echo: %+v %s", echo, b)
	}
	caps, _ = m.Import(ctx, []config.Import{{Connection: "ev", Include: []string{"echo", "get-sum"}, Exclude: []string{"get-sum"}}})
	if len(caps) != 1 || caps[0].ID != "ev.echo" {
		t.Errorf("include/exclude: %+v", caps)
	}
	r := m.Runners()["mcp"]
	out, err := r.Run(ctx, config.Executor{Kind: "mcp", Connection: "ev", Tool: "echo"}, workflow.Scope{Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if out["text"] != "Echo: hi" {
		t.Errorf("echo: %v", out)
	}
}

func TestMCPEnvAllowListAndRestart(t *testing.T) {
	cmd, args := connecttest.Everything(t)
	vars := map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/praxa-test", "GATEWAY_SECRET": "do-not-leak-4242", "NAMED": "passed-on"}
	m := connect.New(map[string]config.Connection{"ev": {Kind: "mcp", Command: cmd, Args: args, Env: map[string]string{"CHILD_VAR": "${NAMED}"}}},
		&connect.Options{Logger: quiet(), Getenv: env(vars)})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := m.Runners()["mcp"]
	out, err := r.Run(ctx, config.Executor{Kind: "mcp", Connection: "ev", Tool: "get-env"}, workflow.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := out["text"].(string)
	if strings.Contains(text, "do-not-leak-4242") || !strings.Contains(text, "passed-on") || !strings.Contains(text, "/home/praxa-test") {
		t.Fatalf("child environment: %s", text)
	}
	// The child dies: the next calls open the connection again.
	pid := m.ChildPID("ev")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var last error
	gatewaytest.Poll(5*time.Second, func() bool {
		_, last = r.Run(ctx, config.Executor{Kind: "mcp", Connection: "ev", Tool: "echo"}, workflow.Scope{Arguments: map[string]any{"message": "again"}})
		return last == nil
	})
	if last != nil || m.Starts("ev") != 2 || m.ChildPID("ev") == pid {
		t.Fatalf("restart: %v, %d starts", last, m.Starts("ev"))
	}
	// A tool error is a failed call with the upstream's answer.
	_, err = r.Run(ctx, config.Executor{Kind: "mcp", Connection: "ev", Tool: "no-such-tool"}, workflow.Scope{})
	if outcome(err) != workflow.OutcomeFailed {
		t.Fatalf("unknown tool: %v", err)
	}
}
