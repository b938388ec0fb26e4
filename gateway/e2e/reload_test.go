package e2e_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// withWorkflow is the example configuration with w added to its workflows.
func withWorkflow(w string) string {
	return strings.Replace(string(examples.PraxecYAML), "\nworkflows:\n", "\nworkflows:\n"+w, 1)
}

// reloadGateway writes the example configuration to a file of its own and
// starts a gateway on it (the file read again on every reload, as serve
// reads its --config); it returns the file's path.
func reloadGateway(t *testing.T, ti *gatewaytest.Issuer) (string, *gatewaytest.Gateway, *gw) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, string(examples.PraxecYAML))
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer: ti,
		Config: func() (*config.Config, error) { return config.Load(path) },
		Edit: func(cfg *config.Config) {
			cfg.Auth.Resource = resource
			cfg.Skills.Dir = skillsDir // the example's skills, from a file elsewhere
		},
	})
	return path, g, wrapGateway(g)
}

// skillsDir is the example configuration's skills directory.
var skillsDir, _ = filepath.Abs(filepath.Join("..", "..", "examples", "skills"))

// writeFile writes content to path (mode 0600), failing t on an error.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// searchFinds says whether a search for query answers an item with id.
func searchFinds(t *testing.T, w *gw, tok, query, id string) bool {
	t.Helper()
	res := w.query(t, tok, map[string]any{"query": query, "kind": "workflow"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	return strings.Contains(string(res.Body), `"id":"`+id+`"`)
}

func (g *gw) reload(t *testing.T, tok string) *gatewaytest.Response {
	t.Helper()
	return g.do(t, req{method: http.MethodPost, path: "/v8/config/reload", token: tok})
}

func TestReloadConfiguration(t *testing.T) {
	ti := newIssuer(t)
	path, _, w := reloadGateway(t, ti)
	tok := mint(t, ti, tenantA, userA)
	operator := mint(t, ti, tenantA, operatorA, string(contracts.ScopeConfigWrite))

	// A mission started on the first configuration.
	res := w.command(t, tok, map[string]any{"definitionId": "deploy_pipeline", "input": map[string]any{}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	before := res.Object(t)
	beforeID := str(t, before, "workflow.id")
	if searchFinds(t, w, tok, "rotate signing keys", "rotate_keys") {
		t.Fatal("rotate_keys is found before it is configured")
	}

	// The scope is checked: a token without config:write is refused and
	// nothing is read.
	res = w.reload(t, mint(t, ti, tenantA, userA, string(contracts.ScopeMissionsWrite)))
	wantProblem(t, res, http.StatusForbidden, contracts.CodeInsufficientScope)

	// A changed file: the new workflow is found and runs.
	writeFile(t, path, withWorkflow(gatewaytest.RotateKeysWorkflowYAML))
	res = w.do(t, req{method: http.MethodPost, path: "/v8/config/reload", token: operator, body: map[string]any{}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	out := res.Object(t)
	if err := contracts.ValidateEndpointOutput(contracts.EndpointReloadConfig, out); err != nil {
		t.Errorf("reload answer: %v\n%s", err, res.Body)
	}
	if out["reloaded"] != true || out["source"] != path {
		t.Errorf("reload answer %s", res.Body)
	}
	if !searchFinds(t, w, tok, "rotate signing keys", "rotate_keys") {
		t.Fatal("rotate_keys is not found after the reload")
	}
	res = w.command(t, tok, map[string]any{"definitionId": "rotate_keys", "input": map[string]any{}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	rotation := res.Object(t)
	res = w.command(t, tok, map[string]any{"workflowId": str(t, rotation, "workflow.id"), "transition": "rotate",
		"expectedVersion": num(t, rotation, "workflow.version"), "arguments": map[string]any{}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if st := str(t, res.Object(t), "workflow.state"); st != "done" {
		t.Errorf("rotate_keys ended in %s", st)
	}

	// The mission started before the reload moves on: its definition is
	// still configured.
	res = w.command(t, tok, map[string]any{"workflowId": beforeID, "transition": "run_lint",
		"expectedVersion": num(t, before, "workflow.version"), "arguments": map[string]any{}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if st := str(t, res.Object(t), "workflow.state"); st != "test" {
		t.Errorf("deploy_pipeline after run_lint is in %s", st)
	}

	// A bad file is refused with each of its problems, and the running
	// configuration stays.
	bad := withWorkflow(gatewaytest.RotateKeysWorkflowYAML) + "\nsurprise: true\n"
	bad = strings.Replace(bad, "    initial: start\n", "    initial: nowhere\n", 1)
	writeFile(t, path, bad)
	res = w.reload(t, operator)
	p := wantProblem(t, res, http.StatusBadRequest, contracts.CodeInvalidParams)
	if len(p.Errors) < 2 {
		t.Fatalf("a file with two problems answered %d: %s", len(p.Errors), res.Body)
	}
	var details []string
	for _, e := range p.Errors {
		if e.Pointer != "" || !strings.HasPrefix(e.Detail, path+":") {
			t.Errorf("problem %+v does not name the file", e)
		}
		details = append(details, e.Detail)
	}
	all := strings.Join(details, "\n")
	if !strings.Contains(all, ": surprise: ") || !strings.Contains(all, ": workflows.rotate_keys.initial: ") {
		t.Errorf("problems do not name the unknown key and the unknown state:\n%s", all)
	}
	if !searchFinds(t, w, tok, "rotate signing keys", "rotate_keys") {
		t.Fatal("a refused reload dropped the running configuration")
	}
	res = w.command(t, tok, map[string]any{"definitionId": "rotate_keys", "input": map[string]any{}})
	gatewaytest.WantStatus(t, res, http.StatusOK)

	// A reload that drops a workflow: it is no longer found or started,
	// and a mission of it still reads back.
	orphan := res.Object(t)
	writeFile(t, path, string(examples.PraxecYAML))
	gatewaytest.WantStatus(t, w.reload(t, operator), http.StatusOK)
	if searchFinds(t, w, tok, "rotate signing keys", "rotate_keys") {
		t.Error("rotate_keys is still found after a reload dropped it")
	}
	res = w.command(t, tok, map[string]any{"definitionId": "rotate_keys", "input": map[string]any{}})
	if res.Status < 400 || res.Status >= 500 {
		t.Errorf("starting a dropped workflow answered %d: %s", res.Status, res.Body)
	}
	orphanID := str(t, orphan, "workflow.id")
	res = w.query(t, tok, map[string]any{"workflowId": orphanID})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	// Its moves are refused as illegal, not as a failure of the gateway.
	res = w.command(t, tok, map[string]any{"workflowId": orphanID, "transition": "rotate",
		"expectedVersion": num(t, orphan, "workflow.version"), "arguments": map[string]any{}})
	wantProblem(t, res, http.StatusConflict, contracts.CodeInvalidTransition)
}

// TestReloadUnderLoad reloads while missions start and search runs, for
// the race detector: every call answers from one configuration or the
// other.
func TestReloadUnderLoad(t *testing.T) {
	ti := newIssuer(t)
	path, g, w := reloadGateway(t, ti)
	tok := mint(t, ti, tenantA, userA)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := w.send(req{method: http.MethodPost, path: "/v8/praxec/command", token: tok,
					body: map[string]any{"definitionId": "deploy_pipeline", "input": map[string]any{}}})
				if err != nil || res.Status != http.StatusOK {
					t.Errorf("start during reloads: %v %d %s", err, res.Status, res.Body)
					return
				}
				res, err = w.send(req{method: http.MethodPost, path: "/v8/praxec/query", token: tok, body: map[string]any{"query": "deploy"}})
				if err != nil || res.Status != http.StatusOK {
					t.Errorf("search during reloads: %v %d %s", err, res.Status, res.Body)
					return
				}
			}
		})
	}
	for i := range 6 {
		content := string(examples.PraxecYAML)
		if i%2 == 0 {
			content = withWorkflow(gatewaytest.RotateKeysWorkflowYAML)
		}
		writeFile(t, path, content)
		if _, err := g.Reload(t); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}
