package memstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/praxa/praxa/gateway/store"
)

// The commands paused on unknown subjects, keyed as in the SQLite driver.
// A transaction stages puts and deletes (nil) in a map of its own.

type pendingKey struct{ tenant, subject, command string }

func copyPending(p store.PendingSubject) store.PendingSubject {
	p.Doc = append([]byte{}, p.Doc...)
	return p
}

// applyPending moves the staged writes into the DB.
func (t *txn) applyPending() {
	if len(t.pending) == 0 {
		return
	}
	if t.db.pending == nil {
		t.db.pending = map[pendingKey]store.PendingSubject{}
	}
	for k, p := range t.pending {
		if p == nil {
			delete(t.db.pending, k)
		} else {
			t.db.pending[k] = *p
		}
	}
}

// pendingView returns the rows as this transaction sees them.
func (t *txn) pendingView() map[pendingKey]store.PendingSubject {
	out := make(map[pendingKey]store.PendingSubject, len(t.db.pending))
	for k, p := range t.db.pending {
		out[k] = p
	}
	for k, p := range t.pending {
		if p == nil {
			delete(out, k)
		} else {
			out[k] = *p
		}
	}
	return out
}

// ListPendingSubjects implements store.ReadTx.
func (t *txn) ListPendingSubjects(ctx context.Context, tenant, subjectKey string) ([]store.PendingSubject, error) {
	var out []store.PendingSubject
	for k, p := range t.pendingView() {
		if k.tenant == tenant && (subjectKey == "" || k.subject == subjectKey) {
			out = append(out, copyPending(p))
		}
	}
	slices.SortFunc(out, func(a, b store.PendingSubject) int {
		return cmp.Or(cmp.Compare(a.SubjectKey, b.SubjectKey), cmp.Compare(a.CommandKey, b.CommandKey))
	})
	return out, nil
}

// PutPendingSubject implements store.Tx.
func (t *txn) PutPendingSubject(ctx context.Context, p store.PendingSubject) error {
	t.mustWrite()
	p = copyPending(p)
	p.CreatedAt = normTime(p.CreatedAt)
	if t.pending == nil {
		t.pending = map[pendingKey]*store.PendingSubject{}
	}
	t.pending[pendingKey{p.Tenant, p.SubjectKey, p.CommandKey}] = &p
	return nil
}

// DeletePendingSubjects implements store.Tx.
func (t *txn) DeletePendingSubjects(ctx context.Context, tenant, subjectKey, commandKey string) (int, error) {
	t.mustWrite()
	n := 0
	for k := range t.pendingView() {
		if k.tenant == tenant && (subjectKey == "" || k.subject == subjectKey) && (commandKey == "" || k.command == commandKey) {
			if t.pending == nil {
				t.pending = map[pendingKey]*store.PendingSubject{}
			}
			t.pending[k] = nil
			n++
		}
	}
	return n, nil
}
