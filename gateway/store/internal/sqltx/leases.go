package sqltx

import (
	"context"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the move leases (migration 0007): one row per workflow
// version, inserted once, deleted by its owner.

// GetMoveLease implements store.ReadTx.
func (t *Tx) GetMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.MoveLease, error) {
	l, err := sqlrow.MoveLease(t.queryRow(ctx, `SELECT `+sqlrow.LeaseColumns+` FROM move_leases WHERE workflow_id = ? AND expected_version = ? AND tenant = ?`,
		workflowID, expectedVersion, tenant))
	return l, t.rowErr("move lease", err)
}

// InsertMoveLease implements store.Tx.
func (t *Tx) InsertMoveLease(ctx context.Context, l store.MoveLease) error {
	return t.insert(ctx, "insert move lease", `INSERT INTO move_leases (`+sqlrow.LeaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Transition, l.Fingerprint, l.Namespace, l.Key, l.Operation,
		l.KeyFingerprint, l.Owner, sqlrow.Nanos(l.CreatedAt), sqlrow.Nanos(l.Deadline))
}

// moveLeaseThere answers a move lease change that changed nothing: its
// read's error, nil when the lease is there.
func (t *Tx) moveLeaseThere(ctx context.Context, tenant, workflowID string, expectedVersion int64) func() error {
	return func() error {
		_, err := t.GetMoveLease(ctx, tenant, workflowID, expectedVersion)
		return err
	}
}

// DeleteMoveLease implements store.Tx.
func (t *Tx) DeleteMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner string) error {
	return t.changeOne(ctx, "delete move lease", t.moveLeaseThere(ctx, tenant, workflowID, expectedVersion),
		`DELETE FROM move_leases WHERE workflow_id = ? AND expected_version = ? AND tenant = ? AND owner = ?`,
		workflowID, expectedVersion, tenant, owner)
}

// RenewMoveLease implements store.Tx.
func (t *Tx) RenewMoveLease(ctx context.Context, tenant, workflowID string, expectedVersion int64, owner, newOwner string, now, deadline time.Time) error {
	return t.changeOne(ctx, "renew move lease", t.moveLeaseThere(ctx, tenant, workflowID, expectedVersion),
		`UPDATE move_leases SET owner = ?, deadline = ?
		WHERE workflow_id = ? AND expected_version = ? AND tenant = ? AND owner = ? AND deadline > ?`,
		newOwner, sqlrow.Nanos(deadline), workflowID, expectedVersion, tenant, owner, sqlrow.Nanos(now))
}

// ExpiredMoveLeases implements store.ReadTx.
func (t *Tx) ExpiredMoveLeases(ctx context.Context, now time.Time, limit int) ([]store.MoveLease, error) {
	return list(ctx, t, "expired move leases", "move lease", sqlrow.MoveLease, `SELECT `+sqlrow.LeaseColumns+` FROM move_leases WHERE deadline < ?
		ORDER BY deadline, workflow_id, expected_version LIMIT `, limit, sqlrow.Nanos(now))
}

// Start leases (migrations 0008, 0009): one row per tenant and ref,
// inserted once, deleted by its owner or resolved into the record of its
// answer, kept until its expires_at (0: for good).

// GetStartLease implements store.ReadTx.
func (t *Tx) GetStartLease(ctx context.Context, tenant, ref string) (store.StartLease, error) {
	l, err := sqlrow.StartLease(t.queryRow(ctx, `SELECT `+sqlrow.StartLeaseColumns+` FROM start_leases WHERE tenant = ? AND ref = ?`, tenant, ref))
	return l, t.rowErr("start lease", err)
}

// ExpiredStartLeases implements store.ReadTx.
func (t *Tx) ExpiredStartLeases(ctx context.Context, now time.Time, limit int) ([]store.StartLease, error) {
	return list(ctx, t, "expired start leases", "start lease", sqlrow.StartLease, `SELECT `+sqlrow.StartLeaseColumns+` FROM start_leases WHERE status = 0 AND deadline < ?
		ORDER BY deadline, tenant, ref LIMIT `, limit, sqlrow.Nanos(now))
}

// InsertStartLease implements store.Tx.
func (t *Tx) InsertStartLease(ctx context.Context, l store.StartLease) error {
	return t.insert(ctx, "insert start lease", `INSERT INTO start_leases (`+sqlrow.StartLeaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		l.Tenant, l.Ref, l.DefinitionID, l.Fingerprint, l.Namespace, l.Key, l.Operation, l.KeyFingerprint, l.Owner,
		sqlrow.Nanos(l.CreatedAt), sqlrow.Nanos(l.Deadline), l.Status, sqlrow.NonNilBytes(l.Response), sqlrow.Nanos(l.ExpiresAt), l.WorkflowID)
}

// startLeaseThere answers a change of a held start lease that changed
// nothing: its read's error, nil when the lease is there.
func (t *Tx) startLeaseThere(ctx context.Context, tenant, ref string) func() error {
	return func() error {
		_, err := t.GetStartLease(ctx, tenant, ref)
		return err
	}
}

// DeleteStartLease implements store.Tx.
func (t *Tx) DeleteStartLease(ctx context.Context, tenant, ref, owner string) error {
	return t.changeOne(ctx, "delete start lease", t.startLeaseThere(ctx, tenant, ref),
		`DELETE FROM start_leases WHERE tenant = ? AND ref = ? AND owner = ? AND status = 0`, tenant, ref, owner)
}

// ResolveStartLease implements store.Tx.
func (t *Tx) ResolveStartLease(ctx context.Context, tenant, ref, owner string, status int, response []byte, expiresAt time.Time) error {
	return t.changeOne(ctx, "resolve start lease", t.startLeaseThere(ctx, tenant, ref),
		`UPDATE start_leases SET owner = '', status = ?, response = ?, expires_at = ?
		WHERE tenant = ? AND ref = ? AND owner = ? AND status = 0`,
		status, sqlrow.NonNilBytes(response), sqlrow.Nanos(expiresAt), tenant, ref, owner)
}

// RenewStartLease implements store.Tx.
func (t *Tx) RenewStartLease(ctx context.Context, tenant, ref, owner, newOwner string, now, deadline time.Time) error {
	return t.changeOne(ctx, "renew start lease", t.startLeaseThere(ctx, tenant, ref),
		`UPDATE start_leases SET owner = ?, deadline = ?
		WHERE tenant = ? AND ref = ? AND owner = ? AND status = 0 AND deadline > ?`,
		newOwner, sqlrow.Nanos(deadline), tenant, ref, owner, sqlrow.Nanos(now))
}
