package gateway

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file enforces the tenant quotas of server.quotas: how many open
// missions, pending approvals, memory records and goals one tenant may
// hold (store.QuotaOpenMissions and the other kinds say what counts).
//
// A quota is checked inside the write transaction that would add to it,
// before that transaction writes anything: the transaction takes the
// tenant's quota lock (store.QuotaTx.LockTenant: a row lock on
// PostgreSQL, so two replicas cannot both take the last slot; SQLite has
// one writer), counts, and refuses with quota-exceeded (429) when the
// creation would go past the limit. A refusal writes nothing but the
// call's audit event and consumes no idempotency key (see
// recordedRefusal). A start whose chain calls outside the gateway checks
// its open-missions quota when it takes its start lease, before the first
// outside call: the held start lease counts as an open mission from then
// on, so the slot is the start's until its mission is stored (the lease's
// deletion and the mission's insert commit together) or the start fails.
// A move whose outside calls may have acted is never refused afterwards:
// what it creates is stored, even past a quota, as its effect upstream
// cannot be undone (README "Tenant quotas").

// quotaState holds the quotas in force and what /metrics reads of them.
type quotaState struct {
	quotas   atomic.Pointer[config.Quotas]
	refusals sync.Map // kind -> *atomic.Int64

	mu      sync.Mutex
	usageAt time.Time
	usage   map[string]int
}

// usageTTL is how long /metrics reuses the usage it counted.
const usageTTL = 15 * time.Second

// openMissionLinks is how many open missions a quota-exceeded answer
// links to.
const openMissionLinks = 5

// limit returns the tenant's limit of the kind (0: unlimited).
func (q *quotaState) limit(tenant, kind string) int {
	l := q.quotas.Load().For(tenant)
	switch kind {
	case store.QuotaOpenMissions:
		return l.OpenMissions
	case store.QuotaPendingApprovals:
		return l.PendingApprovals
	case store.QuotaMemoryRecords:
		return l.MemoryRecords
	case store.QuotaGoals:
		return l.Goals
	}
	return 0
}

func (q *quotaState) refused(kind string) {
	v, _ := q.refusals.LoadOrStore(kind, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// QuotaRefusals reports how many creations the quota of the kind refused
// since the service started.
func (s *Service) QuotaRefusals(kind string) int64 {
	v, ok := s.quotas.refusals.Load(kind)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// QuotaUsage reports what every tenant together holds of the quota kind
// (the sum /metrics shows; the per-tenant count stays in the store), as
// counted at most usageTTL ago.
func (s *Service) QuotaUsage(ctx context.Context, kind string) (int, error) {
	q := &s.quotas
	q.mu.Lock()
	defer q.mu.Unlock()
	// Wall time, not the service's clock: the cache is operational.
	if q.usage != nil && time.Since(q.usageAt) < usageTTL {
		return q.usage[kind], nil
	}
	usage := map[string]int{}
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		for _, k := range store.QuotaKinds() {
			n, err := tx.TenantUsage(ctx, "", k)
			if err != nil {
				return err
			}
			usage[k] = n
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	q.usage, q.usageAt = usage, time.Now()
	return usage[kind], nil
}

// quotaNeed is what one write transaction adds to a tenant's quotas.
type quotaNeed struct {
	tenant string
	// n is how many objects of each kind the transaction adds.
	n map[string]int
	// links lists what the tenant holds open, for the answer (built
	// only when refused).
	links func(ctx context.Context, tx store.ReadTx, kind string) []contracts.Link
}

// check takes the tenant's quota lock and refuses, before anything is
// written, a transaction that would take the tenant past a limit. A need
// of kinds without a limit costs nothing (no lock, no count).
func (q *quotaState) check(ctx context.Context, tx store.Tx, need quotaNeed) error {
	locked := false
	for _, kind := range store.QuotaKinds() {
		n := need.n[kind]
		if n <= 0 {
			continue
		}
		limit := q.limit(need.tenant, kind)
		if limit <= 0 {
			continue
		}
		if !locked {
			if err := tx.LockTenant(ctx, need.tenant); err != nil {
				return err
			}
			locked = true
		}
		used, err := tx.TenantUsage(ctx, need.tenant, kind)
		if err != nil {
			return err
		}
		if used+n <= limit {
			continue
		}
		q.refused(kind)
		var links []contracts.Link
		if need.links != nil {
			links = need.links(ctx, tx, kind)
		}
		return quotaExceeded(kind, limit, used, links)
	}
	return nil
}

// quotaNouns name the kinds in messages.
var quotaNouns = map[string]string{
	store.QuotaOpenMissions:     "open missions",
	store.QuotaPendingApprovals: "pending approvals",
	store.QuotaMemoryRecords:    "memory records",
	store.QuotaGoals:            "goals",
}

// quotaHints say how to make room.
var quotaHints = map[string]string{
	store.QuotaOpenMissions:     "Complete or cancel one of the tenant's open missions (the links read them), then retry the same request with the same key.",
	store.QuotaPendingApprovals: "Have a pending approval approved or rejected (GET /v8/approvals?status=pending lists them), or cancel its mission, then retry the same request with the same key.",
	store.QuotaMemoryRecords:    "Import fewer records, or ask the operator to raise server.quotas.memoryRecords for the tenant.",
	store.QuotaGoals:            "Import fewer goals, or ask the operator to raise server.quotas.goals for the tenant.",
}

// quotaExceeded is the answer of a creation past a quota: the kind is the
// field error's detail (keyword quota), as insufficient-scope names its
// scope.
func quotaExceeded(kind string, limit, used int, links []contracts.Link) *contracts.Error {
	return &contracts.Error{Code: contracts.CodeQuotaExceeded,
		Message: fmt.Sprintf("the tenant holds %d %s and its quota is %d: nothing was created", used, quotaNouns[kind], limit),
		Hint:    quotaHints[kind],
		Links:   links,
		Fields:  []contracts.FieldError{{Pointer: "", Keyword: "quota", Detail: kind}}}
}

// missionQuotaLinks lists what a mission creation at a quota can act on:
// for open missions, a read of each of the tenant's oldest open missions
// (up to openMissionLinks) and the workflow search; for pending
// approvals, a read of each mission waiting for one of the tenant's
// oldest pending approvals. The links name the tools of the surface the
// call came in on (style).
func missionQuotaLinks(style op.LinkStyle, tenant string) func(ctx context.Context, tx store.ReadTx, kind string) []contracts.Link {
	return func(ctx context.Context, tx store.ReadTx, kind string) []contracts.Link {
		var open []store.Mission
		var err error
		switch kind {
		case store.QuotaOpenMissions:
			open, err = tx.OpenMissions(ctx, tenant, openMissionLinks)
		case store.QuotaPendingApprovals:
			var list []store.Approval
			list, err = tx.ListApprovals(ctx, tenant, "pending", openMissionLinks)
			for _, a := range list {
				open = append(open, store.Mission{ID: a.WorkflowID, RunID: a.RunID})
			}
		}
		links := []contracts.Link{}
		if err == nil {
			for _, m := range open {
				if style == op.StyleAura {
					links = append(links, contracts.Link{Rel: "get", Title: "Read the open mission " + m.RunID,
						Method: contracts.ToolGetMission, Args: map[string]any{"runId": m.RunID}})
				} else {
					links = append(links, contracts.Link{Rel: "get", Title: "Read the open workflow " + m.ID,
						Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": m.ID}})
				}
			}
		}
		if style == op.StyleAura {
			return append(links, contracts.Link{Rel: "search", Title: "Search the workflows", Method: contracts.ToolSearchCapabilities,
				Args: map[string]any{"query": "", "kind": "workflow"}})
		}
		return append(links, contracts.Link{Rel: "list_workflows", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": "", "kind": "workflow"}})
	}
}

// checkOutcomeQuota checks, before anything is written, the quotas an
// engine outcome adds to: the open missions it stores (a new instance
// unless the start's lease holds its slot already, and sub-workflows),
// counting only those left active outside proxy_default, and the approval
// it queues. A move whose outside calls may have acted is not refused
// (its effect happened: see the top of this file).
func (ms *missions) checkOutcomeQuota(ctx context.Context, tx store.Tx, e *env, out *workflow.Outcome, before *workflow.Instance) error {
	if e.tape != nil && e.tape.MayHaveActed() {
		return nil
	}
	n := map[string]int{}
	open := func(in *workflow.Instance) bool {
		d, _ := ms.workflows.Lookup(in.DefinitionID)
		return in.DefinitionID != config.ProxyDefaultWorkflow && in.Status(d) == "active"
	}
	for _, child := range out.Children {
		if open(child) {
			n[store.QuotaOpenMissions]++
		}
	}
	if before == nil && e.startLease == nil && open(out.Instance) {
		n[store.QuotaOpenMissions]++
	}
	if out.Pending != nil {
		n[store.QuotaPendingApprovals]++
	}
	if len(n) == 0 {
		return nil
	}
	tenant := out.Instance.Tenant
	return ms.quotas.check(ctx, tx, quotaNeed{tenant: tenant, n: n, links: missionQuotaLinks(callStyle(e), tenant)})
}

// callStyle is the link style of the call's surface: the aura_* tools'
// or the praxec pair's (an approval answers with praxec links).
func callStyle(e *env) op.LinkStyle {
	switch e.Tool.Name {
	case contracts.ToolCreateMission, contracts.ToolSignalMission, contracts.ToolCancelMission:
		return op.StyleAura
	}
	return op.StylePraxec
}

// startQuotaHook returns the tape's hook before the first outside call of
// a start that takes no start lease (no runId and no key to be known
// by): it checks the open-missions quota, under the tenant's lock, and
// refuses the start before it calls (e.refusal); nil when the start needs
// no check. Such a start holds no slot while it calls: the check in its
// transaction is skipped once a call may have acted, so concurrent
// keyless starts can pass a quota by the starts in flight.
func (ms *missions) startQuotaHook(e *env, definitionID string) func(ctx context.Context) error {
	tenant := e.Principal.Tenant
	if definitionID == config.ProxyDefaultWorkflow || ms.quotas.limit(tenant, store.QuotaOpenMissions) <= 0 {
		return nil
	}
	return func(ctx context.Context) error {
		err := ms.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
			return ms.quotas.check(ctx, tx, startQuotaNeed(e, definitionID))
		})
		if err != nil {
			e.refusal = asContractError(err)
			return errLeaseRefused
		}
		return nil
	}
}

// startQuotaNeed is what a start adds to its tenant's quotas once its
// lease is taken or its mission stored: one open mission, unless it runs
// proxy_default.
func startQuotaNeed(e *env, definitionID string) quotaNeed {
	tenant := e.Principal.Tenant
	need := quotaNeed{tenant: tenant, n: map[string]int{}, links: missionQuotaLinks(callStyle(e), tenant)}
	if definitionID != config.ProxyDefaultWorkflow {
		need.n[store.QuotaOpenMissions] = 1
	}
	return need
}

// CheckImportQuota checks the memory-records or goals quota of an import
// that adds added records of kind to the tenant's context, inside the
// import's transaction tx and before it writes any (knowledge.ImportQuota).
// Its link lists what the tenant holds in the compartment and for the
// purpose of the first record the import writes.
func (s *Service) CheckImportQuota(ctx context.Context, tx store.Tx, kind, tenant string, added int, writes []store.ContextRecord) error {
	quota, tool, rel := store.QuotaMemoryRecords, contracts.ToolQueryMemory, "query_memory"
	if kind == store.KindGoal {
		quota, tool, rel = store.QuotaGoals, contracts.ToolListGoals, "list_goals"
	}
	return s.quotas.check(ctx, tx, quotaNeed{tenant: tenant, n: map[string]int{quota: added},
		links: func(context.Context, store.ReadTx, string) []contracts.Link {
			if len(writes) == 0 || len(writes[0].Purposes) == 0 {
				return nil
			}
			args := map[string]any{"compartment": writes[0].Compartment, "purpose": writes[0].Purposes[0]}
			if kind == store.KindMemory {
				args["query"] = ""
			}
			return []contracts.Link{{Rel: rel, Title: "List what the tenant holds in compartment " + writes[0].Compartment, Method: tool, Args: args}}
		}})
}
