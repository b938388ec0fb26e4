package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// Move leases, keyed by workflow and version as in the SQLite driver.

func (t *txn) lease(k submitKey) (store.MoveLease, bool) {
	return lookup(t.leases, t.db.leases, k)
}

func (t *txn) stageLease(k submitKey, l *store.MoveLease) { stage(&t.leases, k, l) }

// GetMoveLease implements store.ReadTx.
func (t *txn) GetMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.MoveLease, error) {
	l, ok := t.lease(submitKey{workflowID, expectedVersion})
	if !ok || l.Tenant != tenant {
		return store.MoveLease{}, store.ErrNotFound
	}
	return l, nil
}

// InsertMoveLease implements store.Tx.
func (t *txn) InsertMoveLease(ctx context.Context, l store.MoveLease) error {
	t.mustWrite()
	return insert(&t.leases, t.db.leases, submitKey{l.WorkflowID, l.ExpectedVersion}, &l)
}

// DeleteMoveLease implements store.Tx.
func (t *txn) DeleteMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner string) error {
	t.mustWrite()
	k := submitKey{workflowID, expectedVersion}
	if _, err := t.heldMoveLease(k, tenant, owner); err != nil {
		return err
	}
	t.stageLease(k, nil)
	return nil
}

// heldMoveLease finds the move lease owner holds on k, of tenant.
func (t *txn) heldMoveLease(k submitKey, tenant, owner string) (store.MoveLease, error) {
	l, ok := t.lease(k)
	return l, checkTenantCAS(ok, l.Tenant, tenant, l.Owner, owner)
}

// RenewMoveLease implements store.Tx.
func (t *txn) RenewMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner, newOwner string, now, deadline time.Time) error {
	t.mustWrite()
	k := submitKey{workflowID, expectedVersion}
	l, err := t.heldMoveLease(k, tenant, owner)
	if err != nil {
		return err
	}
	if !l.Deadline.After(now) {
		return store.ErrConflict
	}
	l.Owner, l.Deadline = newOwner, deadline
	t.stageLease(k, &l)
	return nil
}

// ExpiredMoveLeases implements store.ReadTx.
func (t *txn) ExpiredMoveLeases(ctx context.Context, now time.Time, limit int) ([]store.MoveLease, error) {
	expired := func(l store.MoveLease) bool { return l.Deadline.Before(now) }
	return firstOf(view(t.leases, t.db.leases), expired, func(a, b store.MoveLease) int {
		return cmp.Or(a.Deadline.Compare(b.Deadline), cmp.Compare(a.WorkflowID, b.WorkflowID), cmp.Compare(a.ExpectedVersion, b.ExpectedVersion))
	}, limit), nil
}

// Start leases, keyed by tenant and ref as in the SQLite driver.

type startKey struct{ tenant, ref string }

func (t *txn) startLease(k startKey) (store.StartLease, bool) {
	return lookup(t.startLeases, t.db.startLeases, k)
}

func (t *txn) stageStartLease(k startKey, l *store.StartLease) {
	if l != nil {
		c := *l
		c.Response = slices.Clone(l.Response)
		l = &c
	}
	stage(&t.startLeases, k, l)
}

// GetStartLease implements store.ReadTx.
func (t *txn) GetStartLease(ctx context.Context, tenant, ref string) (store.StartLease, error) {
	l, ok := t.startLease(startKey{tenant, ref})
	if !ok {
		return store.StartLease{}, store.ErrNotFound
	}
	l.Response = slices.Clone(l.Response)
	return l, nil
}

// ExpiredStartLeases implements store.ReadTx.
func (t *txn) ExpiredStartLeases(ctx context.Context, now time.Time, limit int) ([]store.StartLease, error) {
	expired := func(l store.StartLease) bool { return l.Status == 0 && l.Deadline.Before(now) }
	out := firstOf(view(t.startLeases, t.db.startLeases), expired, func(a, b store.StartLease) int {
		return cmp.Or(a.Deadline.Compare(b.Deadline), cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Ref, b.Ref))
	}, limit)
	for i := range out {
		out[i].Response = slices.Clone(out[i].Response)
	}
	return out, nil
}

// InsertStartLease implements store.Tx.
func (t *txn) InsertStartLease(ctx context.Context, l store.StartLease) error {
	t.mustWrite()
	l.Response = slices.Clone(l.Response)
	return insert(&t.startLeases, t.db.startLeases, startKey{l.Tenant, l.Ref}, &l)
}

// heldStartLease finds the held start lease owner holds on k.
func (t *txn) heldStartLease(k startKey, owner string) (store.StartLease, error) {
	l, ok := t.startLease(k)
	switch {
	case !ok:
		return l, store.ErrNotFound
	case l.Status != 0 || l.Owner != owner:
		return l, store.ErrConflict
	}
	return l, nil
}

// DeleteStartLease implements store.Tx.
func (t *txn) DeleteStartLease(ctx context.Context, tenant, ref, owner string) error {
	t.mustWrite()
	k := startKey{tenant, ref}
	if _, err := t.heldStartLease(k, owner); err != nil {
		return err
	}
	t.stageStartLease(k, nil)
	return nil
}

// RenewStartLease implements store.Tx.
func (t *txn) RenewStartLease(ctx context.Context, tenant, ref, owner, newOwner string, now, deadline time.Time) error {
	t.mustWrite()
	k := startKey{tenant, ref}
	l, err := t.heldStartLease(k, owner)
	if err != nil {
		return err
	}
	if !l.Deadline.After(now) {
		return store.ErrConflict
	}
	l.Owner, l.Deadline = newOwner, deadline
	t.stageStartLease(k, &l)
	return nil
}

// ResolveStartLease implements store.Tx.
func (t *txn) ResolveStartLease(ctx context.Context, tenant, ref, owner string, status int, response []byte, expiresAt time.Time) error {
	t.mustWrite()
	k := startKey{tenant, ref}
	l, err := t.heldStartLease(k, owner)
	if err != nil {
		return err
	}
	l.Owner, l.Status, l.Response, l.ExpiresAt = "", status, response, expiresAt
	t.stageStartLease(k, &l)
	return nil
}
