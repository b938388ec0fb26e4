package examples_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestExampleScripts runs the script snippet of docs/connections.md:
// scripts.yaml served by a gateway on a SQLite file, orders.quote started
// over REST as praxec.command, the quote computed by scripts/quote.cel.
func TestExampleScripts(t *testing.T) {
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: "scripts.yaml", ScriptsSearch: true})
	tok := g.Token(t, "acme", "alice", gatewaytest.AllScopes(), nil)
	call := func(path string, args map[string]any) map[string]any {
		t.Helper()
		r := g.REST().Post(t, path, args, gatewaytest.Bearer(tok))
		var out map[string]any // numbers as float64, as the checks compare them
		if err := json.Unmarshal(r.Body, &out); err != nil || r.Status != http.StatusOK {
			t.Fatalf("%s: %s %v", path, r, err)
		}
		return out
	}
	out := call("/v8/praxec/command", map[string]any{"definitionId": "proxy_default", "input": map[string]any{
		"capability": "orders.quote", "discount": 10,
		"items": []any{map[string]any{"sku": "A-1", "price": 4, "qty": 5}, map[string]any{"sku": "B-2", "price": 2.5, "qty": 2}}}})
	run, _ := out["context"].(map[string]any)["lastRun"].(map[string]any)
	q, _ := run["output"].(map[string]any)
	if run["ok"] != true || q["subtotal"] != 25.0 || q["total"] != 22.5 || q["currency"] != "EUR" || len(q["lines"].([]any)) != 2 {
		t.Errorf("quote: %v", out)
	}
	found := call("/v8/praxec/query", map[string]any{"query": "quote", "kind": "script"})
	if items, _ := found["items"].([]any); len(items) != 1 {
		t.Errorf("search kind script: %v", found)
	}
}
