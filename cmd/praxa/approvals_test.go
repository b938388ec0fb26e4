package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// approvalsYAML is the release workflow, whose human step, once approved,
// calls a REST upstream (its base URL is %s).
var approvalsYAML = "connections:\n  api: {kind: rest, baseUrl: %q}\n" + gatewaytest.ReleaseWorkflowYAML

// TestApprovalsCommandRunsTheApprovedMove: praxa approvals approve fires
// the approved move on the configuration's connections, as the REST route
// does: the upstream is called once, the mission moves on, and approving
// again calls nothing.
// approvalsFixture is praxa serve --dev, in process, on approvalsYAML
// whose upstream counts its deploys; tok is the token serve printed.
type approvalsFixture struct {
	app              *app
	cfgPath, dataDir string
	tok              string
	deploys          *atomic.Int32
}

func newApprovalsFixture(t *testing.T) *approvalsFixture {
	t.Helper()
	deploys := new(atomic.Int32)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/deploy" {
			deploys.Add(1)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"deployed":true}`)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(api.Close)
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(approvalsYAML, api.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	s := serveInProcess(t, serveFlags{dataDir: dataDir, config: cfgPath, dev: true, tools: contracts.SetAll})
	return &approvalsFixture{app: s.app, cfgPath: cfgPath, dataDir: dataDir, tok: devToken(t, s.log), deploys: deploys}
}

// praxec calls praxec.TOOL over REST with the fixture's token.
func (f *approvalsFixture) praxec(t *testing.T, tool string, body map[string]any) map[string]any {
	t.Helper()
	r := gatewaytest.NewClient(f.app.url, nil).Post(t, "/v8/praxec/"+tool, body, gatewaytest.Bearer(f.tok))
	if r.Status != http.StatusOK {
		t.Fatalf("praxec.%s %v: %s", tool, body, r)
	}
	return r.Object(t)
}

// askApproval starts a release and asks for its approval, returning the
// workflow and the approval's id; nothing is deployed yet.
func (f *approvalsFixture) askApproval(t *testing.T) (map[string]any, string) {
	t.Helper()
	wf := f.praxec(t, "command", map[string]any{"definitionId": "release"})["workflow"].(map[string]any)
	asked := f.praxec(t, "command", map[string]any{"workflowId": wf["id"], "expectedVersion": wf["version"], "transition": "release"})
	approval, _ := asked["approval"].(map[string]any)
	id, _ := approval["id"].(string)
	if id == "" || f.deploys.Load() != 0 {
		t.Fatalf("asking for the release: %v (upstream called %d times)", asked, f.deploys.Load())
	}
	return wf, id
}

func TestApprovalsCommandRunsTheApprovedMove(t *testing.T) {
	f := newApprovalsFixture(t)
	deploys, dataDir, cfgPath := f.deploys, f.dataDir, f.cfgPath
	wf, id := f.askApproval(t)

	// Without the gateway's configuration the command cannot fire the
	// move, and says what is missing and how to give it (the gateway ran
	// with --dev: that too); nothing is called.
	code, _, stderr := runCommand(t, "approvals", "approve", id, "--tenant", devTenant, "--data-dir", dataDir)
	for _, want := range []string{`waits on a move of workflow "release"`, "No configuration was found (no --config, no PRAXA_CONFIG, no praxec.yaml in ",
		"the built-in defaults", "--config FILE, or PRAXA_CONFIG=FILE, or run it in the directory of that praxec.yaml",
		"The gateway of " + dataDir + " ran with praxa serve --dev"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("approvals approve without the configuration: %d, want %q in\n%s", code, want, stderr)
		}
	}
	// Another file than the gateway's: named.
	other := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(other, []byte("version: \"1.0.0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCommand(t, "approvals", "reject", id, "--tenant", devTenant, "--data-dir", dataDir, "--config", other)
	if code != 1 || !strings.Contains(stderr, "This command loaded "+other+".") {
		t.Errorf("approvals reject with another configuration: %d\n%s", code, stderr)
	}
	if n := deploys.Load(); n != 0 {
		t.Fatalf("a refused approval called the upstream %d times", n)
	}

	// PRAXA_CONFIG names the file, as it does for serve.
	args := []string{"approve", id, "--tenant", devTenant, "--data-dir", dataDir, "--dev"}
	code, stdout, stderr := runCommandEnv(t, map[string]string{configEnv: cfgPath}, append([]string{"approvals"}, args...)...)
	if code != 0 || !strings.Contains(stdout, id+" approved") || !strings.Contains(stdout, "state released") {
		t.Fatalf("approvals approve: %d\n%s%s", code, stdout, stderr)
	}
	if n := deploys.Load(); n != 1 {
		t.Fatalf("the approved move called the upstream %d times, want 1", n)
	}
	code, _, stderr = runCommand(t, append([]string{"approvals"}, append(args, "--config", cfgPath)...)...)
	if code == 0 || !strings.Contains(stderr, "already approved") {
		t.Errorf("approving again: %d %s", code, stderr)
	}
	if n := deploys.Load(); n != 1 {
		t.Errorf("approving again called the upstream (%d calls)", n)
	}
	got := f.praxec(t, "query", map[string]any{"workflowId": wf["id"]})
	if state := got["workflow"].(map[string]any)["state"]; state != "released" {
		t.Errorf("the workflow is in state %v after the approval, want released: %v", state, got)
	}
}
