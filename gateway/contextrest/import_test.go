package contextrest_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/knowledge"
)

func outcomes(rep knowledge.ImportReport) []string {
	var out []string
	for _, it := range rep.Items {
		out = append(out, it.ID+":"+it.Outcome)
	}
	return out
}

// TestImportIdempotent: importing a file again changes nothing and
// duplicates nothing; a changed record is updated in place; records the
// file no longer names are kept.
func TestImportIdempotent(t *testing.T) {
	h := newHarness(t)
	file := exampleFile(t, "memory.jsonl")
	rep := h.importMemory(t, tenantA, file)
	if rep.Added != 6 || rep.Updated != 0 || rep.Unchanged != 0 || rep.Tenant != tenantA || rep.TraceID == "" {
		t.Fatalf("first import: %+v", rep)
	}
	rep = h.importMemory(t, tenantA, file)
	if rep.Added != 0 || rep.Updated != 0 || rep.Unchanged != 6 {
		t.Fatalf("second import: %+v", rep)
	}
	changed := `{"id":"mem-002","compartment":"payments","purposes":["incident-review"],"content":"Rewritten.","tags":["deploy"],"createdAt":"2025-03-05T09:00:00Z"}
{"id":"mem-777","compartment":"payments","purposes":["incident-review"],"content":"New."}
`
	rep = h.importMemory(t, tenantA, changed)
	if got := outcomes(rep); !slices.Equal(got, []string{"mem-002:updated", "mem-777:added"}) {
		t.Errorf("partial import: %v", got)
	}
	tk := h.reviewer(t)
	m := ok(t, contracts.ToolQueryMemory, h.queryMemory(t, tk, map[string]any{"compartment": "payments", "purpose": "incident-review", "query": "", "limit": 100}))
	recs := list(t, m, "records")
	// mem-777 has no createdAt: it is the import's (the service clock),
	// the newest.
	if got := ids(recs); !slices.Equal(got, []string{"mem-777", "mem-002", "mem-001", "mem-005"}) {
		t.Errorf("after the updates: %v", got)
	}
	if recs[1]["content"] != "Rewritten." {
		t.Errorf("mem-002 was not updated: %v", recs[1])
	}
	// A record without createdAt keeps the one it was first given.
	again := h.importMemory(t, tenantA, `{"id":"mem-001","compartment":"payments","purposes":["incident-review","support"],"content":"Edited.","tags":["deploy","rollback","incident"]}`+"\n")
	if got := outcomes(again); !slices.Equal(got, []string{"mem-001:updated"}) {
		t.Errorf("mem-001 edit: %v", got)
	}
	m = ok(t, contracts.ToolQueryMemory, h.queryMemory(t, tk, map[string]any{"compartment": "payments", "purpose": "incident-review", "query": "edited"}))
	if r := list(t, m, "records"); len(r) != 1 || r[0]["createdAt"] != "2025-03-02T14:20:00Z" {
		t.Errorf("mem-001 after the edit: %v", r)
	}

	// Certificates and goals follow the same rule.
	certsFile := exampleFile(t, "certificates.jsonl")
	if rep := h.importCertificates(t, "c.jsonl", certsFile); rep.Added != 5 {
		t.Errorf("certificates: %+v", rep)
	}
	if rep := h.importCertificates(t, "c.jsonl", certsFile); rep.Unchanged != 5 || rep.Added+rep.Updated != 0 {
		t.Errorf("certificates again: %+v", rep)
	}
	rep = h.importCertificates(t, "c.jsonl", certsFile)
	var verifications []string
	for _, it := range rep.Items {
		verifications = append(verifications, it.ID+":"+it.Verification)
	}
	if !slices.Contains(verifications, "cert-tool-use-2025:valid") || !slices.Contains(verifications, "cert-tampered:bad_signature") {
		t.Errorf("import verifications: %v", verifications)
	}
	goals := exampleFile(t, "goals.jsonl")
	if rep := h.importGoals(t, tenantA, goals); rep.Added != 5 {
		t.Errorf("goals: %+v", rep)
	}
	if rep := h.importGoals(t, tenantA, goals); rep.Unchanged != 5 {
		t.Errorf("goals again: %+v", rep)
	}
}

// TestImportRefusals: every problem is reported with its line and field,
// and a file with any problem writes nothing.
func TestImportRefusals(t *testing.T) {
	h := newHarness(t)
	bad := strings.Join([]string{
		`{"id":"ok-1","compartment":"payments","purposes":["incident-review"],"content":"fine"}`,
		``,
		`{"id":"no content","compartment":"payments","purposes":["incident-review"]}`,
		`{"id":"ok-2","compartment":"payments","purposes":[],"content":"x","tags":["a","a"]}`,
		`not json`,
		`{"id":"ok-1","compartment":"payments","purposes":["incident-review"],"content":"again"}`,
		`{"id":"ok-3","compartment":"payments","purposes":["incident-review"],"content":"x","tenant":"globex"}`,
		`{"id":"ok-4","compartment":"payments","purposes":["incident-review"],"content":"x","secret":true}`,
		`{"id":"ok-5","id":"ok-6","compartment":"payments","purposes":["incident-review"],"content":"x"}`,
		`{"id":"ok-7","compartment":"payments","purposes":["incident-review"],"content":"x","createdAt":"yesterday"}`,
		`[1]`,
	}, "\n")
	_, err := h.k.ImportMemory(context.Background(), nil, tenantA, "bad.jsonl", strings.NewReader(bad))
	var le *config.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("%T %v", err, err)
	}
	msg := err.Error()
	for _, want := range []string{
		"bad.jsonl:3: content: is required",
		"bad.jsonl:3: id: must match the pattern",
		"bad.jsonl:4: purposes: must have at least 1 items",
		"bad.jsonl:4: tags: must not contain duplicate items",
		"bad.jsonl:5: ",
		"bad.jsonl:6: id: repeats the id ok-1 of line 1",
		"bad.jsonl:7: tenant: is not a field of the file",
		"bad.jsonl:8: secret: is not a known field",
		"bad.jsonl:9: ",
		"bad.jsonl:10: createdAt: must be a valid date-time",
		"bad.jsonl:11: ",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "bad.jsonl:1:") || strings.Contains(msg, "bad.jsonl:2:") {
		t.Errorf("a valid or blank line was reported:\n%s", msg)
	}
	// Nothing was written, not even the valid first line.
	m := ok(t, contracts.ToolQueryMemory, h.queryMemory(t, h.reviewer(t), map[string]any{"compartment": "payments", "purpose": "incident-review", "query": ""}))
	if len(list(t, m, "records")) != 0 {
		t.Errorf("a refused import wrote records: %v", m)
	}

	if _, err := h.k.ImportMemory(context.Background(), nil, "", "x.jsonl", strings.NewReader("")); err == nil {
		t.Error("an import without tenant was accepted")
	}
	_, err = h.k.ImportGoals(context.Background(), nil, tenantA, "g.jsonl", strings.NewReader(
		`{"id":"g1","compartment":"payments","purposes":["p"],"title":"t","status":"done"}`+"\n"))
	if err == nil || !strings.Contains(err.Error(), "g.jsonl:1: status: must be one of the allowed values") {
		t.Errorf("goal status: %v", err)
	}
	_, err = h.k.ImportCertificates(context.Background(), nil, "c.json", strings.NewReader(
		"[\n"+`{"id":"c1"}`+",\n\n  "+`{"id":"c2","issuer":"x","subject":"m","capabilities":["a"],"issuedAt":"2025-01-01T00:00:00Z","expiresAt":"2024-01-01T00:00:00Z","signature":"`+strings.Repeat("A", 86)+`=="}`+"\n]"))
	if err == nil || !strings.Contains(err.Error(), "c.json:2: [0].issuer: is required") || !strings.Contains(err.Error(), "c.json:4: [1].expiresAt: must be after issuedAt") {
		t.Errorf("certificate array: %v", err)
	}
	_, err = h.k.ImportCertificates(context.Background(), nil, "c.json", strings.NewReader(`{"id":"c1","id":"c2"}`))
	if err == nil || !strings.Contains(err.Error(), "c.json:1: ") {
		t.Errorf("certificate object: %v", err)
	}
}
