package sqltx

import (
	"context"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

const (
	getMission      = `SELECT ` + sqlrow.MissionColumns + ` FROM missions WHERE id = ? AND tenant = ?`
	getMissionByRun = `SELECT ` + sqlrow.MissionColumns + ` FROM missions WHERE tenant = ? AND run_id = ?`
)

// GetMission implements store.ReadTx.
func (t *Tx) GetMission(ctx context.Context, tenant, id string) (store.Mission, error) {
	return t.mission(ctx, getMission, getMission+forUpdate, id, tenant)
}

// GetMissionByRunID implements store.ReadTx.
func (t *Tx) GetMissionByRunID(ctx context.Context, tenant, runID string) (store.Mission, error) {
	return t.mission(ctx, getMissionByRun, getMissionByRun+forUpdate, tenant, runID)
}

// mission reads the one mission query selects, or runs locked instead
// (query with forUpdate appended, passed in as a constant so that no call
// concatenates it) when LockMissions asks for the row's lock.
func (t *Tx) mission(ctx context.Context, query, locked string, args ...any) (store.Mission, error) {
	if t.LockMissions {
		query = locked
	}
	v, err := sqlrow.Mission(t.queryRow(ctx, query, args...))
	return v, t.rowErr("mission", err)
}

// IdleMissions implements store.ReadTx. status = 'active' is a literal, so
// the plan is the same for every call: a range of the index
// missions_idle (migration 0010) from the cursor to before, in its order.
func (t *Tx) IdleMissions(ctx context.Context, definitionID string, before time.Time, after store.MissionCursor, limit int) ([]store.Mission, error) {
	return list(ctx, t, "idle missions", "mission", sqlrow.Mission, `SELECT `+sqlrow.MissionColumns+` FROM missions
		WHERE definition_id = ? AND status = 'active' AND updated_at < ? AND (updated_at, id) > (?, ?)
		ORDER BY updated_at, id LIMIT `, limit, definitionID, sqlrow.Nanos(before), sqlrow.Nanos(after.UpdatedAt), after.ID)
}

// ExpiredWaits implements store.ReadTx: a range of the partial index
// missions_wait_deadline (sqlitestore 0013, pgstore 0012).
func (t *Tx) ExpiredWaits(ctx context.Context, now time.Time, limit int) ([]store.Mission, error) {
	return list(ctx, t, "expired waits", "mission", sqlrow.Mission, `SELECT `+sqlrow.MissionColumns+` FROM missions
		WHERE wait_deadline > 0 AND wait_deadline < ? AND status = 'active'
		ORDER BY wait_deadline, id LIMIT `, limit, sqlrow.Nanos(now))
}

// ListMissions implements store.ReadTx: the tenant's rows (the tenant
// prefix of missions_run_id), filtered, newest change first.
func (t *Tx) ListMissions(ctx context.Context, tenant string, f store.MissionFilter, limit int) ([]store.Mission, error) {
	return list(ctx, t, "list missions", "mission", sqlrow.Mission, `SELECT `+sqlrow.MissionColumns+` FROM missions
		WHERE tenant = ? AND (? = '' OR definition_id = ?) AND (? = '' OR state = ?) AND (? = '' OR status = ?)
		ORDER BY updated_at DESC, id DESC LIMIT `, limit, tenant, f.DefinitionID, f.DefinitionID, f.State, f.State, f.Status, f.Status)
}

// MissionEvents implements store.ReadTx: a range of the partial index
// events_workflow (sqlitestore 0015, pgstore 0014).
func (t *Tx) MissionEvents(ctx context.Context, tenant, workflowID string, limit int) ([]store.Event, error) {
	return list(ctx, t, "mission events", "mission events", func(row sqlrow.Scanner) (store.Event, error) {
		return sqlrow.Event(row, tenant)
	}, `SELECT `+sqlrow.EventColumns+` FROM events WHERE tenant = ? AND workflow_id = ? AND workflow_id <> ''
		ORDER BY at, seq LIMIT `, limit, tenant, workflowID)
}

// InsertMission implements store.Tx.
func (t *Tx) InsertMission(ctx context.Context, m store.Mission) error {
	return t.insert(ctx, "insert mission", `INSERT INTO missions (`+sqlrow.MissionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		m.Tenant, m.ID, m.RunID, m.DefinitionID, m.DefinitionVersion, m.State, m.Version, m.Status, m.ParentID,
		sqlrow.NonNilBytes(m.Doc), sqlrow.Nanos(m.CreatedAt), sqlrow.Nanos(m.UpdatedAt), sqlrow.Nanos(m.WaitDeadline))
}

// UpdateMission implements store.Tx.
func (t *Tx) UpdateMission(ctx context.Context, m store.Mission, expectedVersion int64) error {
	return t.changeOne(ctx, "update mission", func() error {
		_, err := t.GetMission(ctx, m.Tenant, m.ID)
		return err
	}, `UPDATE missions SET state = ?, version = ?, status = ?, doc = ?, updated_at = ?,
		definition_version = ?, wait_deadline = ? WHERE id = ? AND tenant = ? AND version = ?`,
		m.State, m.Version, m.Status, sqlrow.NonNilBytes(m.Doc), sqlrow.Nanos(m.UpdatedAt), m.DefinitionVersion, sqlrow.Nanos(m.WaitDeadline),
		m.ID, m.Tenant, expectedVersion)
}

// DeleteMission implements store.Tx.
func (t *Tx) DeleteMission(ctx context.Context, tenant, id string, expectedVersion int64) error {
	return t.changeOne(ctx, "delete mission", func() error {
		_, err := t.GetMission(ctx, tenant, id)
		return err
	}, `DELETE FROM missions WHERE id = ? AND tenant = ? AND version = ?`, id, tenant, expectedVersion)
}

// PutSubmit implements store.Tx.
func (t *Tx) PutSubmit(ctx context.Context, r store.SubmitRecord) error {
	return t.insert(ctx, "put submit", `INSERT INTO mission_submits (tenant, workflow_id, expected_version, fingerprint, response, created_at, status)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.Tenant, r.WorkflowID, r.ExpectedVersion, r.Fingerprint, sqlrow.NonNilBytes(r.Response), sqlrow.Nanos(r.CreatedAt), r.Status)
}

// GetSubmit implements store.ReadTx.
func (t *Tx) GetSubmit(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.SubmitRecord, error) {
	r, err := sqlrow.Submit(t.queryRow(ctx, `SELECT `+sqlrow.SubmitColumns+` FROM mission_submits
		WHERE workflow_id = ? AND expected_version = ? AND tenant = ?`, workflowID, expectedVersion, tenant), tenant, workflowID, expectedVersion)
	return r, t.rowErr("get submit", err)
}

// InsertApproval implements store.Tx.
func (t *Tx) InsertApproval(ctx context.Context, a store.Approval) error {
	return t.insert(ctx, "insert approval", `INSERT INTO approvals (`+sqlrow.ApprovalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		a.Tenant, a.ID, a.WorkflowID, a.RunID, a.Transition, a.Queue, a.Status, a.RequestedBy, a.ResolvedBy,
		sqlrow.NonNilBytes(a.Doc), sqlrow.Nanos(a.CreatedAt), sqlrow.Nanos(a.ResolvedAt))
}

// UpdateApproval implements store.Tx.
func (t *Tx) UpdateApproval(ctx context.Context, a store.Approval, expectedStatus string) error {
	return t.changeOne(ctx, "update approval", func() error {
		_, err := t.GetApproval(ctx, a.Tenant, a.ID)
		return err
	}, `UPDATE approvals SET status = ?, resolved_by = ?, doc = ?, resolved_at = ?
		WHERE id = ? AND tenant = ? AND status = ?`,
		a.Status, a.ResolvedBy, sqlrow.NonNilBytes(a.Doc), sqlrow.Nanos(a.ResolvedAt), a.ID, a.Tenant, expectedStatus)
}

// GetApproval implements store.ReadTx.
func (t *Tx) GetApproval(ctx context.Context, tenant, id string) (store.Approval, error) {
	v, err := sqlrow.Approval(t.queryRow(ctx, `SELECT `+sqlrow.ApprovalColumns+` FROM approvals WHERE id = ? AND tenant = ?`, id, tenant))
	return v, t.rowErr("approval", err)
}

// ListApprovals implements store.ReadTx.
func (t *Tx) ListApprovals(ctx context.Context, tenant, status string, limit int) ([]store.Approval, error) {
	return list(ctx, t, "list approvals", "approval", sqlrow.Approval, `SELECT `+sqlrow.ApprovalColumns+` FROM approvals
		WHERE tenant = ? AND (? = '' OR status = ?) ORDER BY created_at, id LIMIT `, limit, tenant, status, status)
}
