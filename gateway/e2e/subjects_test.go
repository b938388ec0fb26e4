package e2e_test

// SUBJECT_NEEDS_DEFINITION end to end: examples/praxec.yaml declares
// guarded_merge's topic field a lexicon subject, so a start or submit
// naming an unknown topic pauses and answers the interaction of seeds/000.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
)

// subjectsGateway starts a gateway over the examples, with lexicon writes
// enabled (serve --lexicon-writes) when writes, and returns it, its issuer
// and a token of userA at tenantA.
func subjectsGateway(t *testing.T, writes bool) (*gw, *gatewaytest.Issuer, string) {
	t.Helper()
	ti := newIssuer(t)
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:        ti,
		LexiconWrites: writes,
		Edit:          func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	return wrapGateway(g), ti, mint(t, ti, tenantA, userA)
}

// pakCommand is the praxec.command that starts guarded_merge on the topic
// evidence-pak, a subject the lexicon does not know: the command pauses on it.
func pakCommand() map[string]any {
	return map[string]any{"definitionId": "guarded_merge", "input": map[string]any{"topic": "evidence-pak"}}
}

// pendingRows lists the tenant's commands paused on subject.
func pendingRows(t *testing.T, g *gw, tenant, subject string) []store.PendingSubject {
	t.Helper()
	var rows []store.PendingSubject
	if err := g.store.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		rows, err = tx.ListPendingSubjects(ctx, tenant, config.TermKey(subject))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}

// jsonValue round-trips v through JSON, numbers as json.Number, for
// comparison with a decoded answer.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := gatewaytest.DecodeJSON(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (g *gw) commandKeyed(t *testing.T, token, key string, args map[string]any) *gatewaytest.Response {
	t.Helper()
	return g.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: args, token: token, key: key})
}

// TestSubjectNeedsDefinitionShape: an unknown topic answers 200 with the
// exact seeds/000 interaction; nothing starts, the pause is stored and
// audited.
func TestSubjectNeedsDefinitionShape(t *testing.T) {
	g, _, tok := subjectsGateway(t, true)
	trace := newTraceID()
	args := pakCommand()
	res := g.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: args, token: tok, trace: trace})
	if res.Status != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d (%s): %s", res.Status, res.Header.Get("Content-Type"), res.Body)
	}
	want := jsonValue(t, map[string]any{
		"interaction": map[string]any{
			"kind":            "SUBJECT_NEEDS_DEFINITION",
			"unknown_subject": "evidence-pak",
			"context":         map[string]any{"encountered_in": "workflow:guarded_merge state:open", "bounded_context": "swe-agent"},
			"candidates": []any{map[string]any{"term": "evidence-pack", "distance": 1, "match_kind": "fuzzy_close",
				"definition_preview": "A structured set of artefacts that justify a decision."}},
		},
		"queued_command": map[string]any{"method": "praxec.command", "args": args},
		"links": []any{
			map[string]any{"rel": "link_as_alias", "method": "praxec.command",
				"args": map[string]any{"subject": "lexicon:evidence-pack", "definition": map[string]any{"aliases_add": []any{"evidence-pak"}}},
				"hint": "Use this if 'evidence-pak' is a synonym for 'evidence-pack'."},
			map[string]any{"rel": "define_new", "method": "praxec.command",
				"args": map[string]any{"subject": "lexicon:evidence-pak", "definition": map[string]any{"definition_short": "<fill in>", "boundedContext": "swe-agent"}},
				"hint": "Use this if 'evidence-pak' is a genuinely new concept."},
			map[string]any{"rel": "cancel", "method": "praxec.command",
				"args": map[string]any{"intent": "cancel_pending_subject", "unknown_subject": "evidence-pak"},
				"hint": "Abandon the original command — the subject was a mistake."},
		},
	})
	if got := jsonValue(t, res.Object(t)); !reflect.DeepEqual(got, want) {
		gb, _ := json.MarshalIndent(got, "", "  ")
		wb, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("interaction:\n%s\nwant:\n%s", gb, wb)
	}
	if rows := pendingRows(t, g, tenantA, "evidence-pak"); len(rows) != 1 || rows[0].CreatedBy != userA {
		t.Errorf("pending rows = %+v, want one by %s", rows, userA)
	}
	// Another tenant sees no pause of acme's.
	if rows := pendingRows(t, g, tenantB, "evidence-pak"); len(rows) != 0 {
		t.Errorf("tenant %s sees %+v", tenantB, rows)
	}
	// The pause is audited on the call's trace.
	var tr *gatewaytest.Response
	if !gatewaytest.Poll(5*time.Second, func() bool {
		tr = g.trace(t, tok, trace)
		return tr.Status == http.StatusOK && strings.Contains(string(tr.Body), "subject.needs_definition")
	}) {
		t.Fatalf("trace has no subject.needs_definition: %d %s", tr.Status, tr.Body)
	}
	// A known topic (a ref counts) starts at once.
	ok := g.command(t, tok, map[string]any{"definitionId": "guarded_merge", "input": map[string]any{"topic": "Evidence  Pack"}})
	if ok.Status != http.StatusOK || ok.Object(t)["workflow"] == nil {
		t.Fatalf("known topic: %d %s", ok.Status, ok.Body)
	}
}

// TestSubjectAliasThenRetry: the interaction consumes no idempotency key;
// after link_as_alias the queued command, sent again with the same key,
// starts the workflow, drops the pause, and is then replayed by that key.
func TestSubjectAliasThenRetry(t *testing.T) {
	g, _, tok := subjectsGateway(t, true)
	key := newKey()
	args := pakCommand()
	first := g.commandKeyed(t, tok, key, args)
	body := first.Object(t)
	if first.Status != http.StatusOK || body["interaction"] == nil {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	// The same key again, before anything changed: the same interaction,
	// not a replay.
	again := g.commandKeyed(t, tok, key, args)
	if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "" || again.Object(t)["interaction"] == nil {
		t.Fatalf("again: %d %v %s", again.Status, again.Header, again.Body)
	}
	if rows := pendingRows(t, g, tenantA, "evidence-pak"); len(rows) != 1 {
		t.Fatalf("pausing one command twice stored %d rows", len(rows))
	}
	alias := findLink(t, linksOf(t, body), "link_as_alias")
	def := g.command(t, tok, alias.Args)
	if def.Status != http.StatusOK || !strings.Contains(string(def.Body), `"evidence-pak"`) {
		t.Fatalf("link_as_alias: %d %s", def.Status, def.Body)
	}
	queued := body["queued_command"].(map[string]any)
	retry := g.commandKeyed(t, tok, key, queued["args"].(map[string]any))
	rb := retry.Object(t)
	if retry.Status != http.StatusOK || rb["interaction"] != nil || rb["result"].(map[string]any)["status"] != "started" {
		t.Fatalf("retry: %d %s", retry.Status, retry.Body)
	}
	if rows := pendingRows(t, g, tenantA, "evidence-pak"); len(rows) != 0 {
		t.Errorf("the completed command is still pending: %+v", rows)
	}
	replay := g.commandKeyed(t, tok, key, args)
	if replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) != string(retry.Body) {
		t.Errorf("the key did not replay the start: %d %v %s", replay.Status, replay.Header, replay.Body)
	}
}

// TestSubjectDefineNewThenRetry: a submit's argument names an unknown
// subject with no candidate; define_new (filled in) then the queued submit
// fires the transition.
func TestSubjectDefineNewThenRetry(t *testing.T) {
	g, _, tok := subjectsGateway(t, true)
	start := g.command(t, tok, map[string]any{"definitionId": "guarded_merge"})
	if start.Status != http.StatusOK {
		t.Fatalf("start: %d %s", start.Status, start.Body)
	}
	run := findLink(t, linksOf(t, start.Object(t)), "run_tests")
	submit := run.Args
	submit["arguments"] = map[string]any{"topic": "flux capacitor"}
	res := g.command(t, tok, submit)
	body := res.Object(t)
	in, _ := body["interaction"].(map[string]any)
	if res.Status != http.StatusOK || in == nil {
		t.Fatalf("submit: %d %s", res.Status, res.Body)
	}
	ctxm := in["context"].(map[string]any)
	if ctxm["encountered_in"] != "workflow:guarded_merge state:open transition:run_tests" || ctxm["bounded_context"] != nil {
		t.Errorf("context = %v", ctxm)
	}
	if c, _ := in["candidates"].([]any); c == nil || len(c) != 0 {
		t.Errorf("candidates = %v, want []", in["candidates"])
	}
	links := linksOf(t, body)
	if len(links) != 2 || links[0].Rel != "define_new" || links[1].Rel != "cancel" {
		t.Fatalf("links = %+v, want define_new and cancel", links)
	}
	define := links[0].Args
	define["definition"] = map[string]any{"definition_short": "The part that makes time travel possible.", "boundedContext": "fiction"}
	if d := g.command(t, tok, define); d.Status != http.StatusOK || d.Object(t)["persisted_to"] != "overlay" {
		t.Fatalf("define_new: %d %s", d.Status, d.Body)
	}
	retry := g.command(t, tok, body["queued_command"].(map[string]any)["args"].(map[string]any))
	rb := retry.Object(t)
	if retry.Status != http.StatusOK || rb["workflow"].(map[string]any)["state"] != "tested" {
		t.Fatalf("retry: %d %s", retry.Status, retry.Body)
	}
	if rows := pendingRows(t, g, tenantA, "flux capacitor"); len(rows) != 0 {
		t.Errorf("still pending: %+v", rows)
	}
	// A stale submit naming an unknown subject answers VERSION_CONFLICT,
	// not the interaction.
	stale := g.command(t, tok, map[string]any{"workflowId": submit["workflowId"], "expectedVersion": submit["expectedVersion"],
		"transition": "merge", "arguments": map[string]any{"topic": "nothing known"}})
	if stale.Status != http.StatusConflict {
		t.Errorf("stale submit: %d %s", stale.Status, stale.Body)
	}
}

// TestSubjectCancel: the cancel link drops the pause (audited); a second
// cancel finds nothing to drop. Without lexicon writes only cancel is
// offered.
func TestSubjectCancel(t *testing.T) {
	g, ti, tok := subjectsGateway(t, false)
	res := g.command(t, tok, pakCommand())
	body := res.Object(t)
	links := linksOf(t, body)
	if res.Status != http.StatusOK || len(links) != 1 || links[0].Rel != "cancel" {
		t.Fatalf("writes disabled: %d %s", res.Status, res.Body)
	}
	// Scope: cancel needs missions:write.
	if r := g.command(t, mint(t, ti, tenantA, userA, "capabilities:read"), links[0].Args); r.Status != http.StatusForbidden {
		t.Errorf("cancel without missions:write: %d %s", r.Status, r.Body)
	}
	trace := newTraceID()
	c := g.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: links[0].Args, token: tok, trace: trace})
	want := jsonValue(t, map[string]any{"cancelled": true, "unknown_subject": "evidence-pak", "dropped": 1,
		"links": []any{map[string]any{"rel": "home", "method": "praxec.query", "args": map[string]any{}}}})
	if got := jsonValue(t, c.Object(t)); c.Status != http.StatusOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("cancel: %d %s", c.Status, c.Body)
	}
	if rows := pendingRows(t, g, tenantA, "evidence-pak"); len(rows) != 0 {
		t.Errorf("still pending: %+v", rows)
	}
	if tr := g.trace(t, tok, trace); !strings.Contains(string(tr.Body), "subject.pending_cancelled") {
		t.Errorf("cancel not audited: %s", tr.Body)
	}
	again := g.command(t, tok, links[0].Args)
	if again.Status != http.StatusOK || again.Object(t)["cancelled"] != false {
		t.Errorf("second cancel: %d %s", again.Status, again.Body)
	}
	bad := g.command(t, tok, map[string]any{"intent": "drop_everything", "unknown_subject": "evidence-pak"})
	if bad.Status != http.StatusBadRequest || !strings.Contains(string(bad.Body), "INVALID_PARAMS") {
		t.Errorf("unknown intent: %d %s", bad.Status, bad.Body)
	}
}

// TestSubjectMCP: over MCP the interaction is a normal result, not isError.
func TestSubjectMCP(t *testing.T) {
	g, _, tok := subjectsGateway(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := gatewaytest.MCPSession(t, g.url+"/mcp", tok)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "praxec.command",
		Arguments: pakCommand()})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("the interaction is an MCP error: %+v", res.Content)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(sc), `"kind":"SUBJECT_NEEDS_DEFINITION"`) || !strings.Contains(string(sc), `"queued_command"`) {
		t.Errorf("structured content: %s", sc)
	}
}

// TestPendingDefinition: an unknown subject that paused a command is a
// placeholder term in state PENDING_DEFINITION (seeds/000): a lexicon
// lookup and search of the tenant show it, with how many commands wait on
// it and the links that resolve it; another tenant sees nothing of it.
// define_new resolves it (the lookup shows the definition) and the original
// command retried proceeds; cancel drops another placeholder.
func TestPendingDefinition(t *testing.T) {
	g, ti, tok := subjectsGateway(t, true)
	lookup := func(tok, term string) map[string]any {
		t.Helper()
		r := g.query(t, tok, map[string]any{"subject": "lexicon:" + term})
		if r.Status != http.StatusOK {
			t.Fatalf("lookup %s: %d %s", term, r.Status, r.Body)
		}
		return r.Object(t)
	}
	start := map[string]any{"definitionId": "guarded_merge", "input": map[string]any{"topic": "warp core"}}
	paused := g.command(t, tok, start)
	if paused.Status != http.StatusOK || paused.Object(t)["interaction"] == nil {
		t.Fatalf("start: %d %s", paused.Status, paused.Body)
	}
	g.command(t, tok, map[string]any{"definitionId": "guarded_merge", "runId": "pd-2", "input": map[string]any{"topic": "warp core"}})

	got := lookup(tok, "warp core")
	pending, _ := got["pending"].(map[string]any)
	if got["state"] != "PENDING_DEFINITION" || got["entry"] != nil || pending == nil || fmt.Sprint(pending["queuedCommands"]) != "2" {
		t.Fatalf("lookup of the placeholder: %v", got)
	}
	rels := map[string]link{}
	for _, l := range linksOf(t, got) {
		rels[l.Rel] = l
	}
	if _, ok := rels["define_new"]; !ok {
		t.Fatalf("the placeholder does not link define_new: %v", got["links"])
	}
	if _, ok := rels["cancel"]; !ok {
		t.Fatalf("the placeholder does not link cancel: %v", got["links"])
	}
	search := g.query(t, tok, map[string]any{"query": "warp", "kind": "lexicon"}).Object(t)
	if ps, _ := search["pending"].([]any); len(ps) != 1 || ps[0].(map[string]any)["term"] != "warp core" {
		t.Errorf("search: %v", search["pending"])
	}
	other := mint(t, ti, tenantB, userB)
	if got := lookup(other, "warp core"); got["state"] != nil || got["pending"] != nil {
		t.Errorf("another tenant sees the placeholder: %v", got)
	}

	define := rels["define_new"].Args
	define["definition"] = map[string]any{"definition_short": "What moves the ship."}
	if d := g.command(t, tok, define); d.Status != http.StatusOK {
		t.Fatalf("define_new: %d %s", d.Status, d.Body)
	}
	if got := lookup(tok, "warp core"); got["state"] != nil || got["entry"] == nil {
		t.Errorf("after define_new: %v", got)
	}
	if retry := g.command(t, tok, start); retry.Status != http.StatusOK || retry.Object(t)["workflow"] == nil {
		t.Errorf("the original command retried: %d %s", retry.Status, retry.Body)
	}

	// cancel drops a placeholder.
	g.command(t, tok, map[string]any{"definitionId": "guarded_merge", "input": map[string]any{"topic": "tachyon burst"}})
	cancel := linksOf(t, lookup(tok, "tachyon burst"))
	for _, l := range cancel {
		if l.Rel == "cancel" {
			if c := g.command(t, tok, l.Args); c.Status != http.StatusOK || c.Object(t)["cancelled"] != true {
				t.Fatalf("cancel: %d %s", c.Status, c.Body)
			}
		}
	}
	if got := lookup(tok, "tachyon burst"); got["state"] != nil {
		t.Errorf("after cancel: %v", got)
	}
}
