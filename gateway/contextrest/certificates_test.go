package contextrest_test

import (
	"bytes"
	"crypto/ed25519"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestListWorldCertificates: every certificate with its verification result
// at the service's clock, the same list for every tenant, the statement
// that certificates grant nothing, the issuer filter and the limit.
func TestListWorldCertificates(t *testing.T) {
	h := newHarness(t)
	tk := h.token(t, tok{scopes: []string{string(contracts.ScopeWorldRead)}})
	m := ok(t, contracts.ToolListWorldCertificates, h.listCertificates(t, tk, nil))
	if len(list(t, m, "certificates")) != 0 || !strings.Contains(m["statement"].(string), "grant no authority") {
		t.Fatalf("empty listing: %v", m)
	}
	rep := h.importCertificates(t, "certificates.jsonl", exampleFile(t, "certificates.jsonl"))
	if rep.Added != 5 || rep.Updated != 0 || rep.Unchanged != 0 {
		t.Errorf("import: %+v", rep)
	}

	m = ok(t, contracts.ToolListWorldCertificates, h.listCertificates(t, tk, nil))
	got := map[string]string{}
	var order []string
	for _, c := range list(t, m, "certificates") {
		got[c["id"].(string)] = c["verification"].(string)
		order = append(order, c["id"].(string))
		if c["verification"] != certs.Valid && c["detail"] == nil {
			t.Errorf("%s: %s without a detail", c["id"], c["verification"])
		}
	}
	want := map[string]string{
		"cert-planning-2099":  certs.NotYetValid,
		"cert-summaries-2023": certs.Expired,
		"cert-tampered":       certs.BadSignature,
		"cert-tool-use-2025":  certs.Valid,
		"cert-unlisted-lab":   certs.UnknownIssuer,
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
	if !slices.IsSorted(order) || len(order) != 5 {
		t.Errorf("order %v", order)
	}
	valid := list(t, m, "certificates")[slices.Index(order, "cert-tool-use-2025")]
	if valid["subject"] != "example-model-1" || valid["issuer"] != "praxa-example-evals" || valid["expiresAt"] != "2035-01-01T00:00:00Z" {
		t.Errorf("valid certificate: %v", valid)
	}

	// Gateway-wide: tenant B lists the same.
	b := h.listCertificates(t, h.token(t, tok{tenant: tenantB, subject: userB, scopes: []string{string(contracts.ScopeWorldRead)}}), nil)
	a := h.listCertificates(t, tk, nil)
	if b.Status != 200 || !bytes.Equal(a.Body, b.Body) {
		t.Errorf("tenants list different certificates:\n%s\n%s", a.Body, b.Body)
	}
	m = ok(t, contracts.ToolListWorldCertificates, h.listCertificates(t, tk, url.Values{"issuer": {"unlisted-lab"}}))
	if got := ids(list(t, m, "certificates")); !slices.Equal(got, []string{"cert-unlisted-lab"}) {
		t.Errorf("issuer filter: %v", got)
	}
	m = ok(t, contracts.ToolListWorldCertificates, h.listCertificates(t, tk, url.Values{"limit": {"2"}}))
	if got := ids(list(t, m, "certificates")); !slices.Equal(got, []string{"cert-planning-2099", "cert-summaries-2023"}) {
		t.Errorf("limit 2: %v", got)
	}

	gatewaytest.WantProblem(t, h.listCertificates(t, h.token(t, tok{scopes: without(contracts.ScopeWorldRead)}), nil), http.StatusForbidden, contracts.CodeInsufficientScope)
	gatewaytest.WantProblem(t, h.listCertificates(t, "", nil), http.StatusUnauthorized, contracts.CodeUnauthenticated)
	for _, q := range []url.Values{{"issuer": {"bad issuer"}}, {"limit": {"500"}}, {"subject": {"x"}}} {
		gatewaytest.WantProblem(t, h.listCertificates(t, tk, q), http.StatusBadRequest, contracts.CodeInvalidParams)
	}
}

// volatile members of an answer: they differ between two identical calls.
var volatile = regexp.MustCompile(`"(requestId|instance|idempotencyKey|traceId|intentId)":"[^"]*"`)

// TestCertificatesGrantNoAuthority proves that a certificate changes no
// authorization decision: the same calls, by principals whose subject and
// client are the subject of a valid certificate that claims every
// capability, scope, compartment and purpose in sight, answer exactly the
// same before and after the certificate exists.
func TestCertificatesGrantNoAuthority(t *testing.T) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{42}, 32)) // a test key
	h := newHarnessTrusting(t, certs.Issuers{"test-lab": key.Public().(ed25519.PublicKey)})
	h.importMemory(t, tenantA, exampleFile(t, "memory.jsonl"))
	h.importGoals(t, tenantA, exampleFile(t, "goals.jsonl"))
	const model = "example-model-1"
	mk := func(spec tok) string { spec.subject = model; return h.token(t, spec) }
	reviewer, review := []string{"payments"}, []string{"incident-review"}
	calls := []struct {
		name         string
		method, path string
		token        string
		body         any
	}{
		{"memory without memory:read", http.MethodPost, "/v8/memory/query",
			mk(tok{scopes: without(contracts.ScopeMemoryRead), compartments: reviewer, purposes: review}),
			map[string]any{"compartment": "payments", "purpose": "incident-review", "query": ""}},
		{"memory in a compartment the token lacks", http.MethodPost, "/v8/memory/query",
			mk(tok{compartments: reviewer, purposes: review}),
			map[string]any{"compartment": "hr", "purpose": "incident-review", "query": ""}},
		{"memory for a purpose the token lacks", http.MethodPost, "/v8/memory/query",
			mk(tok{compartments: reviewer, purposes: review}),
			map[string]any{"compartment": "payments", "purpose": "support", "query": ""}},
		{"memory without claims", http.MethodPost, "/v8/memory/query", mk(tok{}),
			map[string]any{"compartment": "payments", "purpose": "incident-review", "query": ""}},
		{"memory allowed", http.MethodPost, "/v8/memory/query", mk(tok{compartments: reviewer, purposes: review}),
			map[string]any{"compartment": "payments", "purpose": "incident-review", "query": "deploy"}},
		{"goals allowed", http.MethodGet, "/v8/context-twin/goals?compartment=payments&purpose=incident-review",
			mk(tok{compartments: reviewer, purposes: review}), nil},
		{"goals without context:read", http.MethodGet, "/v8/context-twin/goals?compartment=payments&purpose=incident-review",
			mk(tok{scopes: without(contracts.ScopeContextRead), compartments: reviewer, purposes: review}), nil},
		{"skill without skills:read", http.MethodGet, "/v8/skills/deploy-checklist", mk(tok{scopes: without(contracts.ScopeSkillsRead)}), nil},
		{"skill allowed", http.MethodGet, "/v8/skills/deploy-checklist", mk(tok{scopes: []string{string(contracts.ScopeSkillsRead)}}), nil},
		{"mission without missions:write", http.MethodPost, "/v8/missions",
			mk(tok{scopes: []string{string(contracts.ScopeMissionsRead)}}), map[string]any{"goal": "deploy", "definitionId": "deploy_pipeline"}},
		{"intent without missions:write", http.MethodPost, "/v8/intents",
			mk(tok{scopes: []string{string(contracts.ScopeWorldRead)}}), map[string]any{"intent": "deploy payments"}},
		{"search without capabilities:read", http.MethodPost, "/v8/capabilities/search",
			mk(tok{scopes: without(contracts.ScopeCapabilitiesRead)}), map[string]any{"query": "deploy"}},
		{"search allowed", http.MethodPost, "/v8/capabilities/search", mk(tok{}), map[string]any{"query": "deploy"}},
		{"lexicon define without lexicon:write", http.MethodPost, "/v8/praxec/command",
			mk(tok{scopes: without(contracts.ScopeLexiconWrite)}), map[string]any{"subject": "lexicon:model", "definition": map[string]any{"definition_short": "x"}}},
		{"approvals without approvals:write", http.MethodGet, "/v8/approvals", mk(tok{scopes: without(contracts.ScopeApprovalsWrite)}), nil},
		{"certificates without world:read", http.MethodGet, "/v8/world-model/certificates", mk(tok{scopes: without(contracts.ScopeWorldRead)}), nil},
	}
	run := func() []string {
		out := make([]string, len(calls))
		for i, c := range calls {
			r := h.do(t, c.method, c.path, c.token, c.body)
			out[i] = strconv.Itoa(r.Status) + " " + volatile.ReplaceAllString(string(r.Body), `"$1":"*"`)
		}
		return out
	}
	before := run()

	cert := certs.Certificate{ID: "cert-everything", Issuer: "test-lab", Subject: model,
		Capabilities: []string{"tool-use", "admin", "memory:read", "skills:read", "context:read", "missions:write", "world:read",
			"capabilities:read", "lexicon:write", "approvals:write", "compartment:hr", "purpose:support"},
		IssuedAt: "2025-01-01T00:00:00Z", ExpiresAt: "2035-01-01T00:00:00Z"}
	certs.Sign(&cert, key)
	h.importCertificates(t, "everything.json", string(certs.Marshal(cert)))
	h.importCertificates(t, "certificates.jsonl", exampleFile(t, "certificates.jsonl"))
	// The certificate is valid: the listing says so.
	m := ok(t, contracts.ToolListWorldCertificates, h.listCertificates(t, h.token(t, tok{}), url.Values{"issuer": {"test-lab"}}))
	if l := list(t, m, "certificates"); len(l) != 1 || l[0]["verification"] != certs.Valid || l[0]["subject"] != model {
		t.Fatalf("the test certificate is not listed as valid: %v", l)
	}

	after := run()
	for i := range calls {
		if before[i] != after[i] {
			t.Errorf("%s: the answer changed once a certificate existed:\nbefore %s\nafter  %s", calls[i].name, before[i], after[i])
		}
		if !strings.HasPrefix(before[i], "200 ") && !strings.HasPrefix(before[i], "403 ") {
			t.Errorf("%s: %s (the calls are meant to be allowed or refused 403)", calls[i].name, before[i])
		}
	}
}
