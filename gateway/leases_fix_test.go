package gateway

// Service-level tests of the leases (leases.go, leases_start.go,
// leases_sweep.go) with services built by hand on one shared store, so a
// test can run another replica's request at an exact point of this one
// (a store wrapper) and count the calls an executor receives.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
	"github.com/praxa/praxa/gateway/workflow"
)

// countingRunner answers every call with success and counts them.
type countingRunner struct{ calls atomic.Int32 }

func (r *countingRunner) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	r.calls.Add(1)
	return map[string]any{"ok": true}, nil
}

// hookStore runs before, once, on the first Update of the store it wraps
// (before that transaction begins).
type hookStore struct {
	store.Store
	once   sync.Once
	before func()
}

func (h *hookStore) Update(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	h.once.Do(func() {
		if h.before != nil {
			h.before()
		}
	})
	return h.Store.Update(ctx, fn)
}

// leaseFixService builds a service on st over testdata/lease-fix.yaml
// (deploy calls the upstream as soon as it starts; pick offers a move
// that calls, deploy, and one that does not, skip; release waits for a
// human whose approval calls); runner nil runs no executor (a
// configuration without connections: nothing it knows reaches outside).
func leaseFixService(t *testing.T, st store.Store, runner workflow.Runner, now func() time.Time) *Service {
	t.Helper()
	_, reg := compileFixture(t, "lease-fix.yaml", "testdata/lease-fix.yaml")
	var runners map[config.Kind]workflow.Runner
	if runner != nil {
		runners = map[config.Kind]workflow.Runner{config.ExecutorREST: runner}
	}
	s := New(st, &Options{Workflows: reg, Runners: runners, Now: now})
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

var leaseFixPrincipal = &auth.Principal{Tenant: "acme", Subject: "alice", Issuer: "https://issuer.test",
	Scopes: auth.NewScopeSet(contracts.Scopes()...)}

// command sends praxec.command with args, keyed when key is not empty.
func command(s *Service, key string, args map[string]any) *Result {
	return s.Invoke(context.Background(), leaseFixPrincipal, Call{Tool: contracts.ToolPraxecCommand, Surface: SurfaceREST,
		Key: key, KeySent: key != "", Args: func() (map[string]any, error) {
			// A fresh copy: the call may change what it is given.
			b, _ := json.Marshal(args)
			var out map[string]any
			d := json.NewDecoder(strings.NewReader(string(b)))
			d.UseNumber()
			return out, d.Decode(&out)
		}})
}

func wantCode(t *testing.T, what string, res *Result, code contracts.Code) {
	t.Helper()
	if res.Err == nil || res.Err.Code != code {
		t.Fatalf("%s: %d %v %s, want %s", what, res.Status, res.Err, res.Body, code)
	}
}

func wantOK(t *testing.T, what string, res *Result) map[string]any {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("%s: %v", what, res.Err)
	}
	var body map[string]any
	d := json.NewDecoder(strings.NewReader(string(res.Body)))
	d.UseNumber()
	if err := d.Decode(&body); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return body
}

func workflowOf(t *testing.T, body map[string]any) (string, int64) {
	t.Helper()
	wf, _ := body["workflow"].(map[string]any)
	id, _ := wf["id"].(string)
	v, err := wf["version"].(json.Number).Int64()
	if id == "" || err != nil {
		t.Fatalf("no workflow in %v", body)
	}
	return id, v
}

// TestStartLeaseKeyedCompletedElsewhere: replica B passes the idempotency
// fast path of a keyed start; replica A then runs the same start to
// completion (its record written, its lease deleted) before B takes its
// lease. B must find the record and call nothing: the upstream is called
// once, B answers A's answer, and no start lease is left behind.
func TestStartLeaseKeyedCompletedElsewhere(t *testing.T) {
	db := memstore.NewDB()
	runner := &countingRunner{}
	a := leaseFixService(t, memstore.Open(db), runner, nil)
	const key = "5f0c2a9e-6d1b-4c77-9d0e-2b8c1f3a7e11"
	args := map[string]any{"definitionId": "deploy"}
	var first *Result
	hs := &hookStore{Store: memstore.Open(db), before: func() { first = command(a, key, args) }}
	b := leaseFixService(t, hs, runner, nil)

	res := command(b, key, args)
	if first == nil {
		t.Fatal("B took no lease (the hook never ran)")
	}
	wantOK(t, "replica A", first)
	body := wantOK(t, "replica B", res)
	if c := runner.calls.Load(); c != 1 {
		t.Errorf("the upstream was called %d times, want 1", c)
	}
	if !res.Replayed || string(res.Body) != string(first.Body) {
		t.Errorf("B answered %s (replayed %v), want A's answer %s", res.Body, res.Replayed, first.Body)
	}
	if id, _ := workflowOf(t, body); id == "" {
		t.Error("no workflow")
	}
	// Nothing was resolved: no start lease row, no outcome-unknown.
	if n, err := b.SweepLeases(context.Background()); err != nil || n != 0 {
		t.Errorf("SweepLeases = %d, %v", n, err)
	}
	var starts []store.StartLease
	_ = hs.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		starts, err = tx.ExpiredStartLeases(ctx, time.Now().Add(time.Hour*24*365), 10)
		return err
	})
	if len(starts) != 0 {
		t.Errorf("start leases left: %+v", starts)
	}
}

// TestStartLeaseRunIDCompletedElsewhere: the same with a keyless start by
// runId: replica A completes it after B read that the runId was free and
// before B takes its lease. B must find the workflow with the runId (the
// GetMissionByRunID check of startLeaseHook) and call nothing.
func TestStartLeaseRunIDCompletedElsewhere(t *testing.T) {
	db := memstore.NewDB()
	runner := &countingRunner{}
	a := leaseFixService(t, memstore.Open(db), runner, nil)
	args := map[string]any{"definitionId": "deploy", "runId": "run-elsewhere"}
	var first *Result
	hs := &hookStore{Store: memstore.Open(db), before: func() { first = command(a, "", args) }}
	b := leaseFixService(t, hs, runner, nil)

	res := command(b, "", args)
	if first == nil {
		t.Fatal("B took no lease (the hook never ran)")
	}
	wantOK(t, "replica A", first)
	wantCode(t, "replica B", res, contracts.CodeRunIDAlreadyRunning)
	if c := runner.calls.Load(); c != 1 {
		t.Errorf("the upstream was called %d times, want 1", c)
	}
	var l store.StartLease
	err := hs.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		l, err = tx.GetStartLease(ctx, leaseFixPrincipal.Tenant, "run:run-elsewhere")
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("start lease left: %+v, %v", l, err)
	}
}

// TestLeaseCheckIgnoresDefinition: a replica whose configuration says the
// workflow does not reach outside (no connections; or a reload) still
// meets another replica's live lease: its move and its start are refused
// with 409 in progress instead of moving the version, or taking the runId,
// another gateway is calling on.
func TestLeaseCheckIgnoresDefinition(t *testing.T) {
	db := memstore.NewDB()
	st := memstore.Open(db)
	b := leaseFixService(t, st, nil, nil)
	wf, v := workflowOf(t, wantOK(t, "start", command(b, "", map[string]any{"definitionId": "pick"})))
	now := time.Now()
	if err := st.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertMoveLease(ctx, store.MoveLease{Tenant: "acme", WorkflowID: wf, ExpectedVersion: v, Transition: "deploy",
			Fingerprint: "fp", Owner: "replica-a/mv_1", CreatedAt: now, Deadline: now.Add(time.Hour)}); err != nil {
			return err
		}
		return tx.InsertStartLease(ctx, store.StartLease{Tenant: "acme", Ref: "run:run-held", DefinitionID: "deploy", Fingerprint: "fp",
			Owner: "replica-a/st_1", CreatedAt: now, Deadline: now.Add(time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "move on a leased version", command(b, "", map[string]any{"workflowId": wf, "expectedVersion": v, "transition": "skip"}),
		contracts.CodeIdempotencyInProgress)
	wantCode(t, "start of a leased runId", command(b, "", map[string]any{"definitionId": "pick", "runId": "run-held"}),
		contracts.CodeIdempotencyInProgress)
}

// TestApprovalRejectResolvesStaleLease: rejecting an approval whose
// version holds a lease past its deadline (a gateway stopped while
// approving it) resolves the lease as outcome-unknown and commits that:
// the approval is then approved with the recorded 504 (its move was
// attempted), so the rejection answers what its retry answers, and the
// approval's retry replays the 504.
func TestApprovalRejectResolvesStaleLease(t *testing.T) {
	st := memstore.New()
	runner := &countingRunner{}
	s := leaseFixService(t, st, runner, nil)
	wf, v := workflowOf(t, wantOK(t, "start", command(s, "", map[string]any{"definitionId": "release"})))
	body := wantOK(t, "ask", command(s, "", map[string]any{"workflowId": wf, "expectedVersion": v, "transition": "release"}))
	appr, _ := body["approval"].(map[string]any)
	id, _ := appr["id"].(string)
	_, v = workflowOf(t, body)
	past := time.Now().Add(-time.Hour)
	if err := st.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMoveLease(ctx, store.MoveLease{Tenant: "acme", WorkflowID: wf, ExpectedVersion: v, Transition: "release",
			Fingerprint: approvalFingerprint(id), Owner: "stopped/mv_1", CreatedAt: past.Add(-DefaultLeaseTTL), Deadline: past})
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		_, err := s.ResolveApproval(context.Background(), leaseFixPrincipal, id, false, "", "", "")
		var ce *contracts.Error
		if !errors.As(err, &ce) || ce.Code != contracts.CodeMissionStateConflict {
			t.Fatalf("reject %d: %v, want %s (the approval was approved by the stopped gateway)", i, err, contracts.CodeMissionStateConflict)
		}
	}
	_, err := s.ResolveApproval(context.Background(), leaseFixPrincipal, id, true, "", "", "")
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeOutcomeUnknown {
		t.Errorf("approve: %v, want the recorded %s", err, contracts.CodeOutcomeUnknown)
	}
	_ = st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		if l, err := tx.GetMoveLease(ctx, "acme", wf, v); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the stale lease is still there: %+v, %v", l, err)
		}
		if a, err := tx.GetApproval(ctx, "acme", id); err != nil || a.Status != "approved" {
			t.Errorf("approval %+v, %v; want approved", a, err)
		}
		if m, err := tx.GetMission(ctx, "acme", wf); err != nil || m.Version != v+1 || !strings.Contains(string(m.Doc), `"outcome":"unknown"`) {
			t.Errorf("mission %+v, %v; want version %d with the unknown outcome", m, err, v+1)
		}
		return nil
	})
	if c := runner.calls.Load(); c != 0 {
		t.Errorf("the upstream was called %d times, want 0", c)
	}
}

// TestSweepCountsOnlyRecorded: an expired lease on a version the
// workflow has moved past is deleted by the sweeper, not counted as
// resolved (nothing was recorded).
func TestSweepCountsOnlyRecorded(t *testing.T) {
	st := memstore.New()
	s := leaseFixService(t, st, &countingRunner{}, nil)
	wf, v := workflowOf(t, wantOK(t, "start", command(s, "", map[string]any{"definitionId": "pick"})))
	past := time.Now().Add(-time.Hour)
	if err := st.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMoveLease(ctx, store.MoveLease{Tenant: "acme", WorkflowID: wf, ExpectedVersion: v - 1, Transition: "deploy",
			Fingerprint: "fp", Owner: "stopped/mv_1", CreatedAt: past.Add(-DefaultLeaseTTL), Deadline: past})
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SweepLeases(context.Background()); err != nil || n != 0 || s.LeasesSwept() != 0 {
		t.Errorf("SweepLeases = %d, %v (counter %d); want 0", n, err, s.LeasesSwept())
	}
	_ = st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		if l, err := tx.GetMoveLease(ctx, "acme", wf, v-1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the lease of the moved version is still there: %+v, %v", l, err)
		}
		if m, err := tx.GetMission(ctx, "acme", wf); err != nil || m.Version != v {
			t.Errorf("mission %+v, %v; want it untouched at version %d", m, err, v)
		}
		return nil
	})
}

// TestResolvedStartLeaseExpiry: a start resolved as outcome-unknown keeps
// its record as long as the idempotency record of its key when the lease
// was keyed by the key, and for good when keyed by runId.
func TestResolvedStartLeaseExpiry(t *testing.T) {
	st := memstore.New()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := leaseFixService(t, st, &countingRunner{}, func() time.Time { return now })
	e := s.missions.leases.sweepEnv("acme")
	for _, ref := range []string{"key:ns:k", "run:r"} {
		l := store.StartLease{Tenant: "acme", Ref: ref, DefinitionID: "deploy", Fingerprint: "fp", Namespace: "ns", Key: "k",
			Operation: "praxecCommand", KeyFingerprint: "kfp", Owner: "stopped/st_1", CreatedAt: now.Add(-time.Hour), Deadline: now.Add(-time.Minute)}
		if err := st.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			if err := tx.InsertStartLease(ctx, l); err != nil {
				return err
			}
			_, err := s.missions.leases.resolveStartLease(ctx, tx, e, l, nil, true)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		if l, err := tx.GetStartLease(ctx, "acme", "key:ns:k"); err != nil || !l.ExpiresAt.Equal(now.Add(s.keys.retention)) {
			t.Errorf("key:ns:k = %+v, %v; want expiring at %v", l, err, now.Add(s.keys.retention))
		}
		if rec, err := tx.GetIdempotency(ctx, "ns", "k", now); err != nil || !rec.ExpiresAt.Equal(now.Add(s.keys.retention)) {
			t.Errorf("idempotency record %+v, %v", rec, err)
		}
		if l, err := tx.GetStartLease(ctx, "acme", "run:r"); err != nil || !l.ExpiresAt.IsZero() || l.Status != http.StatusGatewayTimeout {
			t.Errorf("run:r = %+v, %v; want a 504 kept for good", l, err)
		}
		return nil
	})
}

// renewingTx simulates a lease holder renewing its lease between a
// resolver's read of the lease and the resolver's write: the first lease
// it reads is handed to a new owner, the read answering the old one.
type renewingTx struct {
	store.Tx
	once *sync.Once
}

func (r renewingTx) GetMoveLease(ctx context.Context, tenant, workflowID string, version int64) (store.MoveLease, error) {
	l, err := r.Tx.GetMoveLease(ctx, tenant, workflowID, version)
	if err == nil {
		r.once.Do(func() {
			renewed := l
			renewed.Owner, renewed.Deadline = l.Owner+"#renewed", time.Now().Add(time.Hour)
			if err := r.Tx.DeleteMoveLease(ctx, tenant, workflowID, version, l.Owner); err == nil {
				_ = r.Tx.InsertMoveLease(ctx, renewed)
			}
		})
	}
	return l, err
}

// renewingStore hands its Update transactions a renewingTx once armed.
type renewingStore struct {
	store.Store
	armed atomic.Bool
	once  sync.Once
}

func (s *renewingStore) Update(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return s.Store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if s.armed.Load() {
			tx = renewingTx{Tx: tx, once: &s.once}
		}
		return fn(ctx, tx)
	})
}

// TestResolverLosesToRenewal: a request meets another request's lease past
// its deadline and resolves it, but the holder renews it in between (its
// clock said the lease was still live): the resolution's compare-and-set
// on the owner fails before anything is written, and the request answers
// 409 in progress, not 500, with the workflow untouched.
func TestResolverLosesToRenewal(t *testing.T) {
	st := &renewingStore{Store: memstore.New()}
	b := leaseFixService(t, st, nil, nil)
	wf, v := workflowOf(t, wantOK(t, "start", command(b, "", map[string]any{"definitionId": "pick"})))
	past := time.Now().Add(-time.Hour)
	if err := st.Store.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMoveLease(ctx, store.MoveLease{Tenant: "acme", WorkflowID: wf, ExpectedVersion: v, Transition: "deploy",
			Fingerprint: "fp", Owner: "replica-a/mv_1", CreatedAt: past, Deadline: past.Add(time.Minute)})
	}); err != nil {
		t.Fatal(err)
	}
	st.armed.Store(true)
	wantCode(t, "move on a version whose stale lease was renewed meanwhile",
		command(b, "", map[string]any{"workflowId": wf, "expectedVersion": v, "transition": "skip"}), contracts.CodeIdempotencyInProgress)
	st.armed.Store(false)
	if err := st.Store.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		m, err := tx.GetMission(ctx, "acme", wf)
		if err != nil || m.Version != v {
			t.Errorf("the workflow changed: version %d, %v; want %d", m.Version, err, v)
		}
		l, err := tx.GetMoveLease(ctx, "acme", wf, v)
		if err != nil || l.Owner != "replica-a/mv_1#renewed" {
			t.Errorf("the renewed lease: %+v, %v", l, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
