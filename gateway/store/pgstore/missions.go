package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// lockMission is the suffix of a mission read: inside an Update it locks
// the row until the transaction ends (see the package documentation), so
// transactions that read a workflow in order to write serialize on it.
func (t *txn) lockMission() string {
	if t.write {
		return ` FOR UPDATE`
	}
	return ``
}

func (t *txn) GetMission(ctx context.Context, tenant, id string) (store.Mission, error) {
	v, err := sqlrow.Mission(t.q.QueryRow(ctx, `SELECT `+sqlrow.MissionColumns+` FROM missions WHERE id = $1 AND tenant = $2`+t.lockMission(), id, tenant))
	return v, rowErr("mission", err)
}

func (t *txn) GetMissionByRunID(ctx context.Context, tenant, runID string) (store.Mission, error) {
	v, err := sqlrow.Mission(t.q.QueryRow(ctx, `SELECT `+sqlrow.MissionColumns+` FROM missions WHERE tenant = $1 AND run_id = $2`+t.lockMission(), tenant, runID))
	return v, rowErr("mission", err)
}

func (t *txn) InsertMission(ctx context.Context, m store.Mission) error {
	res, err := t.q.Exec(ctx, `INSERT INTO missions (`+sqlrow.MissionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT DO NOTHING`,
		m.Tenant, m.ID, m.RunID, m.DefinitionID, m.DefinitionVersion, m.State, m.Version, m.Status, m.ParentID,
		sqlrow.NonNilBytes(m.Doc), sqlrow.Nanos(m.CreatedAt), sqlrow.Nanos(m.UpdatedAt))
	if err != nil {
		return fmt.Errorf("pgstore: insert mission: %w", err)
	}
	return affectedOne(res, store.ErrExists)
}

func (t *txn) UpdateMission(ctx context.Context, m store.Mission, expectedVersion int64) error {
	res, err := t.q.Exec(ctx, `UPDATE missions SET state = $1, version = $2, status = $3, doc = $4, updated_at = $5,
		definition_version = $6 WHERE id = $7 AND tenant = $8 AND version = $9`,
		m.State, m.Version, m.Status, sqlrow.NonNilBytes(m.Doc), sqlrow.Nanos(m.UpdatedAt), m.DefinitionVersion, m.ID, m.Tenant, expectedVersion)
	if err != nil {
		return fmt.Errorf("pgstore: update mission: %w", err)
	}
	if n := res.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := t.GetMission(ctx, m.Tenant, m.ID); err != nil {
		return err
	}
	return store.ErrConflict
}

func (t *txn) PutSubmit(ctx context.Context, r store.SubmitRecord) error {
	res, err := t.q.Exec(ctx, `INSERT INTO mission_submits (tenant, workflow_id, expected_version, fingerprint, response, created_at, status)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
		r.Tenant, r.WorkflowID, r.ExpectedVersion, r.Fingerprint, sqlrow.NonNilBytes(r.Response), sqlrow.Nanos(r.CreatedAt), r.Status)
	if err != nil {
		return fmt.Errorf("pgstore: put submit: %w", err)
	}
	return affectedOne(res, store.ErrExists)
}

func (t *txn) GetSubmit(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.SubmitRecord, error) {
	r, err := sqlrow.Submit(t.q.QueryRow(ctx, `SELECT `+sqlrow.SubmitColumns+` FROM mission_submits
		WHERE workflow_id = $1 AND expected_version = $2 AND tenant = $3`, workflowID, expectedVersion, tenant), tenant, workflowID, expectedVersion)
	return r, rowErr("get submit", err)
}

func (t *txn) InsertApproval(ctx context.Context, a store.Approval) error {
	res, err := t.q.Exec(ctx, `INSERT INTO approvals (`+sqlrow.ApprovalColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT DO NOTHING`,
		a.Tenant, a.ID, a.WorkflowID, a.RunID, a.Transition, a.Queue, a.Status, a.RequestedBy, a.ResolvedBy,
		sqlrow.NonNilBytes(a.Doc), sqlrow.Nanos(a.CreatedAt), sqlrow.Nanos(a.ResolvedAt))
	if err != nil {
		return fmt.Errorf("pgstore: insert approval: %w", err)
	}
	return affectedOne(res, store.ErrExists)
}

func (t *txn) UpdateApproval(ctx context.Context, a store.Approval, expectedStatus string) error {
	res, err := t.q.Exec(ctx, `UPDATE approvals SET status = $1, resolved_by = $2, doc = $3, resolved_at = $4
		WHERE id = $5 AND tenant = $6 AND status = $7`,
		a.Status, a.ResolvedBy, sqlrow.NonNilBytes(a.Doc), sqlrow.Nanos(a.ResolvedAt), a.ID, a.Tenant, expectedStatus)
	if err != nil {
		return fmt.Errorf("pgstore: update approval: %w", err)
	}
	if n := res.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := t.GetApproval(ctx, a.Tenant, a.ID); err != nil {
		return err
	}
	return store.ErrConflict
}

func (t *txn) GetApproval(ctx context.Context, tenant, id string) (store.Approval, error) {
	v, err := sqlrow.Approval(t.q.QueryRow(ctx, `SELECT `+sqlrow.ApprovalColumns+` FROM approvals WHERE id = $1 AND tenant = $2`, id, tenant))
	return v, rowErr("approval", err)
}

func (t *txn) ListApprovals(ctx context.Context, tenant, status string, limit int) ([]store.Approval, error) {
	rows, err := t.q.Query(ctx, `SELECT `+sqlrow.ApprovalColumns+` FROM approvals
		WHERE tenant = $1 AND ($2::text = '' OR status = $2::text) ORDER BY created_at, id LIMIT $3`, tenant, status, limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list approvals: %w", err)
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

// affectedOne answers none when an insert that does nothing on conflict
// inserted nothing.
func affectedOne(res pgconn.CommandTag, none error) error {
	if res.RowsAffected() == 0 {
		return none
	}
	return nil
}
