package knowledge_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
)

// clock is the knowledge's clock: the example certificates are valid from
// 2025 and the one not yet valid from 2099.
var clock = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// newKnowledge builds a Knowledge of the example configuration on a fresh
// memstore.
func newKnowledge(t testing.TB) (*knowledge.Knowledge, store.Store) {
	t.Helper()
	_, cat, issuers := gatewaytest.ExampleKnowledge(t)
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	return knowledge.New(st, &knowledge.Options{Now: func() time.Time { return clock }, Skills: cat, CertificateIssuers: issuers}), st
}

// reader is a principal of tenant acme who may read payments for
// incident-review.
func reader() *auth.Principal {
	return &auth.Principal{Tenant: "acme", Subject: "alice", Compartments: []string{"payments"}, Purposes: []string{"incident-review"}}
}

// read runs k's operation of tool with args for p the way the service
// runs a read (in one read transaction, none when storeless), and returns
// its answer, its request (with the events it recorded) and its error.
func read(t testing.TB, k *knowledge.Knowledge, st store.Store, tool string, p *auth.Principal, args map[string]any) (any, *op.Request, error) {
	t.Helper()
	ct, ok := contracts.Lookup(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	i := slices.IndexFunc(k.Operations(), func(o op.Operation) bool { return o.Name == ct.OperationID })
	if i < 0 {
		t.Fatalf("Knowledge serves no %s", ct.OperationID)
	}
	o := k.Operations()[i]
	r := &op.Request{Principal: p, Tool: ct, Args: args, RequestID: "req-1", TraceID: "trace-1", Now: clock}
	var out any
	var err error
	if o.Storeless {
		out, err = o.Read(context.Background(), nil, r)
		return out, r, err
	}
	err = st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		out, err = o.Read(ctx, tx, r)
		return err
	})
	return out, r, err
}

// mustRead is read for a read that must succeed: its error fails t.
func mustRead(t testing.TB, k *knowledge.Knowledge, st store.Store, tool string, p *auth.Principal, args map[string]any) (any, *op.Request) {
	t.Helper()
	out, r, err := read(t, k, st, tool, p, args)
	if err != nil {
		t.Fatal(err)
	}
	return out, r
}

// TestOperations: Knowledge serves one operation per contract tool it
// owns, each a read, only aura_get_skill without the store.
func TestOperations(t *testing.T) {
	k, _ := newKnowledge(t)
	var names []string
	for _, o := range k.Operations() {
		if o.Read == nil || o.Mutate != nil {
			t.Errorf("%s: want a read", o.Name)
		}
		if _, ok := contracts.ByOperationID(o.Name); !ok {
			t.Errorf("%s is no contract operation", o.Name)
		}
		if o.Storeless != (o.Name == "getSkill") {
			t.Errorf("%s: Storeless = %v", o.Name, o.Storeless)
		}
		names = append(names, o.Name)
	}
	slices.Sort(names)
	want := []string{"getCoverage", "getSkill", "getTrace", "listGoals", "listWorldCertificates", "queryMemory"}
	if !slices.Equal(names, want) {
		t.Errorf("operations = %v, want %v", names, want)
	}
}

// TestMemory imports the example memory and goals and reads them back:
// ranked, filtered by compartment and purpose, refused outside the token's
// claims, one audit event per read.
func TestMemory(t *testing.T) {
	k, st := newKnowledge(t)
	ctx := context.Background()
	mem, err := examples.FS.ReadFile("memory.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := k.ImportMemory(ctx, nil, "acme", "memory.jsonl", strings.NewReader(string(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added == 0 || rep.Updated+rep.Unchanged != 0 || !strings.HasPrefix(rep.TraceID, "import_") {
		t.Fatalf("first import = %+v", rep)
	}
	again, err := k.ImportMemory(ctx, nil, "acme", "memory.jsonl", strings.NewReader(string(mem)))
	if err != nil || again.Unchanged != rep.Added || again.Added != 0 {
		t.Fatalf("second import = %+v, %v; want all %d unchanged", again, err, rep.Added)
	}

	out, r := mustRead(t, k, st, contracts.ToolQueryMemory, reader(), map[string]any{"compartment": "payments", "purpose": "incident-review", "query": "deploy rollback"})
	res := out.(knowledge.MemoryResult)
	if len(res.Records) == 0 || res.Records[0].ID != "mem-001" {
		t.Fatalf("records = %+v, want mem-001 first", res.Records)
	}
	for i, rec := range res.Records {
		if rec.ID == "mem-003" {
			t.Errorf("mem-003 serves support only, yet was returned")
		}
		if i > 0 && rec.Score > res.Records[i-1].Score {
			t.Errorf("records not best first: %+v", res.Records)
		}
	}
	if len(r.Events) != 1 || r.Events[0].Type != "memory.queried" || r.Events[0].Tenant != "acme" || r.Events[0].Attributes["returned"] != len(res.Records) {
		t.Errorf("events = %+v", r.Events)
	}

	// Another tenant holds nothing.
	other := reader()
	other.Tenant = "globex"
	out, _, err = read(t, k, st, contracts.ToolQueryMemory, other, map[string]any{"compartment": "payments", "purpose": "incident-review", "query": ""})
	if err != nil || len(out.(knowledge.MemoryResult).Records) != 0 {
		t.Errorf("another tenant's read = %+v, %v", out, err)
	}

	for _, tt := range []struct {
		name string
		args map[string]any
		want contracts.Code
	}{
		{"CompartmentForbidden", map[string]any{"compartment": "hr", "purpose": "incident-review", "query": ""}, contracts.CodeCompartmentForbidden},
		{"PurposeForbidden", map[string]any{"compartment": "payments", "purpose": "support", "query": ""}, contracts.CodePurposeForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, r, err := read(t, k, st, contracts.ToolQueryMemory, reader(), tt.args)
			if contracts.AsError(err).Code != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
			ce := contracts.AsError(err)
			if last := ce.Links[len(ce.Links)-1]; last.Rel != "authorization" || last.Method != "GET "+op.ResourceMetadataPath {
				t.Errorf("last link = %+v, want the authorization link", last)
			}
			if len(r.Events) != 0 {
				t.Errorf("a refused read recorded %+v", r.Events)
			}
		})
	}

	goals, err := examples.FS.ReadFile("goals.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.ImportGoals(ctx, nil, "acme", "goals.jsonl", strings.NewReader(string(goals))); err != nil {
		t.Fatal(err)
	}
	out, r = mustRead(t, k, st, contracts.ToolListGoals, reader(), map[string]any{"compartment": "payments", "purpose": "incident-review", "status": "active"})
	var ids []string
	for _, g := range out.(knowledge.GoalList).Goals {
		ids = append(ids, g.ID)
	}
	if !slices.Equal(ids, []string{"goal-001", "goal-002"}) || len(r.Events) != 1 || r.Events[0].Type != "goals.listed" {
		t.Errorf("goals = %v, events %+v", ids, r.Events)
	}
}

// TestImportRefused: a bad file writes nothing and names each problem by
// line and field; an import past the tenant's quota (gateway.Service's
// quotas, Options.Quota) writes nothing either.
func TestImportRefused(t *testing.T) {
	k, st := newKnowledge(t)
	ctx := context.Background()
	bad := `{"id":"m1","compartment":"payments","purposes":["support"],"content":"ok"}
{"id":"m2","compartment":"payments","purposes":[],"content":"no purpose"}
{"id":"m1","compartment":"payments","purposes":["support"],"content":"again"}
`
	_, err := k.ImportMemory(ctx, nil, "acme", "bad.jsonl", strings.NewReader(bad))
	var le *config.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *config.LoadError", err)
	}
	got := strings.Join(le.Lines(), "\n")
	for _, want := range []string{"bad.jsonl:2", "purposes", "bad.jsonl:3", "repeats the id m1 of line 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q do not name %q", got, want)
		}
	}
	out, _, err := read(t, k, st, contracts.ToolQueryMemory, &auth.Principal{Tenant: "acme", Compartments: []string{"payments"}, Purposes: []string{"support"}},
		map[string]any{"compartment": "payments", "purpose": "support", "query": ""})
	if err != nil || len(out.(knowledge.MemoryResult).Records) != 0 {
		t.Fatalf("after a refused import: %+v, %v", out, err)
	}

	svc := gateway.New(st, &gateway.Options{Quotas: config.Quotas{MemoryRecords: 1}})
	t.Cleanup(func() { svc.Close(context.Background()) })
	limited := knowledge.New(st, &knowledge.Options{Now: func() time.Time { return clock }, Quota: svc})
	two := `{"id":"m1","compartment":"payments","purposes":["support"],"content":"one"}
{"id":"m2","compartment":"payments","purposes":["support"],"content":"two"}
`
	if _, err := limited.ImportMemory(ctx, nil, "acme", "two.jsonl", strings.NewReader(two)); contracts.AsError(err).Code != contracts.CodeQuotaExceeded {
		t.Fatalf("import past the quota: err = %v, want %s", err, contracts.CodeQuotaExceeded)
	}
}
