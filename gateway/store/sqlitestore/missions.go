package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

func (t *txn) GetMission(ctx context.Context, tenant, id string) (store.Mission, error) {
	v, err := sqlrow.Mission(t.queryRow(ctx, `SELECT `+sqlrow.MissionColumns+` FROM missions WHERE id = ? AND tenant = ?`, id, tenant))
	return v, rowErr("mission", err)
}

func (t *txn) GetMissionByRunID(ctx context.Context, tenant, runID string) (store.Mission, error) {
	v, err := sqlrow.Mission(t.queryRow(ctx, `SELECT `+sqlrow.MissionColumns+` FROM missions WHERE tenant = ? AND run_id = ?`, tenant, runID))
	return v, rowErr("mission", err)
}

func (t *txn) InsertMission(ctx context.Context, m store.Mission) error {
	res, err := t.exec(ctx, `INSERT INTO missions (`+sqlrow.MissionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		m.Tenant, m.ID, m.RunID, m.DefinitionID, m.DefinitionVersion, m.State, m.Version, m.Status, m.ParentID,
		sqlrow.NonNilBytes(m.Doc), sqlrow.Nanos(m.CreatedAt), sqlrow.Nanos(m.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlitestore: insert mission: %w", err)
	}
	return affectedOne(res, store.ErrExists, "insert mission")
}

func (t *txn) UpdateMission(ctx context.Context, m store.Mission, expectedVersion int64) error {
	res, err := t.exec(ctx, `UPDATE missions SET state = ?, version = ?, status = ?, doc = ?, updated_at = ?,
		definition_version = ? WHERE id = ? AND tenant = ? AND version = ?`,
		m.State, m.Version, m.Status, sqlrow.NonNilBytes(m.Doc), sqlrow.Nanos(m.UpdatedAt), m.DefinitionVersion, m.ID, m.Tenant, expectedVersion)
	if err != nil {
		return fmt.Errorf("sqlitestore: update mission: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlitestore: update mission: %w", err)
	} else if n == 1 {
		return nil
	}
	if _, err := t.GetMission(ctx, m.Tenant, m.ID); err != nil {
		return err
	}
	return store.ErrConflict
}

func (t *txn) PutSubmit(ctx context.Context, r store.SubmitRecord) error {
	res, err := t.exec(ctx, `INSERT INTO mission_submits (tenant, workflow_id, expected_version, fingerprint, response, created_at, status)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.Tenant, r.WorkflowID, r.ExpectedVersion, r.Fingerprint, sqlrow.NonNilBytes(r.Response), sqlrow.Nanos(r.CreatedAt), r.Status)
	if err != nil {
		return fmt.Errorf("sqlitestore: put submit: %w", err)
	}
	return affectedOne(res, store.ErrExists, "put submit")
}

func (t *txn) GetSubmit(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.SubmitRecord, error) {
	r, err := sqlrow.Submit(t.queryRow(ctx, `SELECT `+sqlrow.SubmitColumns+` FROM mission_submits
		WHERE workflow_id = ? AND expected_version = ? AND tenant = ?`, workflowID, expectedVersion, tenant), tenant, workflowID, expectedVersion)
	return r, rowErr("get submit", err)
}

func (t *txn) InsertApproval(ctx context.Context, a store.Approval) error {
	res, err := t.exec(ctx, `INSERT INTO approvals (`+sqlrow.ApprovalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		a.Tenant, a.ID, a.WorkflowID, a.RunID, a.Transition, a.Queue, a.Status, a.RequestedBy, a.ResolvedBy,
		sqlrow.NonNilBytes(a.Doc), sqlrow.Nanos(a.CreatedAt), sqlrow.Nanos(a.ResolvedAt))
	if err != nil {
		return fmt.Errorf("sqlitestore: insert approval: %w", err)
	}
	return affectedOne(res, store.ErrExists, "insert approval")
}

func (t *txn) UpdateApproval(ctx context.Context, a store.Approval, expectedStatus string) error {
	res, err := t.exec(ctx, `UPDATE approvals SET status = ?, resolved_by = ?, doc = ?, resolved_at = ?
		WHERE id = ? AND tenant = ? AND status = ?`,
		a.Status, a.ResolvedBy, sqlrow.NonNilBytes(a.Doc), sqlrow.Nanos(a.ResolvedAt), a.ID, a.Tenant, expectedStatus)
	if err != nil {
		return fmt.Errorf("sqlitestore: update approval: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlitestore: update approval: %w", err)
	} else if n == 1 {
		return nil
	}
	if _, err := t.GetApproval(ctx, a.Tenant, a.ID); err != nil {
		return err
	}
	return store.ErrConflict
}

func (t *txn) GetApproval(ctx context.Context, tenant, id string) (store.Approval, error) {
	v, err := sqlrow.Approval(t.queryRow(ctx, `SELECT `+sqlrow.ApprovalColumns+` FROM approvals WHERE id = ? AND tenant = ?`, id, tenant))
	return v, rowErr("approval", err)
}

func (t *txn) ListApprovals(ctx context.Context, tenant, status string, limit int) ([]store.Approval, error) {
	rows, err := t.query(ctx, `SELECT `+sqlrow.ApprovalColumns+` FROM approvals
		WHERE tenant = ? AND (? = '' OR status = ?) ORDER BY created_at, id LIMIT `+limitSQL(limit), tenant, status, status)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: list approvals: %w", err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := sqlrow.Approval(rows)
		if err != nil {
			return nil, rowErr("approval", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func affectedOne(res sql.Result, none error, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlitestore: %s: %w", what, err)
	}
	if n == 0 {
		return none
	}
	return nil
}
