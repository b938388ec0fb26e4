package e2e_test

// Skills in the discovery index: kind skill, searchable only with
// --enable-skills-search, described in the flatter guidance shape.

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

func skillsGateway(t *testing.T, ti *gatewaytest.Issuer, search bool) *gw {
	t.Helper()
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:        ti,
		SkillsSearch:  search,
		LexiconWrites: true,
		Edit:          func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	return wrapGateway(g)
}

func itemIDs(t *testing.T, r *gatewaytest.Response) []string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("search: %d %s", r.Status, r.Body)
	}
	var ids []string
	for _, raw := range r.Object(t)["items"].([]any) {
		ids = append(ids, raw.(map[string]any)["item"].(map[string]any)["id"].(string))
	}
	return ids
}

func TestSkillsSearchGated(t *testing.T) {
	ti := newIssuer(t)
	off := skillsGateway(t, ti, false)
	tok := mint(t, ti, tenantA, userA)
	if r := off.query(t, tok, map[string]any{"query": "deploy", "kind": "skill"}); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "INVALID_PARAMS") {
		t.Errorf("kind skill without the flag: %d %s", r.Status, r.Body)
	}
	if ids := itemIDs(t, off.query(t, tok, map[string]any{"query": "deploy"})); slices.Contains(ids, "deploy-checklist") || !slices.Contains(ids, "deploy_pipeline") {
		t.Errorf("a search of every kind without the flag: %v", ids)
	}

	on := skillsGateway(t, ti, true)
	r := on.query(t, tok, map[string]any{"query": "deploy", "kind": "skill"})
	if ids := itemIDs(t, r); !slices.Equal(ids, []string{"deploy-checklist"}) {
		t.Fatalf("kind skill: %v", ids)
	}
	item := r.Object(t)["items"].([]any)[0].(map[string]any)
	if item["score"].(interface{ String() string }).String() == "0" {
		t.Errorf("no score: %v", item)
	}
	it := item["item"].(map[string]any)
	l := findLink(t, linksOf(t, it), "describe")
	if it["kind"] != "skill" || it["title"] != "Deploy checklist" || l.Method != "praxec.query" || l.Args["subject"] != "deploy-checklist" {
		t.Errorf("skill item: %v", it)
	}
	if ids := itemIDs(t, on.query(t, tok, map[string]any{"query": "incident review"})); !slices.Contains(ids, "incident-review") {
		t.Errorf("a search of every kind with the flag: %v", ids)
	}
	// aura_search_capabilities links aura_get_skill.
	a := on.do(t, req{method: http.MethodGet, path: "/v8/capabilities/search?query=incident&kind=skill", token: tok})
	if a.Status != http.StatusOK {
		a = on.do(t, req{method: http.MethodPost, path: "/v8/capabilities/search", body: map[string]any{"query": "incident", "kind": "skill"}, token: tok})
	}
	if !strings.Contains(string(a.Body), `"aura_get_skill"`) || !strings.Contains(string(a.Body), `"skillId":"incident-review"`) {
		t.Errorf("aura search: %d %s", a.Status, a.Body)
	}
}

func TestSkillsDescribe(t *testing.T) {
	ti := newIssuer(t)
	g := skillsGateway(t, ti, false)
	tok := mint(t, ti, tenantA, userA)
	r := g.query(t, tok, map[string]any{"subject": "incident-review"})
	body := r.Object(t)
	var keys []string
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if r.Status != http.StatusOK || !slices.Equal(keys, []string{"body", "kind", "links", "subject", "verb"}) {
		t.Fatalf("describe: %d %s", r.Status, r.Body)
	}
	if body["kind"] != "skill" || body["subject"] != "incident-review" || body["verb"] != "describe" || !strings.HasPrefix(body["body"].(string), "# Incident review") {
		t.Errorf("describe: %s", r.Body)
	}
	// On the praxec surface every link names a praxec tool (seeds/000);
	// aura_get_skill stays on the aura surface.
	for _, l := range linksOf(t, body) {
		if l.Method != contracts.ToolPraxecQuery && l.Method != contracts.ToolPraxecCommand {
			t.Errorf("praxec describe links %s: %+v", l.Method, l)
		}
	}
	findLink(t, linksOf(t, body), "home")
	// A tag that names a lexicon term brings its entry.
	def := g.command(t, tok, map[string]any{"subject": "lexicon:postmortem", "definition": map[string]any{"definition_short": "A written review of an incident.", "refs": []any{"post-mortem"}}})
	if def.Status != http.StatusOK {
		t.Fatalf("define: %d %s", def.Status, def.Body)
	}
	r = g.query(t, tok, map[string]any{"subject": "incident-review"})
	lex, _ := r.Object(t)["lexicon"].([]any)
	if len(lex) != 1 || lex[0].(map[string]any)["term"] != "postmortem" || lex[0].(map[string]any)["definition_short"] != "A written review of an incident." {
		t.Errorf("lexicon: %s", r.Body)
	}
	// Workflows keep the wrapped shape.
	if w := g.query(t, tok, map[string]any{"subject": "deploy_pipeline"}); w.Object(t)["item"] == nil {
		t.Errorf("workflow describe: %s", w.Body)
	}
}
