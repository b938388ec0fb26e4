package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/internal/jsonvalue"
)

// This file holds missions, submit records and approvals, with the SQLite
// driver's keys: mission ids are unique, and so is a runId within a tenant;
// a submit is keyed by workflow and expected version; approval ids are
// unique.

type runKey struct{ tenant, runID string }

type submitKey struct {
	workflowID      string
	expectedVersion int64
}

func copyMission(m store.Mission) store.Mission {
	m.Doc = append([]byte{}, m.Doc...)
	return m
}

func copyApproval(a store.Approval) store.Approval {
	a.Doc = append([]byte{}, a.Doc...)
	return a
}

func (t *txn) mission(id string) (store.Mission, bool) {
	if m, ok := t.missions[id]; ok {
		return m, true
	}
	if _, gone := t.dropped[id]; gone {
		return store.Mission{}, false
	}
	m, ok := t.db.missions[id]
	return m, ok
}

// staged reports whether the transaction wrote (or deleted) the mission
// id: its committed version no longer counts.
func (t *txn) staged(id string) bool {
	_, written := t.missions[id]
	_, gone := t.dropped[id]
	return written || gone
}

func (t *txn) missionIDByRun(tenant, runID string) (string, bool) {
	for id, m := range t.missions {
		if m.Tenant == tenant && m.RunID == runID {
			return id, true
		}
	}
	id, ok := t.db.runIDs[runKey{tenant, runID}]
	if ok && t.staged(id) {
		return "", false // rewritten above, or deleted
	}
	return id, ok
}

func (t *txn) stageMission(m store.Mission) {
	if t.missions == nil {
		t.missions = map[string]store.Mission{}
	}
	delete(t.dropped, m.ID)
	t.missions[m.ID] = m
}

// GetMission implements store.ReadTx.
func (t *txn) GetMission(ctx context.Context, tenant, id string) (store.Mission, error) {
	m, ok := t.mission(id)
	if !ok || m.Tenant != tenant {
		return store.Mission{}, store.ErrNotFound
	}
	return copyMission(m), nil
}

// GetMissionByRunID implements store.ReadTx.
func (t *txn) GetMissionByRunID(ctx context.Context, tenant, runID string) (store.Mission, error) {
	id, ok := t.missionIDByRun(tenant, runID)
	if !ok {
		return store.Mission{}, store.ErrNotFound
	}
	return t.GetMission(ctx, tenant, id)
}

// IdleMissions implements store.ReadTx, in the SQL drivers' order: by
// update time (in unix nanoseconds, 0 for the zero time), then id.
func (t *txn) IdleMissions(ctx context.Context, definitionID string, before time.Time, after store.MissionCursor, limit int) ([]store.Mission, error) {
	upper, fromNanos := nanos(before), nanos(after.UpdatedAt)
	return t.selectMissions(func(m store.Mission) bool {
		u := nanos(m.UpdatedAt)
		return m.DefinitionID == definitionID && m.Status == "active" && u < upper &&
			cmp.Or(cmp.Compare(u, fromNanos), cmp.Compare(m.ID, after.ID)) > 0
	}, func(a, b store.Mission) int {
		return cmp.Or(cmp.Compare(nanos(a.UpdatedAt), nanos(b.UpdatedAt)), cmp.Compare(a.ID, b.ID))
	}, limit), nil
}

// selectMissions returns copies of the missions keep accepts, the staged
// version of each winning over the committed one, sorted by order and cut
// to limit (negative: no limit).
func (t *txn) selectMissions(keep func(store.Mission) bool, order func(a, b store.Mission) int, limit int) []store.Mission {
	var out []store.Mission
	add := func(id string) {
		if m, _ := t.mission(id); keep(m) {
			out = append(out, copyMission(m))
		}
	}
	for id := range t.missions {
		add(id)
	}
	for id := range t.db.missions {
		if !t.staged(id) {
			add(id)
		}
	}
	slices.SortFunc(out, order)
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// ExpiredWaits implements store.ReadTx, in the SQL drivers' order.
func (t *txn) ExpiredWaits(ctx context.Context, now time.Time, limit int) ([]store.Mission, error) {
	upper := nanos(now)
	return t.selectMissions(func(m store.Mission) bool {
		w := nanos(m.WaitDeadline)
		return w > 0 && w < upper && m.Status == "active"
	}, func(a, b store.Mission) int {
		return cmp.Or(cmp.Compare(nanos(a.WaitDeadline), nanos(b.WaitDeadline)), cmp.Compare(a.ID, b.ID))
	}, limit), nil
}

// InsertMission implements store.Tx.
func (t *txn) InsertMission(ctx context.Context, m store.Mission) error {
	t.mustWrite()
	if _, ok := t.mission(m.ID); ok {
		return store.ErrExists
	}
	if _, ok := t.missionIDByRun(m.Tenant, m.RunID); ok {
		return store.ErrExists
	}
	m = copyMission(m)
	m.CreatedAt, m.UpdatedAt, m.WaitDeadline = normTime(m.CreatedAt), normTime(m.UpdatedAt), normTime(m.WaitDeadline)
	t.stageMission(m)
	return nil
}

// UpdateMission implements store.Tx: a compare-and-set on the version. As
// in the SQLite driver it changes the state, version, status, document,
// update time and definition version, nothing else.
func (t *txn) UpdateMission(ctx context.Context, m store.Mission, expectedVersion int64) error {
	t.mustWrite()
	old, ok := t.mission(m.ID)
	if err := checkTenantCAS(ok, old.Tenant, m.Tenant, old.Version, expectedVersion); err != nil {
		return err
	}
	old.State, old.Version, old.Status = m.State, m.Version, m.Status
	old.Doc = append([]byte{}, m.Doc...)
	old.UpdatedAt = normTime(m.UpdatedAt)
	old.DefinitionVersion = m.DefinitionVersion
	old.WaitDeadline = normTime(m.WaitDeadline)
	t.stageMission(old)
	return nil
}

// DeleteMission implements store.Tx: a compare-and-set on the version,
// as UpdateMission.
func (t *txn) DeleteMission(ctx context.Context, tenant, id string, expectedVersion int64) error {
	t.mustWrite()
	old, ok := t.mission(id)
	if err := checkTenantCAS(ok, old.Tenant, tenant, old.Version, expectedVersion); err != nil {
		return err
	}
	delete(t.missions, id)
	put(&t.dropped, id, old)
	return nil
}

// PutSubmit implements store.Tx.
func (t *txn) PutSubmit(ctx context.Context, r store.SubmitRecord) error {
	t.mustWrite()
	k := submitKey{r.WorkflowID, r.ExpectedVersion}
	if _, ok := t.submit(k); ok {
		return store.ErrExists
	}
	r.Response = append([]byte{}, r.Response...)
	r.CreatedAt = normTime(r.CreatedAt)
	put(&t.submits, k, r)
	return nil
}

func (t *txn) submit(k submitKey) (store.SubmitRecord, bool) {
	return get(t.submits, t.db.submits, k)
}

// GetSubmit implements store.ReadTx.
func (t *txn) GetSubmit(ctx context.Context, tenant, workflowID string, expectedVersion int64) (store.SubmitRecord, error) {
	r, ok := t.submit(submitKey{workflowID, expectedVersion})
	if !ok || r.Tenant != tenant {
		return store.SubmitRecord{}, store.ErrNotFound
	}
	r.Response = append([]byte{}, r.Response...)
	return r, nil
}

func (t *txn) approval(id string) (store.Approval, bool) {
	return get(t.approvals, t.db.approvals, id)
}

func (t *txn) stageApproval(a store.Approval) {
	put(&t.approvals, a.ID, a)
}

// InsertApproval implements store.Tx.
func (t *txn) InsertApproval(ctx context.Context, a store.Approval) error {
	t.mustWrite()
	if _, ok := t.approval(a.ID); ok {
		return store.ErrExists
	}
	a = copyApproval(a)
	a.CreatedAt, a.ResolvedAt = normTime(a.CreatedAt), normTime(a.ResolvedAt)
	t.stageApproval(a)
	return nil
}

// UpdateApproval implements store.Tx: a compare-and-set on the status that
// changes the status, resolver, document and resolution time.
func (t *txn) UpdateApproval(ctx context.Context, a store.Approval, expectedStatus string) error {
	t.mustWrite()
	old, ok := t.approval(a.ID)
	if err := checkTenantCAS(ok, old.Tenant, a.Tenant, old.Status, expectedStatus); err != nil {
		return err
	}
	old.Status, old.ResolvedBy = a.Status, a.ResolvedBy
	old.Doc = append([]byte{}, a.Doc...)
	old.ResolvedAt = normTime(a.ResolvedAt)
	t.stageApproval(old)
	return nil
}

// GetApproval implements store.ReadTx.
func (t *txn) GetApproval(ctx context.Context, tenant, id string) (store.Approval, error) {
	a, ok := t.approval(id)
	if !ok || a.Tenant != tenant {
		return store.Approval{}, store.ErrNotFound
	}
	return copyApproval(a), nil
}

// ListApprovals implements store.ReadTx: the tenant's approvals with the
// status ("" for any), by creation time then id, at most limit (a negative
// limit means no bound, as SQL's LIMIT -1).
func (t *txn) ListApprovals(ctx context.Context, tenant, status string, limit int) ([]store.Approval, error) {
	var out []store.Approval
	add := func(a store.Approval) {
		if a.Tenant == tenant && (status == "" || a.Status == status) {
			out = append(out, copyApproval(a))
		}
	}
	for id, a := range t.db.approvals {
		if _, staged := t.approvals[id]; !staged {
			add(a)
		}
	}
	for _, a := range t.approvals {
		add(a)
	}
	slices.SortFunc(out, func(a, b store.Approval) int {
		return cmp.Or(cmp.Compare(nanos(a.CreatedAt), nanos(b.CreatedAt)), cmp.Compare(a.ID, b.ID))
	})
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ListMissions implements store.ReadTx, in the SQL drivers' order: newest
// update first (in unix nanoseconds), then id descending.
func (t *txn) ListMissions(ctx context.Context, tenant string, f store.MissionFilter, limit int) ([]store.Mission, error) {
	return t.selectMissions(func(m store.Mission) bool {
		return m.Tenant == tenant && (f.DefinitionID == "" || m.DefinitionID == f.DefinitionID) &&
			(f.State == "" || m.State == f.State) && (f.Status == "" || m.Status == f.Status)
	}, func(a, b store.Mission) int {
		return cmp.Or(cmp.Compare(nanos(b.UpdatedAt), nanos(a.UpdatedAt)), cmp.Compare(b.ID, a.ID))
	}, limit), nil
}

// MissionEvents implements store.ReadTx: the committed events (every
// trace's) and the staged ones that name the workflow, in causal order.
func (t *txn) MissionEvents(ctx context.Context, tenant, workflowID string, limit int) ([]store.Event, error) {
	if workflowID == "" || limit == 0 {
		return nil, nil
	}
	var all []store.Event
	seen := map[int64]bool{}
	keep := func(e store.Event) {
		if e.Tenant == tenant && e.WorkflowID == workflowID && !seen[e.Seq] {
			seen[e.Seq] = true
			all = insertSorted(all, e)
		}
	}
	for k, evs := range t.db.traces {
		if k.tenant != tenant {
			continue
		}
		for _, e := range evs {
			keep(e)
		}
	}
	for _, e := range t.events {
		keep(e)
	}
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	for i := range all {
		all[i].Attributes = jsonvalue.CloneMap(all[i].Attributes)
	}
	return all, nil
}
