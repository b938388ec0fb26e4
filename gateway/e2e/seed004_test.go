package e2e_test

// Issue 14's item 3: examples/seed-004.yaml (seeds/004's complete
// configuration, with produces: [tests_passed] on run_tests and local
// stand-ins) driven through its story over REST and over MCP: the agent
// searches for "open a pull request", finds safe.create_pr, and is
// refused until run_tests has passed green in the same run; a red run
// leaves it refused. The stand-ins are real: /bin/bash running the fixture
// project's suite (testdata/seed004-project), a go-sdk MCP server over
// stdio (testdata/prserver), a local HTTP server behind the REST
// connection.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// seed004Project copies the fixture project into a directory of its own,
// green, and returns it with a function that turns it red or green.
func seed004Project(t *testing.T) (string, func(green bool)) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"lib.sh", "test.sh"} {
		b, err := os.ReadFile(filepath.Join("testdata", "seed004-project", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good, err := os.ReadFile(filepath.Join(dir, "lib.sh"))
	if err != nil {
		t.Fatal(err)
	}
	set := func(green bool) {
		t.Helper()
		lib := good
		if !green {
			// An off-by-one: the suite fails.
			lib = bytes.Replace(good, []byte("$(($1 + $2))"), []byte("$(($1 + $2 + 1))"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, "lib.sh"), lib, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, set
}

// seed004Gateway starts a gateway on examples/seed-004.yaml, its MCP
// stand-in built from testdata/prserver (rather than go run at every
// start), its REST connection on a local server.
func seed004Gateway(t *testing.T, ti *gatewaytest.Issuer, project string) *gatewaytest.Gateway {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the MCP stand-in: %v", err)
	}
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("the seed's shell, /bin/bash, is missing")
	}
	bin := filepath.Join(t.TempDir(), "prserver")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./testdata/prserver").CombinedOutput(); err != nil {
		t.Fatalf("go build prserver: %v\n%s", err, out)
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"state":"success"}`))
	}))
	t.Cleanup(api.Close)
	t.Setenv("SEED004_PROJECT", project)
	t.Setenv("GITHUB_TOKEN", "ghp_seed004-test")
	return githubGateway(t, ti, "seed-004.yaml", bin, nil, api.URL, nil)
}

// TestSeed004Example: the example is the seed's file but for produces and
// the stand-ins' commands and URLs.
func TestSeed004Example(t *testing.T) {
	ex, err := config.Load(filepath.Join("..", "..", "examples", "seed-004.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if ex.Version != "1.0.0" || ex.Audit.Sink != config.AuditSinkStderr {
		t.Errorf("version %q, audit %+v", ex.Version, ex.Audit)
	}
	var ids []string
	for _, x := range ex.Exposed() {
		ids = append(ids, x.ID)
		switch x.ID {
		case "run_tests":
			if !slices.Equal(x.Produces, []string{"tests_passed"}) {
				t.Errorf("run_tests produces %v", x.Produces)
			}
		case "safe.create_pr":
			if len(x.Guards) != 1 || !slices.Equal(x.Guards[0].Requires, []string{"tests_passed"}) || x.Executor.Tool != "create_pull_request" ||
				x.Executor.Map["base"] != "main" {
				t.Errorf("safe.create_pr: %+v %+v", x.Guards, x.Executor)
			}
		}
	}
	if !slices.Equal(ids, []string{"run_tests", "safe.create_pr"}) {
		t.Errorf("capabilities %v", ids)
	}
}

// TestSeed004OverREST follows the seed's story through praxec.query and
// praxec.command over REST.
func TestSeed004OverREST(t *testing.T) {
	ti := newIssuer(t)
	project, set := seed004Project(t)
	g := seed004Gateway(t, ti, project)
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)

	wantSearchFinds(t, w, tok, "open a pull request", "safe.create_pr")
	pr := map[string]any{"title": "Add the seed's example", "head": "feature/seed-004"}

	// Before any run of the suite: refused, with the start of run_tests.
	input := map[string]any{"capability": "safe.create_pr"}
	for k, v := range pr {
		input[k] = v
	}
	res := w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": input})
	wantProblem(t, res, http.StatusConflict, contracts.CodeGuardRejected)
	if !strings.Contains(string(res.Body), `"capability":"run_tests"`) {
		t.Errorf("the refusal does not link run_tests: %s", res.Body)
	}

	// A red run: recorded as failed, no evidence, the PR still refused.
	set(false)
	res = w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "run_tests"}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	run := res.Object(t)
	wf := str(t, run, "workflow.id")
	if member(t, run, "context.lastRun.ok") != false || len(strs(t, run, "evidence")) != 0 {
		t.Fatalf("a red suite: %s", res.Body)
	}
	submit := func(transition string, arguments map[string]any) *gatewaytest.Response {
		t.Helper()
		return w.fire(t, tok, wf, transition, arguments)
	}
	wantProblem(t, submit("safe.create_pr", pr), http.StatusConflict, contracts.CodeGuardRejected)

	// A green run earns tests_passed; the PR is opened by the MCP server.
	set(true)
	res = submit("run_tests", nil)
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if ev := strs(t, res.Object(t), "evidence"); !slices.Equal(ev, []string{"tests_passed"}) {
		t.Fatalf("a green suite: evidence %v\n%s", ev, res.Body)
	}
	res = submit("safe.create_pr", pr)
	gatewaytest.WantStatus(t, res, http.StatusOK)
	out := res.Object(t)
	for path, want := range map[string]any{"context.lastRun.ok": true, "context.lastRun.output.structuredContent.title": pr["title"],
		"context.lastRun.output.structuredContent.head": pr["head"], "context.lastRun.output.structuredContent.base": "main", "context.lastRun.output.structuredContent.state": "open"} {
		if got := member(t, out, path); got != want {
			t.Errorf("%s = %v, want %v\n%s", path, got, want, res.Body)
		}
	}
}

// TestSeed004OverMCP follows the same story through the praxec.query and
// praxec.command tools on /mcp, with the go-sdk client.
func TestSeed004OverMCP(t *testing.T) {
	ti := newIssuer(t)
	project, set := seed004Project(t)
	g := seed004Gateway(t, ti, project)
	tok := mint(t, ti, tenantA, userA)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tok)
	call := func(tool string, args map[string]any) (map[string]any, string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		_ = d.Decode(&out)
		text, _ := json.Marshal(res.Content)
		return out, string(b) + string(text), res.IsError
	}

	_, body, isErr := call("praxec.query", map[string]any{"query": "open a pull request"})
	if isErr || !strings.Contains(body, `"id":"safe.create_pr"`) {
		t.Fatalf("search did not find safe.create_pr: %s", body)
	}
	pr := map[string]any{"title": "Add the seed's example", "head": "feature/seed-004"}
	_, body, isErr = call("praxec.command", map[string]any{"definitionId": "proxy_default",
		"input": map[string]any{"capability": "safe.create_pr", "title": pr["title"], "head": pr["head"]}})
	if !isErr || !strings.Contains(body, "GUARD_REJECTED") {
		t.Fatalf("before any run: %v %s", isErr, body)
	}

	set(false)
	run, body, isErr := call("praxec.command", map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "run_tests"}})
	if isErr || member(t, run, "context.lastRun.ok") != false {
		t.Fatalf("a red suite: %s", body)
	}
	wf := str(t, run, "workflow.id")
	submit := func(transition string, arguments map[string]any) (map[string]any, string, bool) {
		t.Helper()
		cur, body, isErr := call("praxec.query", map[string]any{"workflowId": wf})
		if isErr {
			t.Fatalf("read the run: %s", body)
		}
		args := map[string]any{"workflowId": wf, "expectedVersion": num(t, cur, "workflow.version"), "transition": transition}
		if arguments != nil {
			args["arguments"] = arguments
		}
		return call("praxec.command", args)
	}
	if _, body, isErr := submit("safe.create_pr", pr); !isErr || !strings.Contains(body, "GUARD_REJECTED") {
		t.Fatalf("after a red run: %v %s", isErr, body)
	}

	set(true)
	out, body, isErr := submit("run_tests", nil)
	if isErr || !slices.Equal(strs(t, out, "evidence"), []string{"tests_passed"}) {
		t.Fatalf("a green suite: %s", body)
	}
	out, body, isErr = submit("safe.create_pr", pr)
	if isErr || member(t, out, "context.lastRun.ok") != true || member(t, out, "context.lastRun.output.structuredContent.base") != "main" ||
		member(t, out, "context.lastRun.output.structuredContent.head") != pr["head"] {
		t.Fatalf("after a green run: %s", body)
	}
}
