package connect_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func runCLI(t *testing.T, c config.Connection, x config.Executor, scope workflow.Scope, vars map[string]string) (map[string]any, error) {
	t.Helper()
	m := connect.New(map[string]config.Connection{"sh": c}, &connect.Options{Logger: quiet(), Getenv: env(vars)})
	t.Cleanup(func() { m.Close() })
	x.Kind, x.Connection = "cli", "sh"
	return m.Runners()["cli"].Run(context.Background(), x, scope)
}

// outcome is the Outcome of err's *workflow.ExecutorError ("" without one).
var outcome = connect.Outcome

func TestCLIArgvEnvAndJSON(t *testing.T) {
	vars := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/x", "SECRET": "s3cr3t", "TOKEN": "tok"}
	c := config.Connection{Kind: "cli", Command: "sh", Env: map[string]string{"MY_TOKEN": "${TOKEN}"}}
	// argv: the resolved argument arrives as one word, never interpreted.
	out, err := runCLI(t, c, config.Executor{Args: []string{"-c", `printf '{"arg":"%s","secret":"%s","token":"%s","home":"%s"}' "$0" "$SECRET" "$MY_TOKEN" "$HOME"`, "$.arguments.word"}},
		workflow.Scope{Arguments: map[string]any{"word": "a b; rm -rf /"}}, vars)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := out["json"].(map[string]any)
	if j["arg"] != "a b; rm -rf /" || j["secret"] != "" || j["token"] != "tok" || j["home"] != "/home/x" || out["exitCode"] != 0 {
		t.Fatalf("output %v", out)
	}
}

func TestCLIShellQuotesResolvedArguments(t *testing.T) {
	c := config.Connection{Kind: "cli", Command: "echo", Shell: true}
	out, err := runCLI(t, c, config.Executor{Args: []string{"one", "$.arguments.x"}}, workflow.Scope{Arguments: map[string]any{"x": "$(echo pwned); echo 'q'"}},
		map[string]string{"PATH": "/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if out["stdout"] != "one $(echo pwned); echo 'q'\n" {
		t.Fatalf("stdout %q", out["stdout"])
	}
}

func TestCLIExitStatus(t *testing.T) {
	c := config.Connection{Kind: "cli", Command: "/bin/sh"}
	_, err := runCLI(t, c, config.Executor{Args: []string{"-c", "echo boom >&2; exit 3"}}, workflow.Scope{}, nil)
	if outcome(err) != workflow.OutcomeFailed || !strings.Contains(err.Error(), "status 3: boom") {
		t.Fatalf("non-zero exit: %v", err)
	}
	no := false
	out, err := runCLI(t, c, config.Executor{Args: []string{"-c", "echo out; echo err >&2; exit 3"}, TreatNonZeroAsFailure: &no}, workflow.Scope{}, nil)
	if err != nil || out["exitCode"] != 3 || out["stdout"] != "out\n" || out["stderr"] != "err\n" {
		t.Fatalf("exit status as data: %v %v", out, err)
	}
}

func TestCLITimeoutKillsAndIsUnknown(t *testing.T) {
	c := config.Connection{Kind: "cli", Command: "/bin/sh"}
	_, err := runCLI(t, c, config.Executor{Args: []string{"-c", "sleep 30 & sleep 30"}, TimeoutMs: 200}, workflow.Scope{}, nil)
	if outcome(err) != workflow.OutcomeUnknown {
		t.Fatalf("timeout: %v", err)
	}
}

func TestCLIMissingProgramIsUnavailable(t *testing.T) {
	_, err := runCLI(t, config.Connection{Kind: "cli", Command: "no-such-program-praxa"}, config.Executor{}, workflow.Scope{}, map[string]string{"PATH": "/usr/bin:/bin"})
	if outcome(err) != workflow.OutcomeUnavailable {
		t.Fatalf("missing program: %v", err)
	}
}

func TestCLIConfinement(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	c := config.Connection{Kind: "cli", Command: "/bin/sh", WorkingDirectory: dir, Confine: &config.Confine{Writable: []string{dir}}}
	// Without bubblewrap the connection is refused, never run unconfined.
	m := connect.New(map[string]config.Connection{"sh": c}, &connect.Options{Logger: quiet(), Bwrap: "no-such-bwrap-praxa"})
	defer m.Close()
	if p := m.Problems()["sh"]; !strings.Contains(p, "bubblewrap") {
		t.Fatalf("problems %v", m.Problems())
	}
	_, err := m.Runners()["cli"].Run(context.Background(), config.Executor{Kind: "cli", Connection: "sh", Args: []string{"-c", "touch " + filepath.Join(other, "x")}}, workflow.Scope{})
	if outcome(err) != workflow.OutcomeUnavailable {
		t.Fatalf("refused connection ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "x")); err == nil {
		t.Fatal("the refused connection wrote a file")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the sandbox itself is not exercised")
	}
	out, err := runCLI(t, c, config.Executor{Args: []string{"-c", "touch inside && touch " + filepath.Join(other, "x") + " 2>/dev/null; echo $?"}}, workflow.Scope{},
		map[string]string{"PATH": "/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "inside")); err != nil {
		t.Errorf("no write in the writable directory: %v %v", err, out)
	}
	if _, err := os.Stat(filepath.Join(other, "x")); err == nil || out["stdout"] == "0\n" {
		t.Errorf("the sandbox let the command write outside its directories: %v", out)
	}
}
