package knowledge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
)

// TestSkill reads the example skill's versions without the store: the
// newest by default, one asked for, and the refusals of an unknown skill
// or version.
func TestSkill(t *testing.T) {
	k, _ := newKnowledge(t)
	p := &auth.Principal{Tenant: "acme"}
	out, r := mustRead(t, k, nil, contracts.ToolGetSkill, p, map[string]any{"skillId": "deploy-checklist"})
	sk := out.(knowledge.SkillAnswer)
	if sk.Version != sk.LatestVersion || sk.Version != "1.1.0" || len(sk.Versions) != 3 {
		t.Errorf("newest = %s of %+v, latest %s", sk.Version, sk.Versions, sk.LatestVersion)
	}
	if len(r.Events) != 1 || r.Events[0].Type != "skill.read" || r.Events[0].Attributes["version"] != sk.Version {
		t.Errorf("events = %+v", r.Events)
	}
	out, _, err := read(t, k, nil, contracts.ToolGetSkill, p, map[string]any{"skillId": "deploy-checklist", "version": "1.0.0"})
	if err != nil || out.(knowledge.SkillAnswer).Version != "1.0.0" {
		t.Errorf("version 1.0.0 = %+v, %v", out, err)
	}
	_, _, err = read(t, k, nil, contracts.ToolGetSkill, p, map[string]any{"skillId": "deploy-checklist", "version": "9.9.9"})
	if ce := contracts.AsError(err); ce.Code != contracts.CodeNotFound || len(ce.Links) != 1 || ce.Links[0].Rel != "latest" {
		t.Errorf("unknown version = %+v", ce)
	}
	if _, _, err := read(t, k, nil, contracts.ToolGetSkill, p, map[string]any{"skillId": "nope"}); contracts.AsError(err).Code != contracts.CodeNotFound {
		t.Errorf("unknown skill: err = %v", err)
	}
}

// TestCertificates imports the example certificates (one of each
// verification result) and lists them, verified at the knowledge's clock.
func TestCertificates(t *testing.T) {
	k, st := newKnowledge(t)
	data, err := examples.FS.ReadFile("certificates.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := k.ImportCertificates(context.Background(), nil, "certificates.jsonl", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 5 {
		t.Fatalf("import = %+v, want 5 added", rep)
	}
	out, r := mustRead(t, k, st, contracts.ToolListWorldCertificates, &auth.Principal{Tenant: "any"}, map[string]any{})
	list := out.(knowledge.CertificateList)
	got := map[string]string{}
	for _, c := range list.Certificates {
		got[c.ID] = c.Verification
	}
	want := map[string]string{"cert-tool-use-2025": certs.Valid, "cert-summaries-2023": certs.Expired, "cert-planning-2099": certs.NotYetValid,
		"cert-tampered": certs.BadSignature, "cert-unlisted-lab": certs.UnknownIssuer}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("%s: verification %q, want %q", id, got[id], v)
		}
	}
	if list.Statement != knowledge.CertificateStatement || len(r.Events) != 1 || r.Events[0].Attributes["returned"] != 5 {
		t.Errorf("statement %q, events %+v", list.Statement, r.Events)
	}
}

// TestStage: a reload's staged skills and issuers apply together, and only
// when applied; issuers that do not decode refuse the stage and change
// nothing.
func TestStage(t *testing.T) {
	k, st := newKnowledge(t)
	data, err := examples.FS.ReadFile("certificates.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.ImportCertificates(context.Background(), nil, "certificates.jsonl", strings.NewReader(string(data))); err != nil {
		t.Fatal(err)
	}
	valid := func() string {
		out, _ := mustRead(t, k, st, contracts.ToolListWorldCertificates, &auth.Principal{}, map[string]any{"issuer": "praxa-example-evals"})
		for _, c := range out.(knowledge.CertificateList).Certificates {
			if c.ID == "cert-tool-use-2025" {
				return c.Verification
			}
		}
		return ""
	}
	p := &auth.Principal{}
	skill := func() error {
		_, _, err := read(t, k, nil, contracts.ToolGetSkill, p, map[string]any{"skillId": "deploy-checklist"})
		return err
	}

	bad := &config.Config{Certificates: config.Certificates{Issuers: []config.CertificateIssuer{{ID: "x", PublicKey: "not base64"}}}}
	if _, err := k.Stage(op.Staged{Config: bad, Skills: &skills.Catalog{}}); err == nil || !strings.HasPrefix(err.Error(), "certificate issuers: ") {
		t.Fatalf("Stage(bad issuers) = %v", err)
	}
	apply, err := k.Stage(op.Staged{Config: &config.Config{}, Skills: &skills.Catalog{}})
	if err != nil {
		t.Fatal(err)
	}
	if valid() != certs.Valid || skill() != nil {
		t.Fatal("a staged configuration is in force before it is applied")
	}
	apply()
	if v := valid(); v != certs.UnknownIssuer {
		t.Errorf("after apply: verification %q, want %q", v, certs.UnknownIssuer)
	}
	if contracts.AsError(skill()).Code != contracts.CodeNotFound {
		t.Errorf("after apply: the old skills still serve")
	}
}

// TestCoverage records two runs, the second of one case only, and reads
// the merged evidence: each case's result is the last run's that ran it.
// Recording needs coverage:write, checked before the report is read.
func TestCoverage(t *testing.T) {
	k, st := newKnowledge(t)
	ctx := context.Background()
	writer := &auth.Principal{Tenant: "ops", Subject: "ci", Scopes: auth.NewScopeSet(contracts.ScopeCoverageWrite)}
	report := func(results ...map[string]any) func() (map[string]any, error) {
		list := make([]any, len(results))
		for i, r := range results {
			list[i] = r
		}
		return func() (map[string]any, error) {
			return map[string]any{"suite": "conformance", "suiteVersion": "1", "target": "http://gw", "startedAt": "2026-06-01T10:00:00Z",
				"finishedAt": "2026-06-01T10:01:00Z", "results": list}, nil
		}
	}
	loaded := false
	_, err := k.RecordCoverageRun(ctx, &auth.Principal{Tenant: "ops"}, func() (map[string]any, error) { loaded = true; return nil, nil }, "r0", "t0")
	if contracts.AsError(err).Code != contracts.CodeInsufficientScope || loaded {
		t.Fatalf("without the scope: err = %v, body read %v", err, loaded)
	}
	first, err := k.RecordCoverageRun(ctx, writer, report(
		map[string]any{"id": "c1", "operations": []any{"getSkill"}, "result": "pass", "at": "2026-06-01T10:00:30Z"},
		map[string]any{"id": "c2", "operations": []any{"getSkill", "custom.op"}, "result": "fail", "at": "2026-06-01T10:00:40Z"},
	), "r1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if first.Passed != 1 || first.Failed != 1 {
		t.Errorf("first run = %+v", first)
	}
	second, err := k.RecordCoverageRun(ctx, writer, report(
		map[string]any{"id": "c2", "operations": []any{"getSkill", "custom.op"}, "result": "pass", "at": "2026-06-01T11:00:00Z"},
	), "r2", "t2")
	if err != nil {
		t.Fatal(err)
	}
	out, r := mustRead(t, k, st, contracts.ToolGetCoverage, &auth.Principal{Tenant: "acme"}, map[string]any{"operationId": "getSkill"})
	cov := out.(knowledge.Coverage)
	if cov.Run == nil || cov.Run.RunID != second.RunID || len(cov.Operations) != 1 {
		t.Fatalf("coverage = %+v", cov)
	}
	cases := cov.Operations[0].Cases
	if len(cases) != 2 || cases[0].ID != "c1" || cases[0].Result != "pass" || cases[0].RunID != first.RunID ||
		cases[1].ID != "c2" || cases[1].Result != "pass" || cases[1].RunID != second.RunID {
		t.Errorf("cases = %+v", cases)
	}
	if len(r.Events) != 1 || r.Events[0].Type != "coverage.read" {
		t.Errorf("events = %+v", r.Events)
	}
	if out, _, err := read(t, k, st, contracts.ToolGetCoverage, &auth.Principal{}, map[string]any{"operationId": "custom.op"}); err != nil ||
		len(out.(knowledge.Coverage).Operations) != 1 {
		t.Errorf("an operation only a case names: %+v, %v", out, err)
	}
	if _, _, err := read(t, k, st, contracts.ToolGetCoverage, &auth.Principal{}, map[string]any{"operationId": "nothing"}); contracts.AsError(err).Code != contracts.CodeInvalidParams {
		t.Errorf("an unknown operation: err = %v", err)
	}

	// Each recording committed its audit event with it, named by the
	// recorder's principal.
	var events []store.Event
	err = st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		events, err = tx.TraceEvents(ctx, "ops", "t2", 10)
		return err
	})
	if err != nil || len(events) != 1 || events[0].Type != "coverage.recorded" || events[0].Subject != "ci" || events[0].Attributes["coverageRunId"] != second.RunID {
		t.Errorf("events of the second recording = %+v, %v", events, err)
	}
}

// TestTrace reads a trace of the caller's tenant, redacted; another
// tenant's trace answers not-found, as one that never existed.
func TestTrace(t *testing.T) {
	k, st := newKnowledge(t)
	ctx := context.Background()
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{
			{Type: "a.move", At: clock, Tenant: "acme", TraceID: "tr", Outcome: "allowed", Attributes: map[string]any{"token": "secret", "n": 1}},
			{Type: "b.move", At: clock, Tenant: "acme", TraceID: "tr", Outcome: "allowed"},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	out, r := mustRead(t, k, st, contracts.ToolGetTrace, &auth.Principal{Tenant: "acme"}, map[string]any{"traceId": "tr"})
	tr := out.(knowledge.TraceResult)
	if len(tr.Events) != 2 || tr.Events[0].Type != "a.move" || tr.Events[1].Type != "b.move" {
		t.Fatalf("trace = %+v", tr)
	}
	if v := tr.Events[0].Attributes["token"]; v == "secret" {
		t.Errorf("token attribute shown unredacted")
	}
	if len(r.Events) != 1 || r.Events[0].Type != "trace.read" || r.Events[0].Attributes["traceId"] != "tr" {
		t.Errorf("events = %+v", r.Events)
	}
	if _, _, err := read(t, k, st, contracts.ToolGetTrace, &auth.Principal{Tenant: "globex"}, map[string]any{"traceId": "tr"}); contracts.AsError(err).Code != contracts.CodeNotFound {
		t.Errorf("another tenant's trace: err = %v", err)
	}
}
