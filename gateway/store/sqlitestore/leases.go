package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the move leases (migration 0007): one row per workflow
// version, inserted once, deleted by its owner.

func (t *txn) GetMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.MoveLease, error) {
	l, err := sqlrow.MoveLease(t.queryRow(ctx, `SELECT `+sqlrow.LeaseColumns+` FROM move_leases WHERE workflow_id = ? AND expected_version = ? AND tenant = ?`,
		workflowID, expectedVersion, tenant))
	return l, rowErr("move lease", err)
}

func (t *txn) InsertMoveLease(ctx context.Context, l store.MoveLease) error {
	res, err := t.exec(ctx, `INSERT INTO move_leases (`+sqlrow.LeaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Transition, l.Fingerprint, l.Namespace, l.Key, l.Operation,
		l.KeyFingerprint, l.Owner, sqlrow.Nanos(l.CreatedAt), sqlrow.Nanos(l.Deadline))
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

func (t *txn) RenewMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner, newOwner string, now, deadline time.Time) error {
	res, err := t.exec(ctx, `UPDATE move_leases SET owner = ?, deadline = ?
		WHERE workflow_id = ? AND expected_version = ? AND tenant = ? AND owner = ? AND deadline >= ?`,
		newOwner, sqlrow.Nanos(deadline), workflowID, expectedVersion, tenant, owner, sqlrow.Nanos(now))
	if err != nil {
		return fmt.Errorf("sqlitestore: renew move lease: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlitestore: renew move lease: %w", err)
	} else if n == 1 {
		return nil
	}
	if _, err := t.GetMoveLease(ctx, tenant, workflowID, expectedVersion); err != nil {
		return err
	}
	return store.ErrConflict
}

func (t *txn) ExpiredMoveLeases(ctx context.Context, now time.Time, limit int) ([]store.MoveLease, error) {
	rows, err := t.query(ctx, `SELECT `+sqlrow.LeaseColumns+` FROM move_leases WHERE deadline < ?
		ORDER BY deadline, workflow_id, expected_version LIMIT `+limitSQL(limit), sqlrow.Nanos(now))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: expired move leases: %w", err)
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
	l, err := sqlrow.StartLease(t.queryRow(ctx, `SELECT `+sqlrow.StartLeaseColumns+` FROM start_leases WHERE tenant = ? AND ref = ?`, tenant, ref))
	return l, rowErr("start lease", err)
}

func (t *txn) ExpiredStartLeases(ctx context.Context, now time.Time, limit int) ([]store.StartLease, error) {
	rows, err := t.query(ctx, `SELECT `+sqlrow.StartLeaseColumns+` FROM start_leases WHERE status = 0 AND deadline < ?
		ORDER BY deadline, tenant, ref LIMIT `+limitSQL(limit), sqlrow.Nanos(now))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: expired start leases: %w", err)
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
	res, err := t.exec(ctx, `INSERT INTO start_leases (`+sqlrow.StartLeaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		l.Tenant, l.Ref, l.DefinitionID, l.Fingerprint, l.Namespace, l.Key, l.Operation, l.KeyFingerprint, l.Owner,
		sqlrow.Nanos(l.CreatedAt), sqlrow.Nanos(l.Deadline), l.Status, sqlrow.NonNilBytes(l.Response), sqlrow.Nanos(l.ExpiresAt))
	if err != nil {
		return fmt.Errorf("sqlitestore: insert start lease: %w", err)
	}
	return affectedOne(res, store.ErrExists, "insert start lease")
}

func (t *txn) DeleteStartLease(ctx context.Context, tenant, ref, owner string) error {
	res, err := t.exec(ctx, `DELETE FROM start_leases WHERE tenant = ? AND ref = ? AND owner = ? AND status = 0`, tenant, ref, owner)
	if err != nil {
		return fmt.Errorf("sqlitestore: delete start lease: %w", err)
	}
	return t.startLeaseChanged(ctx, res, tenant, ref, "delete start lease")
}

func (t *txn) ResolveStartLease(ctx context.Context, tenant, ref, owner string, status int, response []byte, expiresAt time.Time) error {
	res, err := t.exec(ctx, `UPDATE start_leases SET owner = '', status = ?, response = ?, expires_at = ?
		WHERE tenant = ? AND ref = ? AND owner = ? AND status = 0`,
		status, sqlrow.NonNilBytes(response), sqlrow.Nanos(expiresAt), tenant, ref, owner)
	if err != nil {
		return fmt.Errorf("sqlitestore: resolve start lease: %w", err)
	}
	return t.startLeaseChanged(ctx, res, tenant, ref, "resolve start lease")
}

func (t *txn) RenewStartLease(ctx context.Context, tenant, ref, owner, newOwner string, now, deadline time.Time) error {
	res, err := t.exec(ctx, `UPDATE start_leases SET owner = ?, deadline = ?
		WHERE tenant = ? AND ref = ? AND owner = ? AND status = 0 AND deadline >= ?`,
		newOwner, sqlrow.Nanos(deadline), tenant, ref, owner, sqlrow.Nanos(now))
	if err != nil {
		return fmt.Errorf("sqlitestore: renew start lease: %w", err)
	}
	return t.startLeaseChanged(ctx, res, tenant, ref, "renew start lease")
}

// startLeaseChanged answers a delete or resolve of a held start lease: nil
// when it changed the row, else ErrNotFound or ErrConflict.
func (t *txn) startLeaseChanged(ctx context.Context, res sql.Result, tenant, ref, what string) error {
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlitestore: %s: %w", what, err)
	} else if n == 1 {
		return nil
	}
	if _, err := t.GetStartLease(ctx, tenant, ref); err != nil {
		return err
	}
	return store.ErrConflict
}
