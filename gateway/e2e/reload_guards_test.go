package e2e_test

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/connect/connecttest"
	"github.com/praxa/praxa/gateway/reload"
)

// longJobConfig is a configuration with one cli capability whose
// executor may run timeoutMs, under server.leaseTTL ttl ("" for the
// default 5m).
func longJobConfig(ttl string, timeoutMs int) string {
	var b strings.Builder
	if ttl != "" {
		fmt.Fprintf(&b, "server:\n  leaseTTL: %s\n", ttl)
	}
	fmt.Fprintf(&b, `connections:
  sh: {kind: cli, command: /bin/sh}
proxy:
  expose:
    - name: long.job
      executor: {kind: cli, connection: sh, args: [-c, "true"], timeoutMs: %d}
`, timeoutMs)
	return b.String()
}

// TestReloadRefusesLeaseTTLChange: server.leaseTTL is read at start (the
// leases and their sweeper keep it), so a reload whose file changes it is
// refused, audited as refused, and the running configuration stays;
// otherwise the file's executors would be checked against a TTL the
// gateway does not hold (a 10-minute call under 5-minute leases).
func TestReloadRefusesLeaseTTLChange(t *testing.T) {
	ti := newIssuer(t)
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, longJobConfig("", 60000))
	g, w := fileGateway(t, ti, path)
	operator := mint(t, ti, tenantA, operatorA, string(contracts.ScopeConfigWrite))
	running := g.Switch.Manager()

	const why = "server.leaseTTL is read at start only; restart the gateway to change it"
	writeFile(t, path, longJobConfig("30m", 600000))
	trace := newTraceID()
	res := w.do(t, req{method: http.MethodPost, path: "/v8/config/reload", token: operator, body: map[string]any{}, trace: trace})
	p := wantProblem(t, res, http.StatusBadRequest, contracts.CodeInvalidParams)
	if !strings.Contains(p.Detail, why) && !strings.Contains(string(res.Body), why) {
		t.Errorf("the refusal does not say why: %s", res.Body)
	}
	e := reloadEvent(t, g, tenantA, trace)
	problems, _ := e.Attributes["problems"].([]any)
	if e.Type != "config.reload_refused" || e.Outcome != "refused" || len(problems) != 1 || !strings.Contains(fmt.Sprint(problems[0]), why) {
		t.Errorf("refused reload event %+v", e)
	}
	if g.Switch.Manager() != running {
		t.Error("a refused reload swapped the connections")
	}

	// The same TTL, written out, reloads.
	writeFile(t, path, longJobConfig("5m", 120000))
	if _, err := g.Reload(t); err != nil {
		t.Fatalf("a file with the running lease TTL is refused: %v", err)
	}
}

// importConfig is a configuration importing the tools of an MCP
// connection run as command args.
func importConfig(command string, args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf(reloadGuardsYAML, command, strings.Join(quoted, ", "))
}

// reloadGuardsYAML (testdata/reload-guards.yaml) is the template importConfig fills.
//
//go:embed testdata/reload-guards.yaml
var reloadGuardsYAML string

// TestReloadKeepsImportsOfUnlistedConnection: a reload whose proxy.import
// connection cannot be listed is refused (503, audited with the
// connection's problem) rather than dropping the capabilities imported
// from it, and they stay served. A reload asked for by a request already
// gone (its context cancelled) still lists the imports and swaps them in.
func TestReloadKeepsImportsOfUnlistedConnection(t *testing.T) {
	node, args := connecttest.Everything(t)
	ti := newIssuer(t)
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, importConfig(node, args))
	g, w := fileGateway(t, ti, path)
	tok := mint(t, ti, tenantA, userA)
	operator := mint(t, ti, tenantA, operatorA, string(contracts.ScopeConfigWrite))
	described := func() bool {
		res := w.query(t, tok, map[string]any{"subject": "ev.echo"})
		return res.Status == http.StatusOK
	}
	if !described() {
		t.Fatal("ev.echo is not imported at start")
	}
	capabilities := len(g.Config.Exposed())

	// The same file, reloaded for a client that has hung up: the imports
	// are listed all the same.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := g.Reloader.Reload(ctx, reload.Trigger{Via: reload.ViaEndpoint, TraceID: newTraceID()})
	if err != nil {
		t.Fatalf("reload under a cancelled request: %v", err)
	}
	if res.Capabilities != capabilities || !described() {
		t.Fatalf("reload under a cancelled request serves %d capabilities, want %d", res.Capabilities, capabilities)
	}

	// The connection now cannot start: the reload is refused.
	running := g.Switch.Manager()
	writeFile(t, path, importConfig("/bin/sh", []string{"-c", "exit 1"}))
	trace := newTraceID()
	r := w.do(t, req{method: http.MethodPost, path: "/v8/config/reload", token: operator, body: map[string]any{}, trace: trace})
	p := wantProblem(t, r, http.StatusServiceUnavailable, contracts.CodeUnavailable)
	if len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Detail, "proxy.import[0]") {
		t.Errorf("refusal %s", r.Body)
	}
	e := reloadEvent(t, g, tenantA, trace)
	problems, _ := e.Attributes["problems"].([]any)
	if e.Type != "config.reload_refused" || len(problems) != 1 || !strings.Contains(fmt.Sprint(problems[0]), "proxy.import[0]") {
		t.Errorf("refused reload event %+v", e)
	}
	if g.Switch.Manager() != running || !described() {
		t.Fatal("a refused reload dropped the imported capabilities")
	}
}

// TestReloadAfterCloseRefused: once the Reloader is closed (the first step
// of a shutdown), a reload is refused with ErrReloaderClosed, logged, and
// swaps nothing into the service being closed.
func TestReloadAfterCloseRefused(t *testing.T) {
	ti := newIssuer(t)
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, longJobConfig("", 60000))
	g, w := fileGateway(t, ti, path)
	running := g.Switch.Manager()
	g.Reloader.Close()
	g.Reloader.Close() // safe to repeat
	writeFile(t, path, longJobConfig("", 90000))
	if _, err := g.Reload(t); !errors.Is(err, reload.ErrClosed) {
		t.Fatalf("a reload after Close: %v", err)
	}
	if g.Switch.Manager() != running {
		t.Fatal("a reload after Close swapped the connections")
	}
	if !strings.Contains(g.Logs.String(), "configuration reload refused: the gateway is shutting down") {
		t.Errorf("the refusal is not logged:\n%s", g.Logs.String())
	}
	operator := mint(t, ti, tenantA, operatorA, string(contracts.ScopeConfigWrite))
	wantProblem(t, w.reload(t, operator), http.StatusServiceUnavailable, contracts.CodeUnavailable)
	// The log handler writes the ids, once: the signal's reload its own
	// trace, the endpoint's the request's ids.
	var lines []string
	for _, l := range strings.Split(g.Logs.String(), "\n") {
		if strings.Contains(l, `"msg":"configuration reload refused: the gateway is shutting down"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("refusal lines: %q", lines)
	}
	for i, l := range lines {
		if strings.Count(l, `"trace_id":"`) != 1 || strings.Contains(l, `"trace_id":""`) || strings.Count(l, `"request_id":"`) != i {
			t.Errorf("refusal line %d does not carry its ids once: %s", i, l)
		}
	}
}
