package discovery_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// TestRESTSearchSeedExample: the seeds/000 search request answers the
// seeds/000 search response, member for member.
func TestRESTSearchSeedExample(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tok := h.token(t, tenantA, userA)
	got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "deploy", "kind": "workflow", "limit": 5}))
	want := jsonOf(t, `{
	  "query": "deploy",
	  "kind": "workflow",
	  "items": [
	    {
	      "score": 14.0,
	      "item": {
	        "id": "deploy_pipeline",
	        "kind": "workflow",
	        "title": "Deploy Pipeline",
	        "description": "Lint, test, build, and deploy a service.",
	        "tags": ["deploy", "pipeline"],
	        "links": [
	          {
	            "rel": "start",
	            "method": "praxec.command",
	            "args": { "definitionId": "deploy_pipeline", "input": {} }
	          }
	        ]
	      }
	    }
	  ],
	  "links": [
	    { "rel": "home", "method": "praxec.query", "args": {} }
	  ]
	}`)
	if !reflect.DeepEqual(any(got), want) {
		t.Errorf("search answer:\n%v\nwant the seed's:\n%v", got, want)
	}

	// Following the start link starts the workflow.
	item := got["items"].([]any)[0].(map[string]any)["item"].(map[string]any)
	link := item["links"].([]any)[0].(map[string]any)
	started := ok(t, contracts.ToolPraxecCommand, h.command(t, tok, link["args"].(map[string]any)))
	if started["result"].(map[string]any)["status"] != "started" {
		t.Errorf("start link: %v", started)
	}
}

// TestRESTDescribeSeedExample: describe of a proxy capability answers the
// seeds/000 describe shape: the item under item, its start link into
// proxy_default with input_schema spelt with an underscore, home and search.
func TestRESTDescribeSeedExample(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tok := h.token(t, tenantA, userA)
	got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"subject": "github.list_issues"}))
	want := jsonOf(t, `{
	  "id": "github.list_issues",
	  "item": {
	    "id": "github.list_issues",
	    "kind": "capability",
	    "title": "List GitHub issues",
	    "description": "List issues from a GitHub repository.",
	    "tags": ["github", "issues", "read"],
	    "links": [
	      {
	        "rel": "start",
	        "method": "praxec.command",
	        "args": { "definitionId": "proxy_default", "input": { "capability": "github.list_issues" } },
	        "input_schema": {
	          "type": "object",
	          "required": ["repo"],
	          "properties": {
	            "repo": { "type": "string" }
	          }
	        }
	      }
	    ]
	  },
	  "links": [
	    { "rel": "home",   "method": "praxec.query", "args": {} },
	    { "rel": "search", "method": "praxec.query", "args": { "query": "" } }
	  ]
	}`)
	if !reflect.DeepEqual(any(got), want) {
		t.Errorf("describe answer:\n%v\nwant the seed's:\n%v", got, want)
	}
}

func TestRESTDescribe(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tok := h.token(t, tenantA, userA)

	t.Run("capability metadata", func(t *testing.T) {
		got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"subject": "ticket.open"}))
		item := got["item"].(map[string]any)
		if item["domain"] != "ticket" || item["exposeDirectly"] != true || item["kind"] != "capability" {
			t.Errorf("ticket.open: %v", item)
		}
		// No input schema declared: the start link carries an open object.
		l := item["links"].([]any)[0].(map[string]any)
		if !reflect.DeepEqual(l["input_schema"], map[string]any{"type": "object"}) || l["inputSchema"] != nil {
			t.Errorf("start link %v", l)
		}
	})

	t.Run("wrapped capability", func(t *testing.T) {
		// The exposure inherits the wrapped capability's title; the building
		// blocks are not in the index.
		got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"subject": "github.create_pr"}))
		if got["item"].(map[string]any)["title"] != "Create GitHub PR" {
			t.Errorf("github.create_pr: %v", got)
		}
		for _, id := range []string{"raw.create_pr", "safe.create_pr"} {
			problem(t, h.query(t, tok, map[string]any{"subject": id}), http.StatusNotFound, contracts.CodeNotFound)
		}
	})

	t.Run("workflow and connection", func(t *testing.T) {
		got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"subject": "release_approval"}))
		l := got["item"].(map[string]any)["links"].([]any)[0].(map[string]any)
		if l["rel"] != "start" || l["inputSchema"] == nil || !reflect.DeepEqual(l["args"], map[string]any{"definitionId": "release_approval", "input": map[string]any{}}) {
			t.Errorf("workflow start link %v", l)
		}
		got = ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"subject": "github"}))
		if item := got["item"].(map[string]any); item["kind"] != "connection" || len(item["links"].([]any)) != 0 {
			t.Errorf("connection: %v", item)
		}
	})

	t.Run("not found", func(t *testing.T) {
		p := problem(t, h.query(t, tok, map[string]any{"subject": "github.delete_repo"}), http.StatusNotFound, contracts.CodeNotFound)
		want := []any{map[string]any{"rel": "search", "method": "praxec.query", "args": map[string]any{"query": "github.delete_repo"}}}
		if !reflect.DeepEqual(p["links"], want) {
			t.Errorf("links %v, want %v", p["links"], want)
		}
	})

	t.Run("audit", func(t *testing.T) {
		// A browse-time describe carries a null workflowId; one for a
		// running workflow carries its id.
		const browse, running = "4bf92f3577b34da6a3ce929d0e0e4736", "5bf92f3577b34da6a3ce929d0e0e4737"
		ok(t, contracts.ToolPraxecQuery, h.post(t, "/v8/praxec/query", tok, map[string]any{"subject": "github.list_issues"}, browse, ""))
		ok(t, contracts.ToolPraxecQuery, h.post(t, "/v8/praxec/query", tok, map[string]any{"subject": "deploy_pipeline", "workflowId": "wf_abc"}, running, ""))
		ok(t, contracts.ToolPraxecQuery, h.post(t, "/v8/praxec/query", tok, map[string]any{"subject": "lexicon:mission", "workflowId": "wf_abc"}, running, ""))
		for _, tc := range []struct {
			trace, workflowID string
			subjects          []string
		}{{browse, "", []string{"github.list_issues"}}, {running, "wf_abc", []string{"deploy_pipeline", "lexicon:mission"}}} {
			var subjects []string
			for _, ev := range h.events(t, tenantA, tc.trace) {
				if ev.Type != "guidance.describe_requested" {
					continue
				}
				subjects = append(subjects, ev.Attributes["subject"].(string))
				wf, present := ev.Attributes["workflowId"]
				if !present || ev.WorkflowID != tc.workflowID || (tc.workflowID == "" && wf != nil) || (tc.workflowID != "" && wf != tc.workflowID) {
					t.Errorf("event %+v: workflowId %v (column %q), want %q", ev, wf, ev.WorkflowID, tc.workflowID)
				}
				if ev.Subject != userA || ev.Outcome != "allowed" {
					t.Errorf("event %+v", ev)
				}
			}
			if !reflect.DeepEqual(subjects, tc.subjects) {
				t.Errorf("trace %s: describe events for %v, want %v", tc.trace, subjects, tc.subjects)
			}
		}
	})
}

func TestRESTSearch(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tok := h.token(t, tenantA, userA)
	ids := func(m map[string]any) []string {
		out := []string{}
		for _, it := range m["items"].([]any) {
			out = append(out, it.(map[string]any)["item"].(map[string]any)["id"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"every kind", map[string]any{"query": "github"}, []string{"github", "github.list_issues", "github.create_pr"}},
		{"capability", map[string]any{"query": "github", "kind": "capability"}, []string{"github.list_issues", "github.create_pr"}},
		{"connection", map[string]any{"query": "github", "kind": "connection"}, []string{"github"}},
		{"alias", map[string]any{"query": "bugs"}, []string{"github.list_issues"}},
		{"limit", map[string]any{"query": "github", "limit": 1}, []string{"github"}},
		{"list capabilities", map[string]any{"query": "", "kind": "capability"}, []string{"github.create_pr", "github.list_issues", "ticket.open"}},
		{"list workflows", map[string]any{"query": "", "kind": "workflow"}, []string{"deploy_pipeline", "release_approval"}},
		{"nothing", map[string]any{"query": "kubernetes"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			praxec := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, tc.args))
			if got := ids(praxec); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("praxec.query: %v, want %v", got, tc.want)
			}
			aura := ok(t, contracts.ToolSearchCapabilities, h.post(t, "/v8/capabilities/search", tok, tc.args, "", ""))
			if got := ids(aura); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("aura_search_capabilities: %v, want %v", got, tc.want)
			}
			// Both surfaces score alike.
			for i, it := range praxec["items"].([]any) {
				if s := it.(map[string]any)["score"]; s != aura["items"].([]any)[i].(map[string]any)["score"] {
					t.Errorf("item %d: praxec score %v, aura score %v", i, s, aura["items"].([]any)[i].(map[string]any)["score"])
				}
			}
		})
	}

	t.Run("scores", func(t *testing.T) {
		got := ok(t, contracts.ToolPraxecQuery, h.query(t, tok, map[string]any{"query": "github"}))
		var scores []float64
		for _, it := range got["items"].([]any) {
			scores = append(scores, it.(map[string]any)["score"].(float64))
		}
		// The connection: exact id 10 + id token 6 + title 4; the
		// capabilities: id token 6 + title 4 + tag 3 + description 1, and
		// id token 6 + title ("Create GitHub PR", inherited) 4 + tag 3.
		if want := []float64{20, 14, 13}; !reflect.DeepEqual(scores, want) {
			t.Errorf("scores %v, want %v", scores, want)
		}
	})
}

// TestRESTSearchAuraLinks: aura_search_capabilities answers links to aura_*
// tools, each with a fresh idempotency key, and following a workflow's
// link creates the mission.
func TestRESTSearchAuraLinks(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tok := h.token(t, tenantA, userA)
	search := func() map[string]any {
		return ok(t, contracts.ToolSearchCapabilities, h.post(t, "/v8/capabilities/search", tok, map[string]any{"query": "deploy release"}, "", ""))
	}
	first, second := search(), search()
	link := func(m map[string]any, i int) map[string]any {
		return m["items"].([]any)[i].(map[string]any)["item"].(map[string]any)["links"].([]any)[0].(map[string]any)
	}
	l := link(first, 0)
	args := l["args"].(map[string]any)
	if l["method"] != contracts.ToolCreateMission || args["definitionId"] != "deploy_pipeline" || args["goal"] != "deploy release" {
		t.Fatalf("workflow link %v", l)
	}
	key, _ := args["idempotencyKey"].(string)
	if err := contracts.CheckIdempotencyKey(key); err != nil {
		t.Fatalf("link key %q: %v", key, err)
	}
	if key == link(second, 0)["args"].(map[string]any)["idempotencyKey"] {
		t.Error("two answers handed out the same idempotency key")
	}
	for _, sl := range first["links"].([]any) {
		if m := sl.(map[string]any)["method"]; !strings.HasPrefix(m.(string), "aura_") {
			t.Errorf("aura answer links %v", m)
		}
	}
	body := map[string]any{}
	for k, v := range args {
		if k != "idempotencyKey" {
			body[k] = v
		}
	}
	r := h.post(t, "/v8/missions", tok, body, "", key)
	if r.status != http.StatusCreated {
		t.Fatalf("following the link: %d %s", r.status, r.body)
	}

	// A capability's aura link starts proxy_default with the capability.
	got := ok(t, contracts.ToolSearchCapabilities, h.post(t, "/v8/capabilities/search", tok, map[string]any{"query": "bugs"}, "", ""))
	cl := link(got, 0)
	cargs := cl["args"].(map[string]any)
	if cl["method"] != contracts.ToolCreateMission || cargs["definitionId"] != "proxy_default" ||
		!reflect.DeepEqual(cargs["input"], map[string]any{"capability": "github.list_issues"}) || cl["input_schema"] == nil || cargs["goal"] != "bugs" {
		t.Errorf("capability link %v", cl)
	}
	if err := contracts.ValidateInput(contracts.ToolCreateMission, cargs); err != nil {
		t.Errorf("the link's args are not a valid aura_create_mission call: %v", err)
	}
}

// TestRESTSearchKinds: kind names one of the searchable kinds; skill and
// script only when the server enables them; lexicon routes praxec.query to
// the lexicon and is refused by aura_search_capabilities.
func TestRESTSearchKinds(t *testing.T) {
	off := newHarness(t, harnessOptions{})
	on := newHarness(t, harnessOptions{skills: true, scripts: true})
	for _, tc := range []struct {
		kind    string
		offCode contracts.Code // "" when accepted
		onCode  contracts.Code
	}{
		{"workflow", "", ""},
		{"capability", "", ""},
		{"connection", "", ""},
		{"skill", contracts.CodeInvalidParams, ""},
		{"script", contracts.CodeInvalidParams, ""},
		{"tools", contracts.CodeInvalidParams, contracts.CodeInvalidParams},
		{"Workflow", contracts.CodeInvalidParams, contracts.CodeInvalidParams},
	} {
		for _, g := range []struct {
			h    *harness
			code contracts.Code
		}{{off, tc.offCode}, {on, tc.onCode}} {
			tok := g.h.token(t, tenantA, userA)
			for _, path := range []string{"/v8/praxec/query", "/v8/capabilities/search"} {
				r := g.h.post(t, path, tok, map[string]any{"query": "", "kind": tc.kind}, "", "")
				tool := contracts.ToolPraxecQuery
				if path == "/v8/capabilities/search" {
					tool = contracts.ToolSearchCapabilities
				}
				if g.code == "" {
					ok(t, tool, r)
					continue
				}
				if tc.kind == "Workflow" && path == "/v8/capabilities/search" {
					// The aura schema's pattern refuses it first.
					problem(t, r, http.StatusBadRequest, contracts.CodeInvalidParams)
					continue
				}
				p := problem(t, r, http.StatusBadRequest, g.code)
				if errs, _ := p["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["pointer"] != "/kind" {
					t.Errorf("%s kind %s: errors %v", path, tc.kind, p["errors"])
				}
			}
		}
	}
	tok := off.token(t, tenantA, userA)
	// Enabled but empty: skills and scripts are not indexed yet.
	if got := ok(t, contracts.ToolPraxecQuery, on.query(t, on.token(t, tenantA, userA), map[string]any{"query": "deploy", "kind": "skill"})); len(got["items"].([]any)) != 0 {
		t.Errorf("skill search: %v", got)
	}
	problem(t, off.post(t, "/v8/capabilities/search", tok, map[string]any{"query": "x", "kind": "lexicon"}, "", ""), http.StatusBadRequest, contracts.CodeInvalidParams)
	if got := ok(t, contracts.ToolPraxecQuery, off.query(t, tok, map[string]any{"query": "evidence", "kind": "lexicon"})); got["hits"] == nil {
		t.Errorf("praxec.query kind lexicon is a lexicon search: %v", got)
	}
	// limit is bounded by the schema.
	problem(t, off.query(t, tok, map[string]any{"query": "", "limit": 101}), http.StatusBadRequest, contracts.CodeInvalidParams)
	problem(t, off.query(t, tok, map[string]any{"query": "", "limit": 0}), http.StatusBadRequest, contracts.CodeInvalidParams)
}

// TestRESTDiscoveryScopes: search and describe need capabilities:read on
// both surfaces; a token without it is refused before anything is read.
func TestRESTDiscoveryScopes(t *testing.T) {
	h := newHarness(t, harnessOptions{lexiconWrites: true})
	without := h.token(t, tenantA, userA, everyScopeBut(contracts.ScopeCapabilitiesRead)...)
	only := h.token(t, tenantA, userA, contracts.ScopeCapabilitiesRead)
	for _, args := range []map[string]any{
		{}, {"query": "deploy"}, {"query": "x", "kind": "lexicon"}, {"subject": "deploy_pipeline"}, {"subject": "lexicon:mission"},
	} {
		p := problem(t, h.query(t, without, args), http.StatusForbidden, contracts.CodeInsufficientScope)
		if !strings.Contains(p["detail"].(string), string(contracts.ScopeCapabilitiesRead)) {
			t.Errorf("%v: %v", args, p)
		}
		ok(t, contracts.ToolPraxecQuery, h.query(t, only, args))
	}
	problem(t, h.post(t, "/v8/capabilities/search", without, map[string]any{"query": "deploy"}, "", ""), http.StatusForbidden, contracts.CodeInsufficientScope)
	ok(t, contracts.ToolSearchCapabilities, h.post(t, "/v8/capabilities/search", only, map[string]any{"query": "deploy"}, "", ""))
}

// TestRESTIntentCandidates: aura_submit_intent and aura_create_mission
// compile text with the index: workflows only, best first.
func TestRESTIntentCandidates(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tok := h.token(t, tenantA, userA)
	r := h.post(t, "/v8/intents", tok, map[string]any{"intent": "deploy the github issues"}, "", "intent-candidates-000001")
	if r.status != http.StatusOK {
		t.Fatalf("intent: %d %s", r.status, r.body)
	}
	var ids []string
	var scores []float64
	for _, c := range r.object(t)["candidates"].([]any) {
		ids = append(ids, c.(map[string]any)["definitionId"].(string))
		scores = append(scores, c.(map[string]any)["score"].(float64))
	}
	if !reflect.DeepEqual(ids, []string{"deploy_pipeline"}) || !reflect.DeepEqual(scores, []float64{14}) {
		t.Errorf("candidates %v %v, want deploy_pipeline 14 (capabilities are not candidates)", ids, scores)
	}
	// Two workflows that fit equally: AMBIGUOUS_INTENT, one link each, in
	// id order.
	p := problem(t, h.post(t, "/v8/missions", tok, map[string]any{"goal": "deploy release"}, "", "create-ambiguous-000001"), http.StatusBadRequest, contracts.CodeAmbiguousIntent)
	var rels []string
	for _, l := range p["links"].([]any) {
		rels = append(rels, l.(map[string]any)["rel"].(string))
	}
	if !reflect.DeepEqual(rels, []string{"create_deploy_pipeline", "create_release_approval"}) {
		t.Errorf("links %v", rels)
	}
}
