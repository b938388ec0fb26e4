package pgstore

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the move leases (migration 0007): one row per workflow
// version, inserted once, deleted by its owner.

func (t *txn) GetMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.MoveLease, error) {
	l, err := sqlrow.MoveLease(t.q.QueryRow(ctx, `SELECT `+sqlrow.LeaseColumns+` FROM move_leases WHERE workflow_id = $1 AND expected_version = $2 AND tenant = $3`,
		workflowID, expectedVersion, tenant))
	return l, rowErr("move lease", err)
}

func (t *txn) InsertMoveLease(ctx context.Context, l store.MoveLease) error {
	res, err := t.q.Exec(ctx, `INSERT INTO move_leases (`+sqlrow.LeaseColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT DO NOTHING`,
		l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Transition, l.Fingerprint, l.Namespace, l.Key, l.Operation,
		l.KeyFingerprint, l.Owner, sqlrow.Nanos(l.CreatedAt), sqlrow.Nanos(l.Deadline))
	if err != nil {
		return fmt.Errorf("pgstore: insert move lease: %w", err)
	}
	return affectedOne(res, store.ErrExists)
}

func (t *txn) DeleteMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner string) error {
	res, err := t.q.Exec(ctx, `DELETE FROM move_leases WHERE workflow_id = $1 AND expected_version = $2 AND tenant = $3 AND owner = $4`,
		workflowID, expectedVersion, tenant, owner)
	if err != nil {
		return fmt.Errorf("pgstore: delete move lease: %w", err)
	}
	if n := res.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := t.GetMoveLease(ctx, tenant, workflowID, expectedVersion); err != nil {
		return err
	}
	return store.ErrConflict
}
