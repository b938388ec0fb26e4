package contextrest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// tenantBMemory gives tenant B records with the same ids as tenant A's and
// other content: a leak between tenants would show.
const tenantBMemory = `{"id":"mem-001","compartment":"payments","purposes":["incident-review"],"content":"globex deploy rollback notes","tags":["deploy"],"createdAt":"2025-03-01T00:00:00Z"}
{"id":"mem-900","compartment":"payments","purposes":["incident-review"],"content":"globex only","tags":["other"]}
`

func memoryIDs(t *testing.T, m map[string]any) []string {
	t.Helper()
	return ids(list(t, m, "records"))
}

// TestQueryMemory: ranking by text within one compartment and purpose;
// records of other purposes, compartments and tenants never appear.
func TestQueryMemory(t *testing.T) {
	h := newHarness(t)
	h.importMemory(t, tenantA, exampleFile(t, "memory.jsonl"))
	h.importMemory(t, tenantB, tenantBMemory)
	tk := h.reviewer(t)
	q := func(body map[string]any) map[string]any {
		t.Helper()
		body["compartment"], body["purpose"] = "payments", "incident-review"
		return ok(t, contracts.ToolQueryMemory, h.queryMemory(t, tk, body))
	}
	// mem-001 carries both tags and says "deploy" once: 3+3+1; mem-002 has
	// the deploy tag: 3; mem-005 says neither word as a token ("deploys").
	m := q(map[string]any{"query": "deploy rollback"})
	if got := memoryIDs(t, m); !slices.Equal(got, []string{"mem-001", "mem-002"}) {
		t.Errorf("deploy rollback: %v", got)
	}
	recs := list(t, m, "records")
	if s0, _ := recs[0]["score"].(json.Number).Float64(); s0 != 7 {
		t.Errorf("mem-001 score %v, want 7", recs[0]["score"])
	}
	if s1, _ := recs[1]["score"].(json.Number).Float64(); s1 != 3 {
		t.Errorf("mem-002 score %v, want 3", recs[1]["score"])
	}
	if m["compartment"] != "payments" || m["purpose"] != "incident-review" || m["query"] != "deploy rollback" {
		t.Errorf("echo: %v", m)
	}
	if recs[0]["content"] == "" || recs[0]["createdAt"] != "2025-03-02T14:20:00Z" {
		t.Errorf("record: %v", recs[0])
	}
	// Nothing of support (mem-003), marketing (mem-004) or hr (mem-101),
	// whatever the words.
	for _, words := range []string{"pending card network", "campaign conversion", "interview SRE opening", ""} {
		got := memoryIDs(t, q(map[string]any{"query": words, "limit": 100}))
		for _, id := range got {
			if !slices.Contains([]string{"mem-001", "mem-002", "mem-005"}, id) {
				t.Errorf("query %q returned %s, outside the compartment and purpose", words, id)
			}
		}
	}
	// No query words: newest first, score 0.
	m = q(map[string]any{"query": ""})
	if got := memoryIDs(t, m); !slices.Equal(got, []string{"mem-002", "mem-001", "mem-005"}) {
		t.Errorf("listing: %v", got)
	}
	if got := memoryIDs(t, q(map[string]any{"query": "the of and"})); !slices.Equal(got, []string{"mem-002", "mem-001", "mem-005"}) {
		t.Errorf("stop words only: %v", got)
	}
	// Tags narrow, limit caps.
	if got := memoryIDs(t, q(map[string]any{"query": "", "tags": []string{"staging"}})); !slices.Equal(got, []string{"mem-002"}) {
		t.Errorf("tags staging: %v", got)
	}
	if got := memoryIDs(t, q(map[string]any{"query": "deploy", "tags": []string{"deploy", "incident"}})); !slices.Equal(got, []string{"mem-001"}) {
		t.Errorf("tags deploy+incident: %v", got)
	}
	if got := memoryIDs(t, q(map[string]any{"query": "", "limit": 1})); !slices.Equal(got, []string{"mem-002"}) {
		t.Errorf("limit 1: %v", got)
	}
	if got := memoryIDs(t, q(map[string]any{"query": "nothing-matches-this"})); len(got) != 0 {
		t.Errorf("no match: %v", got)
	}

	// A token allowing hr too reaches hr, and still only with that purpose.
	both := h.token(t, tok{compartments: []string{"payments", "hr"}, purposes: []string{"incident-review", "support"}})
	m = ok(t, contracts.ToolQueryMemory, h.queryMemory(t, both, map[string]any{"compartment": "hr", "purpose": "incident-review", "query": ""}))
	if got := memoryIDs(t, m); !slices.Equal(got, []string{"mem-101"}) {
		t.Errorf("hr: %v", got)
	}
	m = ok(t, contracts.ToolQueryMemory, h.queryMemory(t, both, map[string]any{"compartment": "payments", "purpose": "support", "query": ""}))
	if got := memoryIDs(t, m); !slices.Equal(got, []string{"mem-001", "mem-003"}) {
		t.Errorf("payments/support: %v", got)
	}

	// Tenancy: B's token with the same claims sees B's records only; a
	// tenant without records sees none.
	tkB := h.token(t, tok{tenant: tenantB, subject: userB, compartments: []string{"payments"}, purposes: []string{"incident-review"}})
	m = ok(t, contracts.ToolQueryMemory, h.queryMemory(t, tkB, map[string]any{"compartment": "payments", "purpose": "incident-review", "query": ""}))
	if got := memoryIDs(t, m); !slices.Equal(got, []string{"mem-900", "mem-001"}) {
		t.Errorf("tenant B: %v", got)
	}
	if c := list(t, m, "records")[1]["content"]; c != "globex deploy rollback notes" {
		t.Errorf("tenant B's mem-001 reads %q", c)
	}
	tkC := h.token(t, tok{tenant: "initech", compartments: []string{"payments"}, purposes: []string{"incident-review"}})
	m = ok(t, contracts.ToolQueryMemory, h.queryMemory(t, tkC, map[string]any{"compartment": "payments", "purpose": "incident-review", "query": "deploy"}))
	if got := memoryIDs(t, m); len(got) != 0 {
		t.Errorf("tenant without records: %v", got)
	}
}

// TestQueryMemoryRefusals: the token's compartments and purposes bound
// every query; scope and validation come first.
func TestQueryMemoryRefusals(t *testing.T) {
	h := newHarness(t)
	h.importMemory(t, tenantA, exampleFile(t, "memory.jsonl"))
	tk := h.reviewer(t)
	body := func(compartment, purpose string) map[string]any {
		return map[string]any{"compartment": compartment, "purpose": purpose, "query": ""}
	}

	p := gatewaytest.WantProblem(t, h.queryMemory(t, tk, body("hr", "incident-review")), http.StatusForbidden, contracts.CodeCompartmentForbidden)
	if !slices.Equal(p.Pointers(), []string{"/compartment"}) || p.Hint == "" {
		t.Errorf("compartment refusal %+v", p)
	}
	p = gatewaytest.WantProblem(t, h.queryMemory(t, tk, body("payments", "support")), http.StatusForbidden, contracts.CodePurposeForbidden)
	if !slices.Equal(p.Pointers(), []string{"/purpose"}) {
		t.Errorf("purpose refusal %+v", p)
	}
	p = gatewaytest.WantProblem(t, h.queryMemory(t, tk, body("hr", "marketing")), http.StatusForbidden, contracts.CodeCompartmentForbidden)
	if !slices.Equal(p.Pointers(), []string{"/compartment", "/purpose"}) {
		t.Errorf("both refused: %+v", p)
	}
	// Exact matching: no case folding, prefix or wildcard.
	for _, c := range []string{"Payments", "pay", "payments.eu"} {
		gatewaytest.WantProblem(t, h.queryMemory(t, tk, body(c, "incident-review")), http.StatusForbidden, contracts.CodeCompartmentForbidden)
	}
	// A token without the claims allows nothing; a wildcard claim is just
	// a compartment named "*".
	gatewaytest.WantProblem(t, h.queryMemory(t, h.token(t, tok{}), body("payments", "incident-review")), http.StatusForbidden, contracts.CodeCompartmentForbidden)
	star := h.token(t, tok{compartments: []string{"*"}, purposes: []string{"*"}})
	gatewaytest.WantProblem(t, h.queryMemory(t, star, body("payments", "incident-review")), http.StatusForbidden, contracts.CodeCompartmentForbidden)
	// Empty claims allow nothing either.
	empty := h.token(t, tok{compartments: []string{}, purposes: []string{}})
	gatewaytest.WantProblem(t, h.queryMemory(t, empty, body("payments", "incident-review")), http.StatusForbidden, contracts.CodeCompartmentForbidden)

	// Scope first: without memory:read, 403 insufficient-scope even for a
	// forbidden compartment and a malformed body.
	noScope := h.token(t, tok{scopes: without(contracts.ScopeMemoryRead), compartments: []string{"payments"}, purposes: []string{"incident-review"}})
	gatewaytest.WantProblem(t, h.queryMemory(t, noScope, body("payments", "incident-review")), http.StatusForbidden, contracts.CodeInsufficientScope)
	gatewaytest.WantProblem(t, h.queryMemory(t, noScope, `{"compartment":`), http.StatusForbidden, contracts.CodeInsufficientScope)
	gatewaytest.WantProblem(t, h.queryMemory(t, "", body("payments", "incident-review")), http.StatusUnauthorized, contracts.CodeUnauthenticated)

	// Validation before the compartment check: a malformed request is 400
	// whatever it names.
	for _, tc := range []struct {
		body    any
		pointer string
	}{
		{map[string]any{"compartment": "payments", "query": ""}, "/purpose"},
		{map[string]any{"purpose": "incident-review", "query": ""}, "/compartment"},
		{map[string]any{"compartment": "payments", "purpose": "incident-review"}, "/query"},
		{map[string]any{"compartment": "pay ments", "purpose": "incident-review", "query": ""}, "/compartment"},
		{map[string]any{"compartment": "hr", "purpose": "incident-review", "query": "", "limit": 0}, "/limit"},
		{map[string]any{"compartment": "hr", "purpose": "incident-review", "query": "", "limit": 101}, "/limit"},
		{map[string]any{"compartment": "payments", "purpose": "incident-review", "query": "", "tenant": tenantB}, "/tenant"},
		{map[string]any{"compartment": "payments", "purpose": "incident-review", "query": "", "compartments": []string{"hr"}}, "/compartments"},
		{map[string]any{"compartment": "payments", "purpose": "incident-review", "query": "", "tags": []string{"a", "a"}}, "/tags"},
		{map[string]any{"compartment": "payments", "purpose": "incident-review", "query": strings.Repeat("x", 513)}, "/query"},
	} {
		p := gatewaytest.WantProblem(t, h.queryMemory(t, tk, tc.body), http.StatusBadRequest, contracts.CodeInvalidParams)
		if !slices.Contains(p.Pointers(), tc.pointer) {
			t.Errorf("%v: pointers %v, want %s", tc.body, p.Pointers(), tc.pointer)
		}
	}
	gatewaytest.WantProblem(t, h.queryMemory(t, tk, `{"compartment":"payments","compartment":"hr","purpose":"incident-review","query":""}`),
		http.StatusBadRequest, contracts.CodeMalformedJSON)
}

// TestListGoals: goals of the compartment allowed for the purpose, by id,
// with the same bounds as memory.
func TestListGoals(t *testing.T) {
	h := newHarness(t)
	h.importGoals(t, tenantA, exampleFile(t, "goals.jsonl"))
	h.importGoals(t, tenantB, `{"id":"goal-001","compartment":"payments","purposes":["incident-review"],"title":"globex goal"}`+"\n")
	tk := h.reviewer(t)
	q := func(extra url.Values) url.Values {
		v := url.Values{"compartment": {"payments"}, "purpose": {"incident-review"}}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	m := ok(t, contracts.ToolListGoals, h.listGoals(t, tk, q(nil)))
	goals := list(t, m, "goals")
	if got := ids(goals); !slices.Equal(got, []string{"goal-001", "goal-002", "goal-004"}) {
		t.Errorf("goals %v", got)
	}
	if goals[0]["title"] != "Keep the payments rollback rate below 2%" || goals[0]["status"] != "active" ||
		goals[0]["description"] == nil || goals[0]["createdAt"] != "2025-01-06T09:00:00Z" {
		t.Errorf("goal-001: %v", goals[0])
	}
	if goals[2]["status"] != "achieved" {
		t.Errorf("goal-004: %v", goals[2])
	}
	if got := ids(list(t, ok(t, contracts.ToolListGoals, h.listGoals(t, tk, q(url.Values{"status": {"achieved"}}))), "goals")); !slices.Equal(got, []string{"goal-004"}) {
		t.Errorf("achieved: %v", got)
	}
	if got := ids(list(t, ok(t, contracts.ToolListGoals, h.listGoals(t, tk, q(url.Values{"status": {"active"}, "limit": {"1"}}))), "goals")); !slices.Equal(got, []string{"goal-001"}) {
		t.Errorf("active, limit 1: %v", got)
	}
	// Tenant B sees its own goal-001 only.
	tkB := h.token(t, tok{tenant: tenantB, subject: userB, compartments: []string{"payments"}, purposes: []string{"incident-review"}})
	gb := list(t, ok(t, contracts.ToolListGoals, h.listGoals(t, tkB, q(nil))), "goals")
	if len(gb) != 1 || gb[0]["title"] != "globex goal" || gb[0]["status"] != "active" {
		t.Errorf("tenant B: %v", gb)
	}
	// planning is another purpose: goal-003 is never listed for it here.
	planner := h.token(t, tok{compartments: []string{"payments"}, purposes: []string{"planning"}})
	got := ids(list(t, ok(t, contracts.ToolListGoals, h.listGoals(t, planner, url.Values{"compartment": {"payments"}, "purpose": {"planning"}})), "goals"))
	if !slices.Equal(got, []string{"goal-001", "goal-003"}) {
		t.Errorf("planning: %v", got)
	}

	gatewaytest.WantProblem(t, h.listGoals(t, tk, url.Values{"compartment": {"hr"}, "purpose": {"incident-review"}}), http.StatusForbidden, contracts.CodeCompartmentForbidden)
	gatewaytest.WantProblem(t, h.listGoals(t, tk, url.Values{"compartment": {"payments"}, "purpose": {"planning"}}), http.StatusForbidden, contracts.CodePurposeForbidden)
	gatewaytest.WantProblem(t, h.listGoals(t, h.token(t, tok{}), q(nil)), http.StatusForbidden, contracts.CodeCompartmentForbidden)
	gatewaytest.WantProblem(t, h.listGoals(t, h.token(t, tok{scopes: without(contracts.ScopeContextRead), compartments: []string{"payments"}, purposes: []string{"incident-review"}}), q(nil)),
		http.StatusForbidden, contracts.CodeInsufficientScope)
	gatewaytest.WantProblem(t, h.listGoals(t, "", q(nil)), http.StatusUnauthorized, contracts.CodeUnauthenticated)
	for _, v := range []url.Values{
		{"compartment": {"payments"}},
		{"purpose": {"incident-review"}},
		q(url.Values{"status": {"done"}}),
		q(url.Values{"limit": {"0"}}),
		q(url.Values{"limit": {"ten"}}),
		q(url.Values{"tenant": {tenantB}}),
		{"compartment": {"payments", "hr"}, "purpose": {"incident-review"}},
	} {
		gatewaytest.WantProblem(t, h.listGoals(t, tk, v), http.StatusBadRequest, contracts.CodeInvalidParams)
	}
}
