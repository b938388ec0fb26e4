package e2e_test

// The done-when of issue 8: examples/connections.yaml (seeds/004's
// "putting it together") driven end to end against real upstreams: npm's
// @modelcontextprotocol/server-everything over stdio as the MCP
// connection, /bin/sh's test -f as the suite whose exit status decides
// tests_passed, and an httptest REST API. The guarded move is refused
// before the test move and accepted after it.

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect/connecttest"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// secretToken is the REST connection's ${GITHUB_TOKEN}: it must reach the
// upstream and appear in no answer and no log line.
const secretToken = "ghp_e2e-secret-value-0123456789"

// connectionsGateway starts a gateway on examples/connections.yaml with
// the MCP server installed locally, the REST base URL on api, and the
// suite's marker at marker.
func connectionsGateway(t *testing.T, ti *gatewaytest.Issuer, api, marker string) *gatewaytest.Gateway {
	t.Helper()
	node, args := connecttest.Everything(t)
	t.Setenv("PRAXA_SUITE_MARKER", marker)
	t.Setenv("GITHUB_TOKEN", secretToken)
	return githubGateway(t, ti, "connections.yaml", node, args, api, nil)
}

// statusAPI is the REST upstream: GitHub's combined commit status.
func statusAPI(t *testing.T, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+secretToken {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/repos/praxa/gateway/commits/main/status" || r.URL.Query().Get("per_page") != "1" {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"state":"success","sha":"abc123","total_count":1}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConnectionsPuttingItTogether(t *testing.T) {
	ti := newIssuer(t)
	var apiCalls atomic.Int32
	api := statusAPI(t, &apiCalls)
	marker := filepath.Join(t.TempDir(), "suite-green")
	g := connectionsGateway(t, ti, api.URL, marker)
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)

	// Search finds the guarded move; describe hands out its start link.
	wantSearchFinds(t, w, tok, "open a pull request", "safe.create_pr")
	res := w.query(t, tok, map[string]any{"subject": "safe.create_pr"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	desc := res.Object(t)
	start := linksOf(t, member(t, desc, "item").(map[string]any))[0]
	if start.Args["definitionId"] != "proxy_default" {
		t.Fatalf("describe start link: %+v", start)
	}

	// 1. The guarded move first: refused, with a link to the move that
	// produces the evidence.
	args := map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "safe.create_pr", "title": "Add connections", "head": "feature/connections"}}
	res = w.command(t, tok, args)
	p := wantProblem(t, res, http.StatusConflict, contracts.CodeGuardRejected)
	if !strings.Contains(string(res.Body), `"capability":"run_tests"`) {
		t.Errorf("GUARD_REJECTED links do not start run_tests: %+v\n%s", p, res.Body)
	}

	// 2. run_tests while the suite is red: the move is recorded as failed
	// and produces nothing.
	res = w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "run_tests"}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	run := res.Object(t)
	wf := str(t, run, "workflow.id")
	if ok := member(t, run, "context.lastRun.ok"); ok != false {
		t.Fatalf("a red suite answered ok %v: %s", ok, res.Body)
	}
	if ev := strs(t, run, "evidence"); len(ev) != 0 {
		t.Fatalf("a red suite produced %v", ev)
	}
	if code := member(t, run, "context.lastRun.output.exitCode"); code != json.Number("1") {
		t.Errorf("exit code %v", code)
	}
	// Every capability is a legal move of the run, the guarded one too.
	rels := []string{}
	for _, l := range linksOf(t, run) {
		rels = append(rels, l.Rel)
	}
	for _, want := range []string{"run_tests", "safe.create_pr", "github.commit_status", "ev.echo", "ev.get-sum"} {
		if !slices.Contains(rels, want) {
			t.Errorf("the run's links lack %s: %v", want, rels)
		}
	}

	submit := func(transition string, arguments map[string]any) *gatewaytest.Response {
		t.Helper()
		return w.fire(t, tok, wf, transition, arguments)
	}

	// 3. Still red: the PR is refused on the same run.
	res = submit("safe.create_pr", map[string]any{"title": "Add connections", "head": "feature/connections"})
	wantProblem(t, res, http.StatusConflict, contracts.CodeGuardRejected)

	// 4. The suite turns green; run_tests produces tests_passed.
	if err := os.WriteFile(marker, []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = submit("run_tests", nil)
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if ev := strs(t, res.Object(t), "evidence"); !slices.Equal(ev, []string{"tests_passed"}) {
		t.Fatalf("green suite: evidence %v\n%s", ev, res.Body)
	}

	// 5. Now the PR move goes through to the MCP server.
	res = submit("safe.create_pr", map[string]any{"title": "Add connections", "head": "feature/connections"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	out := res.Object(t)
	if got := member(t, out, "context.lastRun.output.text"); got != "Echo: Add connections" {
		t.Fatalf("create_pr output %v\n%s", got, res.Body)
	}

	// 6. The REST read: path template from the arguments, the token from
	// the environment.
	res = submit("github.commit_status", map[string]any{"owner": "praxa", "repo": "gateway", "ref": "main"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	out = res.Object(t)
	if member(t, out, "context.lastRun.output.status") != json.Number("200") || member(t, out, "context.lastRun.output.body.state") != "success" {
		t.Fatalf("commit status: %s", res.Body)
	}

	// 7. An imported tool, with the upstream's own schema.
	res = submit("ev.get-sum", map[string]any{"a": 2, "b": 3})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if text, _ := member(t, res.Object(t), "context.lastRun.output.text").(string); !strings.Contains(text, "5") {
		t.Errorf("get-sum: %s", res.Body)
	}
	res = submit("ev.get-sum", map[string]any{"a": "two"})
	wantProblem(t, res, http.StatusBadRequest, contracts.CodeInvalidParams)

	// 8. The exit status as data.
	os.Remove(marker)
	res = submit("tests.report", nil)
	gatewaytest.WantStatus(t, res, http.StatusOK)
	out = res.Object(t)
	if member(t, out, "context.lastRun.ok") != true || member(t, out, "context.lastRun.output.exitCode") != json.Number("1") {
		t.Errorf("tests.report: %s", res.Body)
	}

	// 9. The aura surface runs capabilities too; a retry with the same
	// idempotency key replays the answer and does not call again.
	key := newKey()
	create := map[string]any{"goal": "read the commit status", "definitionId": "proxy_default",
		"input": map[string]any{"capability": "github.commit_status", "owner": "praxa", "repo": "gateway", "ref": "main"}}
	sendTwice(t, "the keyed retry", http.StatusCreated, func() *gatewaytest.Response { return w.createMission(t, tok, key, create) })

	// One MCP child served every call; the secret never left the REST call.
	if n := g.Switch.Manager().Starts("github"); n != 1 {
		t.Errorf("the MCP connection was opened %d times, want 1 (held open and reused)", n)
	}
	if apiCalls.Load() != 2 {
		t.Errorf("REST upstream called %d times", apiCalls.Load())
	}
	g.Flush(t)
	for _, ev := range g.Events(t, tenantA, "") {
		if b, _ := json.Marshal(ev); strings.Contains(string(b), secretToken) {
			t.Errorf("an audit event carries the secret: %s", b)
		}
	}
	if strings.Contains(g.Logs.String(), secretToken) {
		t.Error("the logs carry the secret")
	}
}

// TestConnectionsDirectTool: a capability marked exposeDirectly is an MCP
// tool of its own; a call is a one-move run of proxy_default.
func TestConnectionsDirectTool(t *testing.T) {
	ti := newIssuer(t)
	var apiCalls atomic.Int32
	api := statusAPI(t, &apiCalls)
	g := connectionsGateway(t, ti, api.URL, filepath.Join(t.TempDir(), "none"))
	tok := mint(t, ti, tenantA, userA)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tok)
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "github.commit_status") || slices.Contains(names, "run_tests") {
		t.Fatalf("tools/list: %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github.commit_status", Arguments: map[string]any{"owner": "praxa", "repo": "gateway", "ref": "main"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("direct call: %+v", res.Content[0])
	}
	sc, _ := json.Marshal(res.StructuredContent)
	// No guard, no evidence: the light path, which keeps no run.
	if !strings.Contains(string(sc), `"state":"success"`) || res.Meta[mcpWorkflowKey] != nil || res.Meta["io.praxa/links"] == nil {
		t.Errorf("direct call result: %s meta %v", sc, res.Meta)
	}
}

const mcpWorkflowKey = "io.praxa/workflow"

// TestConnectionsOutcomeUnknown: a call that times out after it started
// answers outcome-unknown (504), and a retry with the same idempotency key
// answers from the record: the command does not run twice.
func TestConnectionsOutcomeUnknown(t *testing.T) {
	ti := newIssuer(t)
	var apiCalls atomic.Int32
	api := statusAPI(t, &apiCalls)
	dir := t.TempDir()
	count := filepath.Join(dir, "runs")
	node, args := connecttest.Everything(t)
	t.Setenv("PRAXA_SUITE_MARKER", count)
	g := githubGateway(t, ti, "connections.yaml", node, args, api.URL, func(cfg *config.Config) {
		// Retries and a fallback must not repeat a call whose
		// outcome is unknown: neither runs. The timeout leaves a
		// loaded machine time to start the shell (300ms did not).
		retries := 3
		cfg.Proxy.Expose = append(cfg.Proxy.Expose, config.Exposure{Name: "slow.deploy", ExposeDirectly: true,
			Executor: &config.Executor{Kind: "cli", Connection: "shell", Args: []string{"-c", `echo run >> "$SUITE_MARKER"; sleep 30`}, TimeoutMs: 2000},
			Reliability: &config.Reliability{Retries: &retries, BackoffMs: 1, Fallback: &config.Fallback{Executors: []config.Executor{
				{Kind: "cli", Connection: "shell", Args: []string{"-c", `echo fallback >> "$SUITE_MARKER"`}}}}}})
	})
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)
	key := newKey()
	create := map[string]any{"goal": "deploy", "definitionId": "proxy_default", "input": map[string]any{"capability": "slow.deploy"}}
	res := w.createMission(t, tok, key, create)
	wantProblem(t, res, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	res = w.createMission(t, tok, key, create)
	wantProblem(t, res, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	if res.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was not answered from the record: %v", res.Header)
	}
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "run"); n != 1 {
		t.Errorf("the command ran %d times, want 1", n)
	}
	if strings.Contains(string(b), "fallback") {
		t.Errorf("the fallback ran after an outcome-unknown call: %q", b)
	}

	// The same call as a direct MCP tool, keyless: the light path records
	// nothing a retry could be answered from, so its hint must not invite
	// one.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tok)
	direct, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow.deploy", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := json.Marshal(direct.Content)
	if !direct.IsError || !strings.Contains(string(sc), string(contracts.CodeOutcomeUnknown)) ||
		!strings.Contains(string(sc), "nothing recorded this call") || strings.Contains(string(sc), "answered from the record, not sent again") {
		t.Errorf("keyless direct call's outcome-unknown: %s", sc)
	}
}

// TestConnectionsRetriesRefusals: github.commit_status of
// examples/connections.yaml retries a call the upstream refused before
// acting (503), and the move records what was tried; a capability whose
// connection cannot be reached falls back to one that can. Every upstream
// call is counted: none is repeated after it was answered.
func TestConnectionsRetriesRefusals(t *testing.T) {
	ti := newIssuer(t)
	var apiCalls, refusals atomic.Int32
	status := statusAPI(t, &apiCalls)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refusals.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		status.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(api.Close)
	node, args := connecttest.Everything(t)
	t.Setenv("PRAXA_SUITE_MARKER", filepath.Join(t.TempDir(), "marker"))
	t.Setenv("GITHUB_TOKEN", secretToken)
	g := githubGateway(t, ti, "connections.yaml", node, args, api.URL, func(cfg *config.Config) {
		// A mirror that is down (nothing listens on its port), whose
		// capability falls back to the GitHub API.
		cfg.Connections["mirror_api"] = config.Connection{Kind: "rest", BaseURL: "http://127.0.0.1:1"}
		read := config.Executor{Kind: "rest", Method: "GET", Path: "/repos/{owner}/{repo}/commits/{ref}/status", Query: map[string]any{"per_page": 1}}
		primary, fallback := read, read
		primary.Connection, fallback.Connection = "mirror_api", "github_api"
		cfg.Proxy.Expose = append(cfg.Proxy.Expose, config.Exposure{Name: "mirror.commit_status", Executor: &primary,
			Reliability: &config.Reliability{TimeoutMs: 5000, Fallback: &config.Fallback{Executors: []config.Executor{fallback}}}})
	})
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)
	input := map[string]any{"owner": "praxa", "repo": "gateway", "ref": "main"}
	var traces []string
	for _, tc := range []struct {
		capability string
		// attempts are the connections tried, in order.
		attempts []string
	}{
		{"github.commit_status", []string{"github_api", "github_api"}},
		{"mirror.commit_status", []string{"mirror_api", "mirror_api", "mirror_api", "github_api"}},
	} {
		in := map[string]any{"capability": tc.capability}
		maps.Copy(in, input)
		before := apiCalls.Load()
		trace := newTraceID()
		traces = append(traces, trace)
		res := w.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: map[string]any{"definitionId": "proxy_default", "input": in},
			token: tok, trace: trace})
		gatewaytest.WantStatus(t, res, http.StatusOK)
		out := res.Object(t)
		if member(t, out, "context.lastRun.ok") != true || member(t, out, "context.lastRun.output.body.state") != "success" {
			t.Fatalf("%s: %s", tc.capability, res.Body)
		}
		var tried []string
		for _, a := range member(t, out, "context.lastRun.attempts").([]any) {
			tried = append(tried, a.(map[string]any)["connection"].(string))
		}
		if !slices.Equal(tried, tc.attempts) {
			t.Errorf("%s: attempts %v, want %v", tc.capability, tried, tc.attempts)
		}
		if n := apiCalls.Load() - before; n != 1 {
			t.Errorf("%s: the API answered %d calls, want 1", tc.capability, n)
		}
	}
	if n := refusals.Load(); n != 3 {
		t.Errorf("the API saw %d requests, want 3 (one refused, two answered)", n)
	}
	// The audit of each move lists what was tried.
	for _, trace := range traces {
		found := false
		for _, ev := range g.Events(t, tenantA, trace) {
			if list, _ := ev.Attributes["attempts"].([]any); ev.Type == "transition.fired" && len(list) > 1 {
				found = true
			}
		}
		if !found {
			t.Errorf("trace %s: no transition.fired event lists the attempts", trace)
		}
	}
}
