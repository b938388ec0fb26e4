package memstore

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
)

// Move leases, keyed by workflow and version as in the SQLite driver.

func (t *txn) lease(k submitKey) (store.MoveLease, bool) {
	if l, ok := t.leases[k]; ok {
		if l == nil {
			return store.MoveLease{}, false
		}
		return *l, true
	}
	l, ok := t.db.leases[k]
	return l, ok
}

func (t *txn) stageLease(k submitKey, l *store.MoveLease) {
	if t.leases == nil {
		t.leases = map[submitKey]*store.MoveLease{}
	}
	t.leases[k] = l
}

// applyLeases moves the staged leases (and deletions) into the DB.
func (t *txn) applyLeases() {
	if len(t.leases) == 0 {
		return
	}
	if t.db.leases == nil {
		t.db.leases = map[submitKey]store.MoveLease{}
	}
	for k, l := range t.leases {
		if l == nil {
			delete(t.db.leases, k)
		} else {
			t.db.leases[k] = *l
		}
	}
}

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
	k := submitKey{l.WorkflowID, l.ExpectedVersion}
	if _, ok := t.lease(k); ok {
		return store.ErrExists
	}
	t.stageLease(k, &l)
	return nil
}

// DeleteMoveLease implements store.Tx.
func (t *txn) DeleteMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner string) error {
	t.mustWrite()
	k := submitKey{workflowID, expectedVersion}
	l, ok := t.lease(k)
	switch {
	case !ok || l.Tenant != tenant:
		return store.ErrNotFound
	case l.Owner != owner:
		return store.ErrConflict
	}
	t.stageLease(k, nil)
	return nil
}
