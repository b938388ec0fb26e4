package sqltx

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the commands paused on unknown subjects (migration 0006).

// ListPendingSubjects implements store.PendingReadTx.
func (t *Tx) ListPendingSubjects(ctx context.Context, tenant, subjectKey string) ([]store.PendingSubject, error) {
	return list(ctx, t, "list pending subjects", "pending subject", sqlrow.PendingSubject, `SELECT `+sqlrow.PendingColumns+`
		FROM pending_subjects WHERE tenant = ? AND (? = '' OR subject_key = ?) ORDER BY subject_key, command_key`,
		unlimited, tenant, subjectKey, subjectKey)
}

// PutPendingSubject implements store.PendingTx.
func (t *Tx) PutPendingSubject(ctx context.Context, p store.PendingSubject) error {
	return t.put(ctx, "put pending subject", `INSERT INTO pending_subjects (`+sqlrow.PendingColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant, subject_key, command_key) DO UPDATE SET subject = excluded.subject, doc = excluded.doc,
			created_by = excluded.created_by, created_at = excluded.created_at`,
		p.Tenant, p.SubjectKey, p.CommandKey, p.Subject, sqlrow.NonNilBytes(p.Doc), p.CreatedBy, sqlrow.Nanos(p.CreatedAt))
}

// DeletePendingSubjects implements store.PendingTx.
func (t *Tx) DeletePendingSubjects(ctx context.Context, tenant, subjectKey, commandKey string) (int, error) {
	n, err := t.exec(ctx, `DELETE FROM pending_subjects WHERE tenant = ?
		AND (? = '' OR subject_key = ?) AND (? = '' OR command_key = ?)`,
		tenant, subjectKey, subjectKey, commandKey, commandKey)
	if err != nil {
		return 0, t.wrap("delete pending subjects", err)
	}
	return int(n), nil
}
