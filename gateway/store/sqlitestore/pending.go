package sqlitestore

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the commands paused on unknown subjects (migration 0006).

func (t *txn) ListPendingSubjects(ctx context.Context, tenant, subjectKey string) ([]store.PendingSubject, error) {
	rows, err := t.query(ctx, `SELECT `+sqlrow.PendingColumns+`
		FROM pending_subjects WHERE tenant = ? AND subject_key = ? ORDER BY command_key`, tenant, subjectKey)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: list pending subjects: %w", err)
	}
	defer rows.Close()
	var out []store.PendingSubject
	for rows.Next() {
		p, err := sqlrow.PendingSubject(rows)
		if err != nil {
			return nil, rowErr("pending subject", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: list pending subjects: %w", err)
	}
	return out, nil
}

func (t *txn) PutPendingSubject(ctx context.Context, p store.PendingSubject) error {
	_, err := t.exec(ctx, `INSERT INTO pending_subjects (`+sqlrow.PendingColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant, subject_key, command_key) DO UPDATE SET subject = excluded.subject, doc = excluded.doc,
			created_by = excluded.created_by, created_at = excluded.created_at`,
		p.Tenant, p.SubjectKey, p.CommandKey, p.Subject, sqlrow.NonNilBytes(p.Doc), p.CreatedBy, sqlrow.Nanos(p.CreatedAt))
	if err != nil {
		return fmt.Errorf("sqlitestore: put pending subject: %w", err)
	}
	return nil
}

func (t *txn) DeletePendingSubjects(ctx context.Context, tenant, subjectKey, commandKey string) (int, error) {
	res, err := t.exec(ctx, `DELETE FROM pending_subjects WHERE tenant = ?
		AND (? = '' OR subject_key = ?) AND (? = '' OR command_key = ?)`,
		tenant, subjectKey, subjectKey, commandKey, commandKey)
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: delete pending subjects: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: delete pending subjects: %w", err)
	}
	return int(n), nil
}
