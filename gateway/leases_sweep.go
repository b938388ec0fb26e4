package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// The lease sweeper: an expired move or start lease (its gateway stopped
// mid-call) is otherwise resolved only when a request next meets it. The
// sweeper resolves it without one, through the same resolveLease and
// resolveStartLease a request uses, so the recorded 504 is the same. Each
// resolution is a transaction of its own that reads the lease again and
// resolves it only if it is still there, held by the same owner and past
// its deadline; the resolution deletes (move) or resolves (start) the
// lease under a compare-and-set, so of several replicas sweeping at once
// exactly one resolves each lease and the others' transactions roll back.

// sweepBatch bounds how many leases of each kind one sweep lists.
const sweepBatch = 100

// LeaseSweepInterval is how often the lease sweep (Jobs) sweeps for a lease TTL:
// a quarter of it, bounded to [1s, 1m].
func LeaseSweepInterval(ttl time.Duration) time.Duration {
	return min(max(ttl/4, time.Second), time.Minute)
}

// sweep is one round of the lease sweep (Service.SweepLeases).
func (ls *leases) sweep(ctx context.Context) (int, error) {
	now := ls.now()
	var moves []store.MoveLease
	var starts []store.StartLease
	err := ls.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		if moves, err = tx.ExpiredMoveLeases(ctx, now, sweepBatch); err != nil {
			return err
		}
		starts, err = tx.ExpiredStartLeases(ctx, now, sweepBatch)
		return err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, l := range moves {
		done, err := ls.sweepMove(ctx, l)
		if done {
			n++
		}
		errs = append(errs, err)
	}
	for _, l := range starts {
		done, err := ls.sweepStart(ctx, l)
		if done {
			n++
		}
		errs = append(errs, err)
	}
	if n > 0 {
		ls.swept.Add(int64(n))
		ls.log.InfoContext(ctx, "expired leases resolved as outcome-unknown", "resolved", n, "move_leases", len(moves), "start_leases", len(starts))
	}
	return n, errors.Join(errs...)
}

// leaseSweeper is the lease sweeper acting in tenant, as its audit events
// name it.
func leaseSweeper(tenant string) op.Actor {
	return op.SystemActor(tenant, "lease-sweeper", "sweepLeases")
}

// sweepEnv is the env of a sweeper resolution in the lease's tenant.
func (ls *leases) sweepEnv(tenant string) *env {
	return &env{Request: leaseSweeper(tenant).Request(ls.now())}
}

// lostRace says an error means another resolver got there first.
func lostRace(err error) bool {
	var ce *contracts.Error
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) ||
		errors.As(err, &ce) && ce.Code == contracts.CodeVersionConflict
}

// sweepOne runs resolve, a sweeper's resolution of one item, in a
// transaction of its own acting as e, and appends the events e gathered
// when resolve returns without error (it gathers none when it finds
// nothing to do). It reports what resolve reported; an error meaning
// another resolver got there first (lostRace) is no error and nothing
// done.
func sweepOne(ctx context.Context, st store.Store, e *env, resolve func(ctx context.Context, tx store.Tx) (bool, error)) (bool, error) {
	var done bool
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		e.Events = e.Events[:0]
		var err error
		if done, err = resolve(ctx, tx); err != nil || len(e.Events) == 0 {
			return err
		}
		return tx.AppendEvents(ctx, e.Events)
	})
	if err != nil {
		if lostRace(err) {
			return false, nil
		}
		return false, err
	}
	return done, nil
}

// sweepMove resolves one expired move lease.
func (ls *leases) sweepMove(ctx context.Context, l store.MoveLease) (bool, error) {
	e := ls.sweepEnv(l.Tenant)
	return sweepOne(ctx, ls.store, e, func(ctx context.Context, tx store.Tx) (bool, error) {
		got, ok, err := found(tx.GetMoveLease(ctx, l.Tenant, l.WorkflowID, l.ExpectedVersion))
		switch {
		case !ok:
			return false, err
		case got.Owner != l.Owner || ls.now().Before(got.Deadline):
			return false, nil
		}
		// A lease whose version moved on is only deleted: not counted.
		return ls.resolveLease(ctx, tx, e, got)
	})
}

// sweepStart resolves one expired start lease.
func (ls *leases) sweepStart(ctx context.Context, l store.StartLease) (bool, error) {
	e := ls.sweepEnv(l.Tenant)
	return sweepOne(ctx, ls.store, e, func(ctx context.Context, tx store.Tx) (bool, error) {
		got, ok, err := found(tx.GetStartLease(ctx, l.Tenant, l.Ref))
		switch {
		case !ok:
			return false, err
		case got.Status != 0 || got.Owner != l.Owner || ls.now().Before(got.Deadline):
			return false, nil
		}
		_, err = ls.resolveStartLease(ctx, tx, e, got, nil, true)
		return err == nil, err
	})
}
