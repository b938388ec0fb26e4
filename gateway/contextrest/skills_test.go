package contextrest_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestGetSkill: the newest release by default (not the newer 2.0.0-rc.1),
// whatever its evidence state,
// a named version, the whole history newest first, and the same answer for
// every tenant (skills are gateway-wide configuration).
func TestGetSkill(t *testing.T) {
	h := newHarness(t)
	tk := h.token(t, tok{scopes: []string{string(contracts.ScopeSkillsRead)}})

	m := ok(t, contracts.ToolGetSkill, h.getSkill(t, tk, "deploy-checklist", nil))
	if m["version"] != "1.1.0" || m["evidenceState"] != "validated" || m["latestVersion"] != "1.1.0" ||
		!strings.HasPrefix(m["body"].(string), "# Deploy checklist (1.1.0)") {
		t.Errorf("newest: %v", m)
	}
	var history []string
	for _, v := range list(t, m, "versions") {
		history = append(history, v["version"].(string)+":"+v["evidenceState"].(string))
	}
	if want := []string{"2.0.0-rc.1:draft", "1.1.0:validated", "1.0.0:deprecated"}; !slices.Equal(history, want) {
		t.Errorf("versions %v, want %v", history, want)
	}

	m = ok(t, contracts.ToolGetSkill, h.getSkill(t, tk, "deploy-checklist", url.Values{"version": {"1.1.0"}}))
	ev := m["evidence"].(map[string]any)
	if m["version"] != "1.1.0" || m["evidenceState"] != "validated" || ev["state"] != "validated" || ev["reviewedAt"] != "2025-04-02" ||
		m["latestVersion"] != "1.1.0" || !strings.Contains(m["body"].(string), "Rehearse the rollback") {
		t.Errorf("1.1.0: %v", m)
	}
	// The pre-release is read by naming it, and says which release is
	// the default.
	m = ok(t, contracts.ToolGetSkill, h.getSkill(t, tk, "deploy-checklist", url.Values{"version": {"2.0.0-rc.1"}}))
	if m["version"] != "2.0.0-rc.1" || m["evidenceState"] != "draft" || m["latestVersion"] != "1.1.0" ||
		!strings.HasPrefix(m["body"].(string), "# Deploy checklist with canaries") {
		t.Errorf("2.0.0-rc.1: %v", m)
	}
	// The same version written shorter.
	if m := ok(t, contracts.ToolGetSkill, h.getSkill(t, tk, "deploy-checklist", url.Values{"version": {"1.1"}})); m["version"] != "1.1.0" {
		t.Errorf("version 1.1 answered %v", m["version"])
	}
	m = ok(t, contracts.ToolGetSkill, h.getSkill(t, tk, "incident-review", nil))
	if m["version"] != "1.0" || m["evidenceState"] != "reviewed" || len(list(t, m, "versions")) != 1 {
		t.Errorf("incident-review: %v", m)
	}

	// Gateway-wide: another tenant reads the same bytes.
	a := h.getSkill(t, tk, "deploy-checklist", nil)
	b := h.getSkill(t, h.token(t, tok{tenant: tenantB, subject: userB, scopes: []string{string(contracts.ScopeSkillsRead)}}), "deploy-checklist", nil)
	if a.Status != 200 || string(a.Body) != string(b.Body) {
		t.Errorf("tenants read different skills:\n%s\n%s", a.Body, b.Body)
	}
}

func TestGetSkillRefusals(t *testing.T) {
	h := newHarness(t)
	tk := h.token(t, tok{})

	gatewaytest.WantProblem(t, h.getSkill(t, "", "deploy-checklist", nil), http.StatusUnauthorized, contracts.CodeUnauthenticated)
	gatewaytest.WantProblem(t, h.getSkill(t, h.token(t, tok{scopes: without(contracts.ScopeSkillsRead)}), "deploy-checklist", nil),
		http.StatusForbidden, contracts.CodeInsufficientScope)
	// The scope comes before everything else, even a malformed argument.
	gatewaytest.WantProblem(t, h.getSkill(t, h.token(t, tok{scopes: without(contracts.ScopeSkillsRead)}), "bad id!", url.Values{"bogus": {"1"}}),
		http.StatusForbidden, contracts.CodeInsufficientScope)

	p := gatewaytest.WantProblem(t, h.getSkill(t, tk, "no-such-skill", nil), http.StatusNotFound, contracts.CodeNotFound)
	if !strings.Contains(p.Detail, "no-such-skill") {
		t.Errorf("detail %q", p.Detail)
	}
	p = gatewaytest.WantProblem(t, h.getSkill(t, tk, "deploy-checklist", url.Values{"version": {"9.9.9"}}), http.StatusNotFound, contracts.CodeNotFound)
	if !strings.Contains(p.Hint, "2.0.0-rc.1, 1.1.0, 1.0.0") || len(p.Links) != 1 || p.Links[0].Method != contracts.ToolGetSkill ||
		p.Links[0].Args["skillId"] != "deploy-checklist" {
		t.Errorf("unknown version: %+v", p)
	}
	for _, q := range []url.Values{
		{"version": {"not a version!"}},
		{"version": {strings.Repeat("1", 40)}},
		{"version": {""}},
		{"vers": {"1.0.0"}},
		{"version": {"1.0.0", "1.1.0"}},
	} {
		gatewaytest.WantProblem(t, h.getSkill(t, tk, "deploy-checklist", q), http.StatusBadRequest, contracts.CodeInvalidParams)
	}
	gatewaytest.WantProblem(t, h.getSkill(t, tk, "bad id!", nil), http.StatusBadRequest, contracts.CodeInvalidParams)
	// Only GET.
	r := h.do(t, http.MethodPost, "/v8/skills/deploy-checklist", tk, `{}`)
	gatewaytest.WantProblem(t, r, http.StatusMethodNotAllowed, contracts.CodeMethodNotAllowed)
}
