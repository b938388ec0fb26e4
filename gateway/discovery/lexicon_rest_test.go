package discovery_test

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

func TestRESTLexiconLookup(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tok := h.token(t, tenantA, userA)
	entry := map[string]any{"definition_short": "A bundle of facts the editor uses.", "bounded_context": "swe-agent", "refs": []any{"evidence pack"}}
	for _, tc := range []struct {
		subject, term string
		entry         any
	}{
		{"lexicon:evidence-pack", "evidence-pack", entry},
		// A ref answers the canonical term and entry, whatever its case.
		{"lexicon:Evidence Pack", "evidence-pack", entry},
		{"lexicon:run", "mission", map[string]any{"definition_short": "One run of a workflow toward a goal.", "bounded_context": "gateway", "aliases": []any{"run"}}},
		// An undefined term: entry is null.
		{"lexicon:evidence-foo", "evidence-foo", nil},
	} {
		got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"subject": tc.subject}))
		e, present := got["entry"]
		if got["term"] != tc.term || !present || !reflect.DeepEqual(e, tc.entry) {
			t.Errorf("%s: term %v entry %v, want %s %v", tc.subject, got["term"], e, tc.term, tc.entry)
		}
		if _, ok := got["links"].([]any); !ok {
			t.Errorf("%s: no links: %v", tc.subject, got)
		}
	}
	problem(t, h.query(t, tok, map[string]any{"subject": "lexicon:  "}), http.StatusBadRequest, contracts.CodeInvalidParams)
}

func TestRESTLexiconSearch(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tok := h.token(t, tenantA, userA)
	got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "evidence", "kind": "lexicon"}))
	want := []any{map[string]any{"term": "evidence-pack", "definition_short": "A bundle of facts the editor uses.",
		"bounded_context": "swe-agent", "refs": []any{"evidence pack"}}}
	if !reflect.DeepEqual(got["hits"], want) {
		t.Errorf("hits %v, want %v", got["hits"], want)
	}
	all := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "", "kind": "lexicon", "limit": 1}))
	if hits := all["hits"].([]any); len(hits) != 1 || hits[0].(map[string]any)["term"] != "evidence-pack" {
		t.Errorf("limited listing %v", hits)
	}
	none := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "kubernetes", "kind": "lexicon"}))
	if hits, isList := none["hits"].([]any); !isList || len(hits) != 0 {
		t.Errorf("no hits must be an empty list: %v", none)
	}
}

// TestRESTLexiconWritesDisabled: by default a define is refused with the
// seed's LEXICON_WRITES_DISABLED and its two links, after the scope check.
func TestRESTLexiconWritesDisabled(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	define := map[string]any{"subject": "lexicon:evidence-pack", "definition": map[string]any{"definition_short": "x"}}
	p := problem(t, h.command(t, h.token(t, tenantA, userA), define), http.StatusForbidden, contracts.CodeLexiconWritesDisabled)
	if p["detail"] != "This runtime does not accept lexicon define commands." ||
		p["hint"] != "Operators add lexicon terms via the `praxec lexicon define` CLI subcommand." {
		t.Errorf("problem %v", p)
	}
	want := jsonOf(t, `[
	  { "rel": "operator_path", "method": "cli",            "args": { "command": "praxec lexicon define <term> <definition>" } },
	  { "rel": "lookup",        "method": "praxec.query", "args": { "subject": "lexicon:<term>" } }
	]`)
	if !reflect.DeepEqual(p["links"], want) {
		t.Errorf("links %v, want the seed's %v", p["links"], want)
	}
	// Without lexicon:write the scope refuses first.
	problem(t, h.command(t, h.token(t, tenantA, userA, everyScopeBut(contracts.ScopeLexiconWrite)...), define),
		http.StatusForbidden, contracts.CodeInsufficientScope)
	// Nothing was written.
	got := ok(t, contracts.ToolPraxecQuery, h.query(t, h.token(t, tenantA, userA), map[string]any{"subject": "lexicon:evidence-pack"}))
	if got["entry"].(map[string]any)["definition_short"] != "A bundle of facts the editor uses." {
		t.Errorf("the entry changed: %v", got)
	}
}

func TestRESTLexiconDefine(t *testing.T) {
	h := newHarness(t, harnessOptions{lexiconWrites: true})
	tok := h.token(t, tenantA, userA)

	t.Run("scope", func(t *testing.T) {
		p := problem(t, h.command(t, h.token(t, tenantA, userA, everyScopeBut(contracts.ScopeLexiconWrite)...),
			map[string]any{"subject": "lexicon:x", "definition": map[string]any{"definition_short": "x"}}),
			http.StatusForbidden, contracts.CodeInsufficientScope)
		if errs := p["errors"].([]any); errs[0].(map[string]any)["detail"] != string(contracts.ScopeLexiconWrite) {
			t.Errorf("problem %v", p)
		}
	})

	t.Run("seed example", func(t *testing.T) {
		// The seeds/000 define request answers the seeds/000 response (plus
		// a lookup link); boundedContext comes back as bounded_context, and
		// the entry's other keys are ignored.
		const trace = "6bf92f3577b34da6a3ce929d0e0e4738"
		r := h.post(t, "/v8/praxec/command", tok, map[string]any{
			"subject": "lexicon:evidence-pack",
			"definition": map[string]any{
				"definition_short": "A structured set of artefacts that justify a decision.",
				"boundedContext":   "swe-agent",
				"refs":             []any{"evidence-packs", "evidence pack"},
				"governance":       "human-only",
				"definition_long":  "ignored",
				"aliases":          []any{"ignored too"},
			},
		}, trace, "")
		got := ok(t, contracts.ToolPraxecCommand, r)
		want := jsonOf(t, `{
		  "term": "evidence-pack",
		  "entry": {
		    "definition_short": "A structured set of artefacts that justify a decision.",
		    "bounded_context": "swe-agent",
		    "refs": ["evidence-packs", "evidence pack"],
		    "governance": "human-only"
		  },
		  "persisted_to": "overlay"
		}`).(map[string]any)
		links := got["links"]
		delete(got, "links")
		if !reflect.DeepEqual(any(got), any(want)) {
			t.Errorf("define answer %v, want the seed's %v", got, want)
		}
		if !reflect.DeepEqual(links, jsonOf(t, `[{"rel":"lookup","method":"praxec.query","args":{"subject":"lexicon:evidence-pack"}}]`)) {
			t.Errorf("links %v", links)
		}
		// Audited in the mutation's transaction, with who defined it.
		var defined int
		for _, ev := range h.events(t, tenantA, trace) {
			if ev.Type == "lexicon.defined" {
				defined++
				if ev.Attributes["term"] != "evidence-pack" || ev.Subject != userA || ev.Outcome != "allowed" {
					t.Errorf("event %+v", ev)
				}
			}
		}
		if defined != 1 {
			t.Errorf("%d lexicon.defined events, want 1", defined)
		}
		// The new ref is live, for every tenant.
		got = ok(t, contracts.ToolPraxecQuery, h.query(t, h.token(t, tenantB, userB), map[string]any{"subject": "lexicon:evidence-packs"}))
		if got["term"] != "evidence-pack" || got["entry"].(map[string]any)["governance"] != "human-only" {
			t.Errorf("lookup after define: %v", got)
		}
	})

	t.Run("define new and alias it", func(t *testing.T) {
		got := ok(t, contracts.ToolPraxecCommand, h.command(t, tok, map[string]any{
			"subject": "lexicon:evidence-foo", "definition": map[string]any{"definition_short": "A new concept."}}))
		if got["term"] != "evidence-foo" || !reflect.DeepEqual(got["entry"], map[string]any{"definition_short": "A new concept."}) {
			t.Errorf("define: %v", got)
		}
		// link_as_alias: aliases_add alone appends to a defined term.
		got = ok(t, contracts.ToolPraxecCommand, h.command(t, tok, map[string]any{
			"subject": "lexicon:mission", "definition": map[string]any{"aliases_add": []any{"quest", "Run"}}}))
		want := map[string]any{"definition_short": "One run of a workflow toward a goal.", "bounded_context": "gateway", "aliases": []any{"run", "quest"}}
		if got["term"] != "mission" || !reflect.DeepEqual(got["entry"], want) {
			t.Errorf("aliases_add: %v, want entry %v", got, want)
		}
		got = ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"subject": "lexicon:QUEST"}))
		if got["term"] != "mission" {
			t.Errorf("lookup of the new alias: %v", got)
		}
		hits := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "quest", "kind": "lexicon"}))["hits"].([]any)
		if len(hits) != 1 || hits[0].(map[string]any)["term"] != "mission" {
			t.Errorf("search of the new alias: %v", hits)
		}
		// A redefinition keeps the aliases gathered.
		got = ok(t, contracts.ToolPraxecCommand, h.command(t, tok, map[string]any{
			"subject": "lexicon:Mission", "definition": map[string]any{"definition_short": "A workflow run."}}))
		if got["term"] != "mission" || !reflect.DeepEqual(got["entry"], map[string]any{"definition_short": "A workflow run.", "aliases": []any{"run", "quest"}}) {
			t.Errorf("redefine: %v", got)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			args    map[string]any
			status  int
			code    contracts.Code
			pointer string
		}{
			{"no definition_short", map[string]any{"subject": "lexicon:x", "definition": map[string]any{"boundedContext": "c"}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/definition/definition_short"},
			{"empty definition_short", map[string]any{"subject": "lexicon:x", "definition": map[string]any{"definition_short": " "}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/definition/definition_short"},
			{"refs not terms", map[string]any{"subject": "lexicon:x", "definition": map[string]any{"definition_short": "x", "refs": []any{"ok", 3}}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/definition/refs/1"},
			{"not a lexicon subject", map[string]any{"subject": "deploy_pipeline", "definition": map[string]any{"definition_short": "x"}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/subject"},
			{"not a term", map[string]any{"subject": "lexicon:-x", "definition": map[string]any{"definition_short": "x"}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/subject"},
			{"a ref naming another term", map[string]any{"subject": "lexicon:y", "definition": map[string]any{"definition_short": "y", "refs": []any{"mission"}}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/definition/refs/0"},
			{"an alias taken by another term", map[string]any{"subject": "lexicon:y", "definition": map[string]any{"aliases_add": []any{"x"}, "definition_short": "y", "refs": []any{"quest"}}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/definition/refs/0"},
			{"an alias naming the term", map[string]any{"subject": "lexicon:mission", "definition": map[string]any{"aliases_add": []any{"MISSION"}}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/definition/aliases_add/0"},
			{"defining an alias", map[string]any{"subject": "lexicon:quest", "definition": map[string]any{"definition_short": "x"}},
				http.StatusBadRequest, contracts.CodeInvalidParams, "/subject"},
			{"aliases for an unknown term", map[string]any{"subject": "lexicon:nobody", "definition": map[string]any{"aliases_add": []any{"nobody-else"}}},
				http.StatusNotFound, contracts.CodeNotFound, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := problem(t, h.command(t, tok, tc.args), tc.status, tc.code)
				if tc.pointer != "" {
					errs, _ := p["errors"].([]any)
					if len(errs) == 0 || errs[0].(map[string]any)["pointer"] != tc.pointer {
						t.Errorf("errors %v, want %s", p["errors"], tc.pointer)
					}
				}
			})
		}
		// None of them wrote anything.
		for _, term := range []string{"x", "y", "nobody"} {
			if got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"subject": "lexicon:" + term})); got["entry"] != nil {
				t.Errorf("%s was defined: %v", term, got)
			}
		}
	})
}

// TestRESTLexiconOverlayPersists: the overlay lives in the store, so a
// restart (or another replica on the same store) answers the defined terms.
func TestRESTLexiconOverlayPersists(t *testing.T) {
	h := newHarness(t, harnessOptions{lexiconWrites: true})
	tok := h.token(t, tenantA, userA)
	ok(t, contracts.ToolPraxecCommand, h.command(t, tok, map[string]any{
		"subject": "lexicon:guardrail", "definition": map[string]any{"definition_short": "A check that stops a move.", "refs": []any{"guard"}}}))
	h.stop()

	again := newHarness(t, harnessOptions{dbPath: h.dbPath, iss: h.iss})
	tok = again.token(t, tenantB, userB)
	got := ok(t, contracts.ToolPraxecQuery, again.query(t, tok, map[string]any{"subject": "lexicon:guard"}))
	if got["term"] != "guardrail" || got["entry"].(map[string]any)["definition_short"] != "A check that stops a move." {
		t.Errorf("after a restart: %v", got)
	}
	hits := ok(t, contracts.ToolPraxecQuery, again.query(t, tok, map[string]any{"query": "guard", "kind": "lexicon"}))["hits"].([]any)
	if len(hits) != 1 || hits[0].(map[string]any)["term"] != "guardrail" {
		t.Errorf("search after a restart: %v", hits)
	}
}

// TestRESTSearchCoversLexicon: a praxec search without kind covers the
// lexicon (seeds/000), configured and defined terms alike, ranked among
// the catalogue's items by the same weights, each an item of kind lexicon
// whose id is the subject its lookup link describes; a search of one kind
// and aura_search_capabilities leave the lexicon out.
func TestRESTSearchCoversLexicon(t *testing.T) {
	h := newHarness(t, harnessOptions{lexiconWrites: true})
	tok := h.token(t, tenantA, userA)
	items := func(m map[string]any) (ids []string, byID map[string]map[string]any) {
		byID = map[string]map[string]any{}
		ids = []string{}
		for _, it := range m["items"].([]any) {
			item := it.(map[string]any)["item"].(map[string]any)
			item["score"] = it.(map[string]any)["score"]
			ids = append(ids, item["id"].(string))
			byID[item["id"].(string)] = item
		}
		return ids, byID
	}

	ids, byID := items(ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "evidence pack"})))
	lex := byID["lexicon:evidence-pack"]
	// The whole query is a ref (10), both tokens are term tokens (6 each)
	// and ref tokens (4 each).
	if len(ids) == 0 || ids[0] != "lexicon:evidence-pack" || lex["kind"] != contracts.LexiconKind || lex["title"] != "evidence-pack" ||
		lex["description"] != "A bundle of facts the editor uses." || lex["score"] != 30.0 {
		t.Fatalf("search without kind: %v\n%v", ids, lex)
	}
	want := jsonOf(t, `[{"rel":"lookup","method":"praxec.query","args":{"subject":"lexicon:evidence-pack"}}]`)
	if !reflect.DeepEqual(lex["links"], want) {
		t.Errorf("the lexicon item's links %v, want %v", lex["links"], want)
	}
	// Its link, followed, answers the term; so does describing its id.
	link := lex["links"].([]any)[0].(map[string]any)
	got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, link["args"].(map[string]any)))
	if got["term"] != "evidence-pack" || got["entry"] == nil {
		t.Errorf("following the lookup link: %v", got)
	}

	// Mixed with the catalogue: "run" is the mission term's alias and
	// run_lint's token nowhere indexed; "deploy" finds only workflows.
	if ids, _ := items(ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "run"}))); !reflect.DeepEqual(ids, []string{"lexicon:mission"}) {
		t.Errorf("search run: %v", ids)
	}
	// A listing covers every kind, lexicon included, in id order.
	ids, _ = items(ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "", "limit": 100})))
	if !slices.Contains(ids, "lexicon:evidence-pack") || !slices.Contains(ids, "lexicon:mission") || !slices.Contains(ids, "deploy_pipeline") || !slices.IsSorted(ids) {
		t.Errorf("listing: %v", ids)
	}
	if ids, _ := items(ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "", "limit": 2}))); len(ids) != 2 {
		t.Errorf("a listing's limit covers the lexicon's items too: %v", ids)
	}

	// A defined term is searched as soon as it is defined.
	ok(t, contracts.ToolPraxecCommand, h.command(t, tok, map[string]any{"subject": "lexicon:guardrail",
		"definition": map[string]any{"definition_short": "A check that stops a move."}}))
	if ids, _ := items(ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "guardrail"}))); !reflect.DeepEqual(ids, []string{"lexicon:guardrail"}) {
		t.Errorf("search for a defined term: %v", ids)
	}

	// One kind, and the aura search, leave the lexicon out.
	for _, r := range []resp{
		h.query(t, tok, map[string]any{"query": "evidence pack", "kind": "workflow"}),
		h.query(t, tok, map[string]any{"query": "evidence pack", "kind": "capability"}),
	} {
		if ids, _ := items(ok(t, contracts.ToolPraxecQuery, r)); slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, "lexicon:") }) {
			t.Errorf("a search of one kind answered lexicon items: %v", ids)
		}
	}
	aura := ok(t, contracts.ToolSearchCapabilities, h.post(t, "/v8/capabilities/search", tok, map[string]any{"query": "evidence pack"}, "", ""))
	if ids, _ := items(aura); slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, "lexicon:") }) {
		t.Errorf("aura_search_capabilities answered lexicon items: %v", ids)
	}
}
