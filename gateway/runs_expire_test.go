package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
	"github.com/praxa/praxa/gateway/workflow"
)

func TestRunSweepInterval(t *testing.T) {
	for retention, want := range map[time.Duration]time.Duration{
		0:                          time.Minute,
		2 * time.Second:            time.Second,
		8 * time.Second:            2 * time.Second,
		config.DefaultRunRetention: time.Minute,
		365 * 24 * time.Hour:       time.Minute,
	} {
		if got := RunSweepInterval(retention); got != want {
			t.Errorf("RunSweepInterval(%v) = %v, want %v", retention, got, want)
		}
	}
}

// runSweepService is a service on a memstore holding proxy runs written
// straight into it: idle ones (changed two hours before now) and, first
// in the sweeper's order, leased ones (a live move lease on their
// version).
func runSweepService(t *testing.T, idle, leased int) (*Service, store.Store) {
	t.Helper()
	reg, err := workflow.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.AddProxy(nil); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	st := memstore.New()
	s := New(st, &Options{Workflows: reg, RunRetention: time.Hour, Now: func() time.Time { return now }})
	t.Cleanup(func() { s.Close(context.Background()) })
	err = st.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for i := range leased + idle {
			id := fmt.Sprintf("wf_%05d", i)
			at := now.Add(-2*time.Hour + time.Duration(i)*time.Millisecond)
			if err := tx.InsertMission(ctx, store.Mission{Tenant: "acme", ID: id, RunID: id, DefinitionID: config.ProxyDefaultWorkflow,
				DefinitionVersion: 1, State: workflow.ProxyState, Version: 2, Status: "active",
				Doc: []byte(`{"context":{},"input":{},"evidence":[]}`), CreatedAt: at, UpdatedAt: at}); err != nil {
				return err
			}
			if i < leased {
				if err := tx.InsertMoveLease(ctx, store.MoveLease{Tenant: "acme", WorkflowID: id, ExpectedVersion: 2, Transition: "x",
					Owner: "gw_other/mv", CreatedAt: now, Deadline: now.Add(time.Hour)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// TestRunSweepBounded: one sweep expires at most runBatches pages of
// runBatch runs and says more are left; the next resumes after them.
func TestRunSweepBounded(t *testing.T) {
	const bound = runBatch * runBatches
	s, _ := runSweepService(t, bound+runBatch/2, 0)
	ctx := context.Background()
	n, more, err := s.missions.sweepRuns(ctx)
	if err != nil || n != bound || !more {
		t.Fatalf("first sweep: %d, more %v, %v; want %d and more", n, more, err, bound)
	}
	n, more, err = s.missions.sweepRuns(ctx)
	if err != nil || n != runBatch/2 || more {
		t.Fatalf("second sweep: %d, more %v, %v; want %d and no more", n, more, err, runBatch/2)
	}
	if got := s.RunsExpired(); got != bound+runBatch/2 {
		t.Errorf("RunsExpired() = %d", got)
	}
}

// TestRunSweepPagesPastSkippedRuns: runs the sweeper must skip (here more
// than a page of leased runs, the oldest) do not keep it from the idle
// runs after them, and are looked at again once their lease is gone.
func TestRunSweepPagesPastSkippedRuns(t *testing.T) {
	const leased, idle = runBatch + runBatch/2, 10
	s, st := runSweepService(t, idle, leased)
	ctx := context.Background()
	if n, err := s.SweepIdleRuns(ctx); err != nil || n != idle {
		t.Fatalf("sweep: %d, %v; want the %d idle runs after the %d leased ones", n, err, idle, leased)
	}
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		for i := range leased {
			if err := tx.DeleteMoveLease(ctx, "acme", fmt.Sprintf("wf_%05d", i), 2, "gw_other/mv"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.SweepIdleRuns(ctx); err != nil || n != leased {
		t.Fatalf("sweep after the leases went: %d, %v; want %d", n, err, leased)
	}
	if n, err := s.SweepIdleRuns(ctx); err != nil || n != 0 {
		t.Errorf("a last sweep: %d, %v; want 0", n, err)
	}
}

// TestRunSweepOff: with a retention of 0 nothing expires.
func TestRunSweepOff(t *testing.T) {
	s, _ := runSweepService(t, 5, 0)
	s.Reload(context.Background(), Runtime{Workflows: s.workflows})
	if n, err := s.SweepIdleRuns(context.Background()); err != nil || n != 0 || s.RunRetention() != 0 {
		t.Errorf("retention 0: %d expired, %v (retention %v)", n, err, s.RunRetention())
	}
}

// TestRunSweepResumes: when more runs than one sweep looks at must be
// skipped, the next sweep resumes where the last stopped instead of
// listing the same skipped runs again, so the idle runs after them
// expire.
func TestRunSweepResumes(t *testing.T) {
	const bound = runBatch * runBatches
	s, _ := runSweepService(t, 10, bound+runBatch/2)
	ctx := context.Background()
	n, more, err := s.missions.sweepRuns(ctx)
	if err != nil || n != 0 || !more {
		t.Fatalf("first sweep (only leased runs): %d, more %v, %v; want 0 and more", n, more, err)
	}
	n, more, err = s.missions.sweepRuns(ctx)
	if err != nil || n != 10 || more {
		t.Fatalf("second sweep: %d, more %v, %v; want the 10 idle runs and no more", n, more, err)
	}
}
