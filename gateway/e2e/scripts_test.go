package e2e_test

// Script executors and script subjects: CEL files of scripts.dir run as a
// move's work, searched with kind script behind --enable-scripts-search,
// described in the flat guidance shape.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

const quoteScript = `// Quote an order: the total of its items, less the customer's discount.
// The discount is a percentage the order was opened with.
// tags: pricing, quote
{
  "total": sum(arguments.items.map(i, double(i.price) * double(i.qty)))
           * (100.0 - (has(input.discount) ? double(input.discount) : 0.0)) / 100.0,
  "lines": arguments.items.size(),
  "currency": has(context.currency) ? context.currency : "EUR",
}
`

// A script that walks its items squared, building a string for each pair:
// over a hundred items and a long label it exceeds the default cost
// budget, which charges each string by its size, within a few hundred
// steps.
const squareScript = `// Label the pairs of items.
{"pairs": arguments.items.map(i, arguments.items.map(j, arguments.label + arguments.label).size()).size()}
`

const scriptsConfig = `scripts: {dir: scripts}
workflows:
  order:
    version: 1
    title: Order
    initial: open
    states:
      open: {}
      quoted: {}
      done: {terminal: true}
    transitions:
      - name: set_currency
        from: open
        to: open
        set: {currency: "$.arguments.currency"}
      - name: quote
        from: open
        to: quoted
        executor: {kind: script, script: quote}
        set: {total: "$.output.total", lines: "$.output.lines"}
        produces: [quoted]
      - name: pairs
        from: open
        to: quoted
        executor: {kind: script, script: pricing.pairs, timeoutMs: 10000}
        set: {pairs: "$.output.pairs"}
      - {name: close, from: quoted, to: done}
proxy:
  expose:
    - name: orders.quote
      description: Quote an order.
      executor: {kind: script, script: quote}
`

// scriptsGateway starts a gateway on a configuration file with the
// scripts above, script search on or off; dir holds the file and the
// scripts.
func scriptsGateway(t *testing.T, ti *gatewaytest.Issuer, search bool) (g *gatewaytest.Gateway, w *gw, dir string) {
	t.Helper()
	dir = t.TempDir()
	for name, text := range map[string]string{"scripts/quote.cel": quoteScript, "scripts/pricing/pairs.cel": squareScript,
		"praxec.yaml": scriptsConfig} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, text)
	}
	g = gatewaytest.New(t, &gatewaytest.Options{
		Issuer:        ti,
		ConfigFile:    filepath.Join(dir, "praxec.yaml"),
		ScriptsSearch: search,
		Edit:          func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	return g, wrapGateway(g), dir
}

// TestScriptExecutorMission runs a real script file as the work of a
// mission's move, over the in-process service and a SQLite file: the
// output lands in the context through set, the evidence is produced, and
// a script that exceeds its cost budget fails the move with
// upstream-failed and changes nothing (the same version moves after).
func TestScriptExecutorMission(t *testing.T) {
	ti := newIssuer(t)
	_, w, _ := scriptsGateway(t, ti, false)
	tok := mint(t, ti, tenantA, userA)

	res := w.command(t, tok, map[string]any{"definitionId": "order", "input": map[string]any{"discount": 10}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	wf := str(t, res.Object(t), "workflow.id")
	res = w.command(t, tok, map[string]any{"workflowId": wf, "expectedVersion": 1, "transition": "set_currency", "arguments": map[string]any{"currency": "EUR"}})
	gatewaytest.WantStatus(t, res, http.StatusOK)

	// Over its budget: 100 × 100 strings of 10,000 bytes.
	items := make([]any, 100)
	for i := range items {
		items[i] = i
	}
	res = w.command(t, tok, map[string]any{"workflowId": wf, "expectedVersion": 2, "transition": "pairs",
		"arguments": map[string]any{"items": items, "label": strings.Repeat("x", 5000)}})
	if p := wantProblem(t, res, http.StatusBadGateway, contracts.CodeUpstreamFailed); !strings.Contains(p.Detail, "script pricing.pairs: exceeded its cost budget of 1000000") ||
		!strings.Contains(p.Hint, "exceeded a limit") {
		t.Errorf("over budget: %s", res.Body)
	}
	if !strings.Contains(string(res.Body), `"subject":"pricing.pairs"`) {
		t.Errorf("the refusal has no link to the script: %s", res.Body)
	}
	get := w.query(t, tok, map[string]any{"workflowId": wf})
	gatewaytest.WantStatus(t, get, http.StatusOK)
	if g := get.Object(t); str(t, g, "workflow.state") != "open" || num(t, g, "workflow.version") != 2 {
		t.Fatalf("the failed move changed the mission: %s", get.Body)
	}

	// The same version moves with a script that succeeds.
	res = w.command(t, tok, map[string]any{"workflowId": wf, "expectedVersion": 2, "transition": "quote",
		"arguments": map[string]any{"items": []any{map[string]any{"price": 2.5, "qty": 4}, map[string]any{"price": 5, "qty": 1}}}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	get = w.query(t, tok, map[string]any{"workflowId": wf})
	g := get.Object(t)
	if str(t, g, "workflow.state") != "quoted" || member(t, g, "context.total") != json.Number("13.5") ||
		member(t, g, "context.lines") != json.Number("2") || !slices.Contains(strs(t, g, "evidence"), "quoted") {
		t.Errorf("after quote: %s", get.Body)
	}

	// A proxy run whose script fails starts nothing: no run, no lastRun.
	res = w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "orders.quote", "items": "none"}})
	wantProblem(t, res, http.StatusBadGateway, contracts.CodeUpstreamFailed)
	res = w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "orders.quote",
		"items": []any{map[string]any{"price": 1, "qty": 3}}}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if out := res.Object(t); member(t, out, "context.lastRun.ok") != true || member(t, out, "context.lastRun.output.lines") != json.Number("1") {
		t.Errorf("proxy run: %s", res.Body)
	}
}

// TestScriptsSearchAndDescribe: kind script answers only with
// --enable-scripts-search; describe answers the flat guidance shape with
// the script's source as its body.
func TestScriptsSearchAndDescribe(t *testing.T) {
	ti := newIssuer(t)
	tok := mint(t, ti, tenantA, userA)
	_, off, _ := scriptsGateway(t, ti, false)
	if r := off.query(t, tok, map[string]any{"query": "quote", "kind": "script"}); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "INVALID_PARAMS") ||
		!strings.Contains(string(r.Body), "--enable-scripts-search") {
		t.Errorf("kind script without the flag: %d %s", r.Status, r.Body)
	}
	if ids := itemIDs(t, off.query(t, tok, map[string]any{"query": "quote"})); slices.Contains(ids, "quote") || !slices.Contains(ids, "orders.quote") {
		t.Errorf("a search of every kind without the flag: %v", ids)
	}

	_, on, _ := scriptsGateway(t, ti, true)
	r := on.query(t, tok, map[string]any{"query": "quote", "kind": "script"})
	if ids := itemIDs(t, r); !slices.Equal(ids, []string{"quote"}) {
		t.Fatalf("kind script: %v (%s)", ids, r.Body)
	}
	it := r.Object(t)["items"].([]any)[0].(map[string]any)["item"].(map[string]any)
	l := findLink(t, linksOf(t, it), "describe")
	if it["kind"] != "script" || it["title"] != "Quote an order: the total of its items, less the customer's discount." ||
		l.Method != contracts.ToolPraxecQuery || l.Args["subject"] != "quote" {
		t.Errorf("script item: %v", it)
	}

	for _, g := range []*gw{off, on} {
		d := g.query(t, tok, map[string]any{"subject": "quote"})
		gatewaytest.WantStatus(t, d, http.StatusOK)
		body := d.Object(t)
		keys := make([]string, 0, len(body))
		for k := range body {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"body", "kind", "links", "subject", "verb"}) || body["kind"] != "script" || body["subject"] != "quote" ||
			body["verb"] != "describe" || body["body"] != quoteScript {
			t.Errorf("describe: %s", d.Body)
		}
		findLink(t, linksOf(t, body), "home")
	}
}

// TestScriptsReload: a reload swaps in the scripts of the directory as
// they are now; one whose script does not compile is refused with the
// script's file:line:column, and the running scripts stay.
func TestScriptsReload(t *testing.T) {
	ti := newIssuer(t)
	g, w, dir := scriptsGateway(t, ti, false)
	tok := mint(t, ti, tenantA, userA)
	quote := func() any {
		t.Helper()
		res := w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "orders.quote",
			"items": []any{map[string]any{"price": 2, "qty": 3}}}})
		gatewaytest.WantStatus(t, res, http.StatusOK)
		return member(t, res.Object(t), "context.lastRun.output.total")
	}
	if got := quote(); got != json.Number("6") {
		t.Fatalf("total before the reload: %v", got)
	}
	file := filepath.Join(dir, "scripts", "quote.cel")
	writeFile(t, file, `{"total": sum(arguments.items.map(i, i.price * i.qty)) * 2}`)
	if _, err := g.Reload(t); err != nil {
		t.Fatal(err)
	}
	if got := quote(); got != json.Number("12") {
		t.Errorf("total after the reload: %v", got)
	}
	writeFile(t, file, "{\"total\": 1 +}")
	_, err := g.Reload(t)
	if want := filepath.ToSlash(filepath.Join(dir, "scripts")) + "/quote.cel:1:14: Syntax error"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("reload of a broken script = %v, want %s…", err, want)
	}
	if got := quote(); got != json.Number("12") {
		t.Errorf("total after a refused reload: %v", got)
	}
}
