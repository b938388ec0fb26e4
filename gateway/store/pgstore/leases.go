package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

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

func (t *txn) RenewMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner, newOwner string, now, deadline time.Time) error {
	res, err := t.q.Exec(ctx, `UPDATE move_leases SET owner = $1, deadline = $2
		WHERE workflow_id = $3 AND expected_version = $4 AND tenant = $5 AND owner = $6 AND deadline >= $7`,
		newOwner, sqlrow.Nanos(deadline), workflowID, expectedVersion, tenant, owner, sqlrow.Nanos(now))
	if err != nil {
		return fmt.Errorf("pgstore: renew move lease: %w", err)
	}
	if res.RowsAffected() == 1 {
		return nil
	}
	if _, err := t.GetMoveLease(ctx, tenant, workflowID, expectedVersion); err != nil {
		return err
	}
	return store.ErrConflict
}

func (t *txn) ExpiredMoveLeases(ctx context.Context, now time.Time, limit int) ([]store.MoveLease, error) {
	rows, err := t.q.Query(ctx, `SELECT `+sqlrow.LeaseColumns+` FROM move_leases WHERE deadline < $1
		ORDER BY deadline, workflow_id, expected_version LIMIT $2`, sqlrow.Nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: expired move leases: %w", err)
	}
	defer rows.Close()
	var out []store.MoveLease
	for rows.Next() {
		l, err := sqlrow.MoveLease(rows)
		if err != nil {
			return nil, rowErr("move lease", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Start leases (migrations 0008, 0009): one row per tenant and ref,
// inserted once, deleted by its owner or resolved into the record of its
// answer, kept until its expires_at (0: for good).

func (t *txn) GetStartLease(ctx context.Context, tenant, ref string) (store.StartLease, error) {
	l, err := sqlrow.StartLease(t.q.QueryRow(ctx, `SELECT `+sqlrow.StartLeaseColumns+` FROM start_leases WHERE tenant = $1 AND ref = $2`, tenant, ref))
	return l, rowErr("start lease", err)
}

func (t *txn) ExpiredStartLeases(ctx context.Context, now time.Time, limit int) ([]store.StartLease, error) {
	rows, err := t.q.Query(ctx, `SELECT `+sqlrow.StartLeaseColumns+` FROM start_leases WHERE status = 0 AND deadline < $1
		ORDER BY deadline, tenant, ref LIMIT $2`, sqlrow.Nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: expired start leases: %w", err)
	}
	defer rows.Close()
	var out []store.StartLease
	for rows.Next() {
		l, err := sqlrow.StartLease(rows)
		if err != nil {
			return nil, rowErr("start lease", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func (t *txn) InsertStartLease(ctx context.Context, l store.StartLease) error {
	res, err := t.q.Exec(ctx, `INSERT INTO start_leases (`+sqlrow.StartLeaseColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT DO NOTHING`,
		l.Tenant, l.Ref, l.DefinitionID, l.Fingerprint, l.Namespace, l.Key, l.Operation, l.KeyFingerprint, l.Owner,
		sqlrow.Nanos(l.CreatedAt), sqlrow.Nanos(l.Deadline), l.Status, sqlrow.NonNilBytes(l.Response), sqlrow.Nanos(l.ExpiresAt))
	if err != nil {
		return fmt.Errorf("pgstore: insert start lease: %w", err)
	}
	return affectedOne(res, store.ErrExists)
}

func (t *txn) DeleteStartLease(ctx context.Context, tenant, ref, owner string) error {
	res, err := t.q.Exec(ctx, `DELETE FROM start_leases WHERE tenant = $1 AND ref = $2 AND owner = $3 AND status = 0`, tenant, ref, owner)
	if err != nil {
		return fmt.Errorf("pgstore: delete start lease: %w", err)
	}
	return t.startLeaseChanged(ctx, res, tenant, ref)
}

func (t *txn) ResolveStartLease(ctx context.Context, tenant, ref, owner string, status int, response []byte, expiresAt time.Time) error {
	res, err := t.q.Exec(ctx, `UPDATE start_leases SET owner = '', status = $1, response = $2, expires_at = $3
		WHERE tenant = $4 AND ref = $5 AND owner = $6 AND status = 0`,
		status, sqlrow.NonNilBytes(response), sqlrow.Nanos(expiresAt), tenant, ref, owner)
	if err != nil {
		return fmt.Errorf("pgstore: resolve start lease: %w", err)
	}
	return t.startLeaseChanged(ctx, res, tenant, ref)
}

func (t *txn) RenewStartLease(ctx context.Context, tenant, ref, owner, newOwner string, now, deadline time.Time) error {
	res, err := t.q.Exec(ctx, `UPDATE start_leases SET owner = $1, deadline = $2
		WHERE tenant = $3 AND ref = $4 AND owner = $5 AND status = 0 AND deadline >= $6`,
		newOwner, sqlrow.Nanos(deadline), tenant, ref, owner, sqlrow.Nanos(now))
	if err != nil {
		return fmt.Errorf("pgstore: renew start lease: %w", err)
	}
	return t.startLeaseChanged(ctx, res, tenant, ref)
}

// startLeaseChanged answers a delete or resolve of a held start lease: nil
// when it changed the row, else ErrNotFound or ErrConflict.
func (t *txn) startLeaseChanged(ctx context.Context, res pgconn.CommandTag, tenant, ref string) error {
	if res.RowsAffected() == 1 {
		return nil
	}
	if _, err := t.GetStartLease(ctx, tenant, ref); err != nil {
		return err
	}
	return store.ErrConflict
}
