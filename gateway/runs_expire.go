package gateway

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// The run sweeper: a run of proxy_default has no end of its own (its one
// working state, running, is not terminal), so without it every run an
// agent starts stays active in the store for good. The sweeper moves each
// run idle longer than the run retention (proxy.runRetention: no move for
// that long) to the terminal state expired (workflow.ExpiredState), with
// a workflow.expired audit event in the run's tenant.
//
// A run is listed from the store's index of idle runs (IdleMissions),
// then each is expired in a transaction of its own that reads it again
// (locking its row on PostgreSQL), checks that it is still active, still
// idle past the retention, holds no move lease on its version (a call in
// flight, or one the lease sweeper resolves) and waits for no approval,
// and writes the new state with a compare-and-set on its version and the
// event together. A move that races it either commits first (the run is
// no longer idle, or the compare-and-set fails and the sweeper skips it)
// or finds the run expired (INVALID_TRANSITION, as on any ended
// workflow); a move that takes its lease first makes the sweeper skip the
// run, and one that takes it after finds the version moved and calls
// nothing. Of several replicas sweeping at once, exactly one expires each
// run; the others' transactions write nothing.

// The bounds of one sweep: it lists runBatch runs at a time, at most
// runBatches times, and expires up to runWorkers of them at once (each a
// durable transaction of its own, which the store may commit together).
const (
	runBatch   = 100
	runBatches = 10
	runWorkers = 4
)

// runExpiry is the run sweeper's state in the missions.
type runExpiry struct {
	// retention is the run retention in force, in nanoseconds; 0 keeps
	// runs for good. A reload replaces it.
	retention atomic.Int64
	// expired counts the runs this process expired.
	expired atomic.Int64
	// mu makes the sweeps of one process take turns; it guards cursor,
	// where the next sweep resumes when the last one stopped at its bound.
	mu     sync.Mutex
	cursor store.MissionCursor
}

// setRetention makes d the run retention in force (a negative d is 0).
func (r *runExpiry) setRetention(d time.Duration) { r.retention.Store(int64(max(d, 0))) }

// current returns the run retention in force (0: runs are kept for good).
func (r *runExpiry) current() time.Duration { return time.Duration(r.retention.Load()) }

// RunSweepInterval is how often the run sweep (Jobs) sweeps for a run retention:
// a quarter of it, bounded to [1s, 1m] (and a minute while expiry is off,
// to see a reload turn it on).
func RunSweepInterval(retention time.Duration) time.Duration {
	if retention <= 0 {
		return time.Minute
	}
	return min(max(retention/4, time.Second), time.Minute)
}

// runSweepCatchUp is the pause before the next sweep when the last one
// stopped at its bound with idle runs left.
const runSweepCatchUp = time.Second

// sweepRuns is one sweep: it returns how many runs it expired, and more
// when it stopped at its bound with idle runs left to look at.
func (ms *missions) sweepRuns(ctx context.Context) (n int, more bool, err error) {
	retention := ms.runs.current()
	if retention <= 0 {
		return 0, false, nil
	}
	ms.runs.mu.Lock()
	defer ms.runs.mu.Unlock()
	cutoff := ms.now().Add(-retention)
	cursor := ms.runs.cursor
	skipped := 0
	more = true
	var errs []error
	for range runBatches {
		var page, due []store.Mission
		err := ms.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			var err error
			page, due, err = ms.idleRuns(ctx, tx, cutoff, cursor)
			return err
		})
		if err != nil {
			errs = append(errs, err)
			more = false
			break
		}
		if len(page) > 0 {
			last := page[len(page)-1]
			cursor = store.MissionCursor{UpdatedAt: last.UpdatedAt, ID: last.ID}
		}
		skipped += len(page) - len(due)
		done, err := ms.expireRuns(ctx, due, retention)
		n += done
		if err != nil {
			errs = append(errs, err)
			more = false
		}
		if len(page) < runBatch {
			// The end of the idle runs: the next sweep starts over, and
			// sees again the runs skipped here (a lease, an approval).
			cursor, more = store.MissionCursor{}, false
			break
		}
		if !more || ctx.Err() != nil {
			more = false
			break
		}
	}
	// A sweep that stopped early (its bound, a failure) resumes where it
	// was.
	ms.runs.cursor = cursor
	if n > 0 {
		ms.log.InfoContext(ctx, "idle proxy_default runs expired", "expired", n, "skipped", skipped, "retention", retention.String())
	}
	return n, more, errors.Join(errs...)
}

// idleRuns lists a page of the proxy_default runs last changed before
// cutoff, from cursor, and the ones among them the sweeper should expire:
// no approval pending, no move lease on their version. The transaction
// that expires a run checks both again.
func (ms *missions) idleRuns(ctx context.Context, tx store.ReadTx, cutoff time.Time, cursor store.MissionCursor) (page, due []store.Mission, err error) {
	page, err = tx.IdleMissions(ctx, config.ProxyDefaultWorkflow, cutoff, cursor, runBatch)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range page {
		ok, err := expirable(ctx, tx, m)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			due = append(due, m)
		}
	}
	return page, due, nil
}

// expirable reports whether the run m holds neither a move lease on its
// version nor a pending approval, and no move parked on a sub-workflow
// (waits.go: the child's end or the wait's timeoutMs ends it).
func expirable(ctx context.Context, tx store.ReadTx, m store.Mission) (bool, error) {
	if _, err := tx.GetMoveLease(ctx, m.Tenant, m.ID, m.Version); err == nil {
		return false, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	in, err := fromStore(m)
	if err != nil {
		return false, err
	}
	return in.Pending == nil && in.Waiting == nil, nil
}

// expireRuns expires the runs, up to runWorkers at once, and returns how
// many it expired.
func (ms *missions) expireRuns(ctx context.Context, runs []store.Mission, retention time.Duration) (int, error) {
	var (
		mu   sync.Mutex
		n    int
		errs []error
		wg   sync.WaitGroup
	)
	work := make(chan store.Mission)
	for range min(runWorkers, len(runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				done, err := ms.expireRun(ctx, m, retention)
				mu.Lock()
				if done {
					n++
				}
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	for _, m := range runs {
		if ctx.Err() != nil {
			break
		}
		work <- m
	}
	close(work)
	wg.Wait()
	return n, errors.Join(errs...)
}

// expireRun expires one run listed idle, in a transaction of its own that
// reads the run again and expires it only if it still is an active
// proxy_default run, idle past the retention, with no move lease on its
// version and no approval pending. It reports whether it expired it; a
// run another replica or a move changed first is skipped without error.
func (ms *missions) expireRun(ctx context.Context, listed store.Mission, retention time.Duration) (bool, error) {
	now := ms.now()
	e := &env{Request: op.SystemActor(listed.Tenant, "run-sweeper", "expireRuns").Request(now)}
	e.TraceID = newTraceID()
	done, err := sweepOne(ctx, ms.store, e, func(ctx context.Context, tx store.Tx) (bool, error) {
		// The run first (on PostgreSQL this locks its row, so a move's
		// lease is either committed before, and read below, or taken
		// after this transaction, on a version that moved), then its
		// lease.
		m, ok, err := found(tx.GetMission(ctx, listed.Tenant, listed.ID))
		switch {
		case !ok:
			return false, err
		case m.DefinitionID != config.ProxyDefaultWorkflow || m.Status != "active" || !m.UpdatedAt.Before(now.Add(-retention)):
			return false, nil
		}
		if ok, err := expirable(ctx, tx, m); err != nil || !ok {
			return false, err
		}
		in, err := fromStore(m)
		if err != nil {
			return false, err
		}
		out, err := ms.engine.Expire(in, map[string]any{
			"at":        now.UTC().Format(time.RFC3339Nano),
			"idleSince": m.UpdatedAt.UTC().Format(time.RFC3339Nano),
			"retention": retention.String(),
			"traceId":   e.TraceID,
		})
		if err != nil {
			// Not a proxy run at rest after all (a definition the
			// registry no longer marks as the proxy's): left as it is.
			var ce *contracts.Error
			if errors.As(err, &ce) && ce.Code == contracts.CodeMissionStateConflict {
				return false, nil
			}
			return false, err
		}
		err = ms.persist(ctx, tx, e, out, in, m)
		return err == nil, err
	})
	if err != nil {
		return false, err
	}
	if done {
		ms.runs.expired.Add(1)
	}
	return done, nil
}
