package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
)

// This file holds the move leases (migration 0007): one row per workflow
// version, inserted once, deleted by its owner.

const leaseColumns = `tenant, workflow_id, expected_version, transition, fingerprint, namespace, key, operation, key_fingerprint, owner, created_at, deadline`

func (t *txn) GetMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.MoveLease, error) {
	var l store.MoveLease
	var created, deadline int64
	err := t.queryRow(ctx, `SELECT `+leaseColumns+` FROM move_leases WHERE workflow_id = ? AND expected_version = ? AND tenant = ?`,
		workflowID, expectedVersion, tenant).
		Scan(&l.Tenant, &l.WorkflowID, &l.ExpectedVersion, &l.Transition, &l.Fingerprint, &l.Namespace, &l.Key, &l.Operation,
			&l.KeyFingerprint, &l.Owner, &created, &deadline)
	if errors.Is(err, sql.ErrNoRows) {
		return l, store.ErrNotFound
	}
	if err != nil {
		return l, fmt.Errorf("sqlitestore: move lease: %w", err)
	}
	l.CreatedAt, l.Deadline = fromNanos(created), fromNanos(deadline)
	return l, nil
}

func (t *txn) InsertMoveLease(ctx context.Context, l store.MoveLease) error {
	res, err := t.exec(ctx, `INSERT INTO move_leases (`+leaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Transition, l.Fingerprint, l.Namespace, l.Key, l.Operation,
		l.KeyFingerprint, l.Owner, nanos(l.CreatedAt), nanos(l.Deadline))
	if err != nil {
		return fmt.Errorf("sqlitestore: insert move lease: %w", err)
	}
	return affectedOne(res, store.ErrExists, "insert move lease")
}

func (t *txn) DeleteMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner string) error {
	res, err := t.exec(ctx, `DELETE FROM move_leases WHERE workflow_id = ? AND expected_version = ? AND tenant = ? AND owner = ?`,
		workflowID, expectedVersion, tenant, owner)
	if err != nil {
		return fmt.Errorf("sqlitestore: delete move lease: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlitestore: delete move lease: %w", err)
	} else if n == 1 {
		return nil
	}
	if _, err := t.GetMoveLease(ctx, tenant, workflowID, expectedVersion); err != nil {
		return err
	}
	return store.ErrConflict
}
