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

// ListPendingSubjects implements store.ReadTx.
func (t *txn) ListPendingSubjects(ctx context.Context, tenant, subjectKey string) ([]store.PendingSubject, error) {
	var out []store.PendingSubject
	for k, p := range view(t.pending, t.db.pending) {
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
	stage(&t.pending, pendingKey{p.Tenant, p.SubjectKey, p.CommandKey}, &p)
	return nil
}

// DeletePendingSubjects implements store.Tx.
func (t *txn) DeletePendingSubjects(ctx context.Context, tenant, subjectKey, commandKey string) (int, error) {
	t.mustWrite()
	n := 0
	for k := range view(t.pending, t.db.pending) {
		if k.tenant == tenant && (subjectKey == "" || k.subject == subjectKey) && (commandKey == "" || k.command == commandKey) {
			stage(&t.pending, k, nil)
			n++
		}
	}
	return n, nil
}
