package connect_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/connect/connecttest"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/workflow"
)

// TestMCPErrorsCarryNoSecrets: an MCP connection whose URL carries a
// secret in its query and user information, and whose header reads a
// secret from the environment, cannot be reached. Neither the executor's
// error (answered to clients) nor the import problem (logged, audited on
// reload) nor Setup's problems carry the URL's query, user information or
// the header's value; they name the host.
func TestMCPErrorsCarryNoSecrets(t *testing.T) {
	const (
		querySecret  = "QUERYSECRET4242"
		userSecret   = "USERSECRET4242"
		headerSecret = "HEADERSECRET4242"
	)
	conns := map[string]config.Connection{"up": {Kind: "mcp", URL: "http://svc:" + userSecret + "@127.0.0.1:1/mcp?api_key=" + querySecret,
		Headers: map[string]string{"Authorization": "Bearer ${UP_TOKEN}"}}}
	opts := &connect.Options{Logger: quiet(), Getenv: env(map[string]string{"UP_TOKEN": headerSecret})}
	clean := func(what, text string) {
		t.Helper()
		for _, s := range []string{querySecret, userSecret, headerSecret, "api_key", "/mcp"} {
			if strings.Contains(text, s) {
				t.Errorf("%s carries %q: %s", what, s, text)
			}
		}
		if !strings.Contains(text, "127.0.0.1:1") {
			t.Errorf("%s does not name the host: %s", what, text)
		}
	}
	m := connect.New(conns, opts)
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := m.Runners()["mcp"].Run(ctx, config.Executor{Kind: "mcp", Connection: "up", Tool: "x", TimeoutMs: 10000}, workflow.Scope{})
	if outcome(err) != workflow.OutcomeUnavailable {
		t.Fatalf("call: %v", err)
	}
	clean("the executor error", err.Error())

	m2 := connect.New(conns, opts)
	defer m2.Close()
	_, problems := m2.Import(ctx, []config.Import{{Connection: "up"}})
	if len(problems) != 1 {
		t.Fatalf("problems %v", problems)
	}
	clean("the import problem", problems[0])

	// Through the configuration (which refuses user information in a
	// URL), as Setup lists the import at start and on reload.
	cfg, perr := config.Parse("praxec.yaml", []byte(`
connections:
  up:
    kind: mcp
    url: "http://127.0.0.1:1/mcp?api_key=`+querySecret+`"
    headers: {Authorization: "Bearer ${UP_TOKEN}"}
proxy:
  import:
    - connection: up
`))
	if perr != nil {
		t.Fatal(perr)
	}
	m3, _, problems, err := connect.Setup(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m3.Close()
	if len(problems) != 1 {
		t.Fatalf("Setup problems %v", problems)
	}
	clean("Setup's problem", problems[0])
}

// TestMCPOpenBoundedByCallTimeout: a server that never answers the
// handshake (sh -c 'sleep 30') holds no call longer than its timeoutMs:
// the call answers unavailable (nothing was sent) at once, and so does
// the next one while the open goes on; Close ends the open and its child.
func TestMCPOpenBoundedByCallTimeout(t *testing.T) {
	m := connect.New(map[string]config.Connection{"hang": {Kind: "mcp", Command: "/bin/sh", Args: []string{"-c", "sleep 30"}}},
		&connect.Options{Logger: quiet()})
	r := m.Runners()["mcp"]
	x := config.Executor{Kind: "mcp", Connection: "hang", Tool: "echo", TimeoutMs: 300}
	for i := range 2 {
		start := time.Now()
		_, err := r.Run(context.Background(), x, workflow.Scope{})
		if took := time.Since(start); took > 1500*time.Millisecond {
			t.Fatalf("call %d took %s, beyond its 300ms timeout", i+1, took)
		}
		if outcome(err) != workflow.OutcomeUnavailable {
			t.Fatalf("call %d: %v, want unavailable", i+1, err)
		}
	}
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("Close took %s", took)
	}
	if pid := m.ChildPID("hang"); pid != 0 {
		t.Fatalf("a child %d is left after Close", pid)
	}
}

// TestMCPOpenGoesOnForTheNextCall: a server slower to start than a call's
// timeout: the first call gives up unavailable, the open goes on, and the
// session it opened serves the next call (one start in all).
func TestMCPOpenGoesOnForTheNextCall(t *testing.T) {
	node, args := connecttest.Everything(t)
	script := "sleep 1; exec " + node + " " + strings.Join(args, " ")
	m := connect.New(map[string]config.Connection{"slow": {Kind: "mcp", Command: "/bin/sh", Args: []string{"-c", script}}},
		&connect.Options{Logger: quiet()})
	defer m.Close()
	r := m.Runners()["mcp"]
	scope := workflow.Scope{Arguments: map[string]any{"message": "hi"}}
	start := time.Now()
	_, err := r.Run(context.Background(), config.Executor{Kind: "mcp", Connection: "slow", Tool: "echo", TimeoutMs: 200}, scope)
	if outcome(err) != workflow.OutcomeUnavailable || time.Since(start) > time.Second {
		t.Fatalf("first call: %v after %s, want unavailable at its timeout", err, time.Since(start))
	}
	var out map[string]any
	gatewaytest.Poll(30*time.Second, func() bool {
		out, err = r.Run(context.Background(), config.Executor{Kind: "mcp", Connection: "slow", Tool: "echo", TimeoutMs: 20000}, scope)
		return err == nil
	})
	if err != nil || out["text"] != "Echo: hi" {
		t.Fatalf("second call: %v %v", out, err)
	}
	if n := m.Starts("slow"); n != 1 {
		t.Fatalf("%d starts, want the one the first call began", n)
	}
}
