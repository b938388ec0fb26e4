package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// missions is the mission machinery of the service: a mission's start,
// its moves, reads, listing and cancellation, the outside calls a move
// makes before its transaction (external.go) under its lease (leases,
// leases.go), the waits on sub-workflows (waits.go), the approvals'
// resolution, the moves that outlive their requests (outlive.go) and the
// run sweeper (runs_expire.go). The Service admits a call (scope,
// tenancy, idempotency, policy, quotas, rate limits) and hands the
// operation to it through its operations table; missions never calls
// back into the Service. It shares with the pipeline only what it is
// given in New: the store, the clock, the logger, the workflows in force
// (a reload replaces their content in place), the catalogue (the
// workflows a goal names) and the tenant quotas.
type missions struct {
	store     store.Store
	now       func() time.Time
	log       *slog.Logger
	workflows *workflow.Registry
	// engine moves the missions; the light path of direct calls runs its
	// executors too (its CallStandalone).
	engine *workflow.Engine
	// cat is the catalogue in force: the workflows an intent or a goal
	// matches (candidates).
	cat *catalogue.Catalogue
	// quotas are the tenant quotas a start and a move are held to
	// (quotas.go), shared with the service, which reloads them.
	quotas *quotaState
	// leases are the move and start leases of the moves that reach
	// outside (leases.go, leases_start.go, leases_sweep.go).
	leases *leases
	// moves serializes the moves that reach outside (external.go).
	moves moveLocks
	// runs is the run sweeper's state (runs_expire.go).
	runs runExpiry
	// detached tracks the moves that outlived their request (outlive.go).
	detached detached
}

// newMissions builds the missions of a service over st from its options
// (the clock, the logger, the workflows, the lease TTL and the run
// retention), its engine, catalogue, quotas and key times.
func newMissions(st store.Store, o *Options, engine *workflow.Engine, cat *catalogue.Catalogue, quotas *quotaState, keys keyTimes) *missions {
	ls := &leases{store: st, now: o.Now, log: o.Logger, workflows: o.Workflows, keys: keys, quotas: quotas,
		owner: newID("gw"), leaseTTL: o.LeaseTTL}
	if ls.leaseTTL <= 0 {
		ls.leaseTTL = DefaultLeaseTTL
	}
	ms := &missions{store: st, now: o.Now, log: o.Logger, workflows: o.Workflows, engine: engine, cat: cat, quotas: quotas, leases: ls}
	ms.runs.setRetention(o.RunRetention)
	return ms
}

// WorkflowRef is the workflow member of a mission projection.
type WorkflowRef struct {
	ID                string `json:"id"`
	DefinitionID      string `json:"definitionId"`
	DefinitionVersion int    `json:"definitionVersion"`
	State             string `json:"state"`
	Version           int64  `json:"version"`
}

// ResultStatus is the result member of a mission projection.
type ResultStatus struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// Projection is the seeds/000 workflow answer (get, start, submit); the
// aura_* tools add runId.
type Projection struct {
	RunID    string           `json:"runId,omitempty"`
	Workflow WorkflowRef      `json:"workflow"`
	Result   ResultStatus     `json:"result"`
	Context  map[string]any   `json:"context"`
	Links    []contracts.Link `json:"links"`
	Evidence []string         `json:"evidence"`
	Chain    []workflow.Step  `json:"chain,omitempty"`
	Approval *ApprovalRef     `json:"approval,omitempty"`
	// Waiting names the sub-workflow a parked move waits for.
	Waiting *WaitingRef `json:"waiting,omitempty"`
	// Moving names the move a request runs on the current version (a
	// read's answer only; inflight.go).
	Moving *MovingRef `json:"moving,omitempty"`
}

// ApprovalRef names the approval a mission waits for.
type ApprovalRef struct {
	ID         string `json:"id"`
	Transition string `json:"transition"`
	Queue      string `json:"queue,omitempty"`
}

// The result statuses.
const (
	statusStarted   = "started"
	statusExecuted  = "executed"
	statusWaiting   = "waiting_for_action"
	statusPending   = "pending_approval"
	statusCompleted = "completed"
)

var nullJSON = json.RawMessage("null")

// project renders an instance. status is the call's own status; a terminal
// state always answers completed with no links, a pending approval
// pending_approval.
func project(wf *workflow.Registry, in *workflow.Instance, status string, style op.LinkStyle, chain []workflow.Step) Projection {
	d, _ := wf.Lookup(in.DefinitionID)
	p := Projection{
		Workflow: WorkflowRef{ID: in.ID, DefinitionID: in.DefinitionID, DefinitionVersion: in.DefinitionVersion, State: in.State, Version: in.Version},
		Context:  in.Context, Evidence: in.Evidence, Chain: chain, Links: []contracts.Link{},
	}
	if p.Context == nil {
		p.Context = map[string]any{}
	}
	if p.Evidence == nil {
		p.Evidence = []string{}
	}
	if style == op.StyleAura {
		p.RunID = in.RunID
	}
	switch {
	case d == nil || d.Terminal(in.State):
		status = statusCompleted
	case in.Pending != nil:
		status = statusPending
		p.Approval = &ApprovalRef{ID: in.Pending.ApprovalID, Transition: in.Pending.Transition, Queue: in.Pending.Queue}
	}
	p.Result.Status = status
	if status == statusCompleted || d == nil {
		return p
	}
	if in.Waiting != nil {
		// A parked move: no transition is legal until the child ends;
		// the links read this mission back and lead to the child.
		p.Waiting, p.Links = waitingRef(in, style) // waits.go
		return p
	}
	if in.Pending != nil {
		// The answer to wait on: read the mission again to see the approval
		// resolved.
		get := contracts.Link{Rel: "get", Title: "Read the mission (waiting for approval " + in.Pending.ApprovalID + ")",
			Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": in.ID}}
		if style == op.StyleAura {
			get.Method, get.Args = contracts.ToolGetMission, map[string]any{"runId": in.RunID}
		}
		p.Links = append(p.Links, get)
	}
	for _, t := range d.Legal(in.State) {
		if in.Pending != nil && in.Pending.Transition == t.Name {
			continue
		}
		p.Links = append(p.Links, transitionLink(in, t, style))
	}
	if style == op.StyleAura {
		p.Links = append(p.Links, contracts.Link{Rel: "cancel", Title: "Cancel the mission", Method: contracts.ToolCancelMission,
			Args: map[string]any{"runId": in.RunID, "idempotencyKey": NewIdempotencyKey()}})
	}
	return p
}

func transitionLink(in *workflow.Instance, t *workflow.Transition, style op.LinkStyle) contracts.Link {
	l := contracts.Link{Rel: t.Name, Title: t.Title, Description: nullJSON, Actor: t.Actor(), InputSchema: t.InputSchema()}
	if t.Title == "" {
		l.Title = t.Name
	}
	if t.Description != "" {
		l.Description, _ = json.Marshal(t.Description)
	}
	if style == op.StyleAura {
		l.Method = contracts.ToolSignalMission
		l.Args = map[string]any{"runId": in.RunID, "signal": t.Name, "expectedVersion": in.Version, "idempotencyKey": NewIdempotencyKey()}
	} else {
		l.Method = contracts.ToolPraxecCommand
		l.Args = map[string]any{"workflowId": in.ID, "expectedVersion": in.Version, "transition": t.Name}
	}
	if len(t.Prefill) > 0 {
		l.Args["arguments"] = workflow.Resolve(t.Prefill, workflow.Scope{Context: in.Context, Input: in.Input})
	}
	return l
}

// missionDoc is what the store keeps of an instance beside its columns.
type missionDoc struct {
	Context  map[string]any    `json:"context"`
	Input    map[string]any    `json:"input"`
	Evidence []string          `json:"evidence"`
	Pending  *workflow.Pending `json:"pending,omitempty"`
	Waiting  *workflow.Waiting `json:"waiting,omitempty"`
}

func toStore(in *workflow.Instance, d *workflow.Definition, now store.Mission) (store.Mission, error) {
	doc, err := json.Marshal(missionDoc{Context: in.Context, Input: in.Input, Evidence: in.Evidence, Pending: in.Pending, Waiting: in.Waiting})
	if err != nil {
		return store.Mission{}, err
	}
	m := now
	m.Tenant, m.ID, m.RunID, m.DefinitionID, m.DefinitionVersion = in.Tenant, in.ID, in.RunID, in.DefinitionID, in.DefinitionVersion
	m.State, m.Version, m.Status, m.ParentID, m.Doc = in.State, in.Version, in.Status(d), in.ParentID, doc
	m.WaitDeadline = time.Time{}
	if in.Waiting != nil {
		m.WaitDeadline = in.Waiting.Deadline
		if !in.Waiting.ResumeAt.IsZero() {
			// Due now: the wait sweeper resumes it (waits.go).
			m.WaitDeadline = in.Waiting.ResumeAt
		}
	}
	return m, nil
}

func fromStore(m store.Mission) (*workflow.Instance, error) {
	var doc missionDoc
	if err := json.Unmarshal(m.Doc, &doc); err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	return &workflow.Instance{ID: m.ID, RunID: m.RunID, Tenant: m.Tenant, DefinitionID: m.DefinitionID,
		DefinitionVersion: m.DefinitionVersion, State: m.State, Version: m.Version, ParentID: m.ParentID,
		Context: doc.Context, Input: doc.Input, Evidence: doc.Evidence, Pending: doc.Pending, Waiting: doc.Waiting}, nil
}

// notFound is the one answer for a mission that does not exist or belongs
// to another tenant.
func missionNotFound(ref string, byRunID bool) *contracts.Error {
	ce := contracts.Errorf(contracts.CodeNotFound, "there is no mission %s", ref)
	// The next move: find the workflow to start. A runId names a mission
	// of the aura tools, a workflowId one of the praxec pair; each links
	// its own surface. The answer is the same for another tenant's.
	if byRunID {
		ce.Links = []contracts.Link{{Rel: "search", Title: "Search the workflows", Method: contracts.ToolSearchCapabilities, Args: map[string]any{"query": "", "kind": "workflow"}}}
	} else {
		ce.Links = []contracts.Link{{Rel: "list_workflows", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": "", "kind": "workflow"}}}
	}
	return ce
}

func (ms *missions) loadMission(ctx context.Context, tx store.ReadTx, tenant string, byRunID bool, ref string) (*workflow.Instance, store.Mission, error) {
	var m store.Mission
	var err error
	if byRunID {
		m, err = tx.GetMissionByRunID(ctx, tenant, ref)
	} else {
		m, err = tx.GetMission(ctx, tenant, ref)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, m, missionNotFound(ref, byRunID)
	}
	if err != nil {
		return nil, m, err
	}
	if m.Status == store.StatusStarting {
		return nil, m, runStarting(m, byRunID) // inflight.go
	}
	in, err := fromStore(m)
	return in, m, err
}

// persist writes an outcome: the instance (inserted when new, else
// compare-and-set from expectedVersion), sub-workflow instances, the
// approval it queued or dropped, and its audit events. A move's tenant
// quotas are checked first, before anything is written (a start's were,
// by startMission).
func (ms *missions) persist(ctx context.Context, tx store.Tx, e *env, out *workflow.Outcome, before *workflow.Instance, prev store.Mission) error {
	if before != nil {
		if err := ms.checkOutcomeQuota(ctx, tx, e, out, before); err != nil { // quotas.go
			return err
		}
		if err := ms.leases.checkLease(ctx, tx, e, before); err != nil { // leases.go
			return err
		}
	}
	ms.setWaitDeadlines(e, out) // waits.go
	for _, child := range out.Children {
		cd, _ := ms.workflows.Lookup(child.DefinitionID)
		m, err := toStore(child, cd, store.Mission{CreatedAt: e.Now, UpdatedAt: e.Now})
		if err != nil {
			return err
		}
		if err := tx.InsertMission(ctx, m); err != nil {
			return err
		}
	}
	in := out.Instance
	d, _ := ms.workflows.Lookup(in.DefinitionID)
	if before == nil {
		m, err := toStore(in, d, store.Mission{CreatedAt: e.Now, UpdatedAt: e.Now})
		if err != nil {
			return err
		}
		if e.ownsRun(m) {
			// The run stored with the start's lease becomes the workflow.
			if err := tx.UpdateMission(ctx, m, 0); err != nil {
				return fmt.Errorf("the run stored with start lease %s: %w", e.startLease.Ref, err)
			}
		} else if err := tx.InsertMission(ctx, m); err != nil {
			if errors.Is(err, store.ErrExists) {
				return runIDTaken(ctx, tx, in)
			}
			return err
		}
	} else {
		prev.UpdatedAt = e.Now
		m, err := toStore(in, d, prev)
		if err != nil {
			return err
		}
		if err := tx.UpdateMission(ctx, m, before.Version); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return versionConflict(in.ID, before.Version)
			}
			return err
		}
		if before.Pending != nil && (in.Pending == nil || in.Pending.ApprovalID != before.Pending.ApprovalID) && out.Pending == nil {
			// The waiting approval was overtaken by another move or a cancel.
			if err := ms.closeApproval(ctx, tx, e, in.Tenant, before.Pending.ApprovalID, "cancelled"); err != nil {
				return err
			}
		}
		if err := ms.afterMove(ctx, tx, e, before, in, d); err != nil { // waits.go
			return err
		}
	}
	if out.Pending != nil {
		doc, _ := json.Marshal(map[string]any{"arguments": out.Pending.Arguments, "version": in.Version})
		if err := tx.InsertApproval(ctx, store.Approval{Tenant: in.Tenant, ID: out.Pending.ApprovalID, WorkflowID: in.ID, RunID: in.RunID,
			Transition: out.Pending.Transition, Queue: out.Pending.Queue, Status: "pending", RequestedBy: e.Principal.Subject,
			Doc: doc, CreatedAt: e.Now}); err != nil {
			return err
		}
	}
	ms.engineEvents(e, out.Events, in.RunID)
	return nil
}

// pendingApproval reads approval id of tenant; ok is false when there is
// none or it is no longer pending.
func pendingApproval(ctx context.Context, tx store.ReadTx, tenant, id string) (a store.Approval, ok bool, err error) {
	a, err = tx.GetApproval(ctx, tenant, id)
	if errors.Is(err, store.ErrNotFound) {
		return a, false, nil
	}
	return a, err == nil && a.Status == "pending", err
}

func (ms *missions) closeApproval(ctx context.Context, tx store.Tx, e *env, tenant, id, status string) error {
	a, ok, err := pendingApproval(ctx, tx, tenant, id)
	if err != nil || !ok {
		return err
	}
	a.Status, a.ResolvedAt = status, e.Now
	if e.Principal != nil {
		a.ResolvedBy = e.Principal.Subject
	}
	return tx.UpdateApproval(ctx, a, "pending")
}

// engineEvents turns the engine's events into audit events of the call.
func (ms *missions) engineEvents(e *env, events []workflow.Event, runID string) {
	for _, ev := range events {
		attrs := ev.Attributes
		if summary := stringArg(e.Args, "summary"); summary != "" && ev.Type == "transition.fired" {
			attrs["summary"] = summary
		}
		if t := stringArg(e.Args, "traceId"); t != "" {
			attrs["callTraceId"] = t
		}
		se := op.EventSpec{Type: ev.Type, Outcome: "allowed", WorkflowID: ev.WorkflowID, RunID: runID, Attributes: attrs}
		if ev.Type == "guard.rejected" {
			se.Outcome, se.Code = "refused", string(contracts.CodeGuardRejected)
		}
		e.Events = append(e.Events, e.EventOf(se))
	}
}

func runIDTaken(ctx context.Context, tx store.Tx, in *workflow.Instance) error {
	existing, err := tx.GetMissionByRunID(ctx, in.Tenant, in.RunID)
	if err != nil {
		return err
	}
	return &contracts.Error{Code: contracts.CodeRunIDAlreadyRunning,
		Message: fmt.Sprintf("An instance already exists with run_id '%s'.", in.RunID),
		Hint:    "Each run_id is single-use. Fetch the existing instance with the linked get, or retry with a fresh run_id.",
		Links:   []contracts.Link{{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": existing.ID}}}}
}

func versionConflict(workflowID string, expected int64) *contracts.Error {
	return &contracts.Error{Code: contracts.CodeVersionConflict,
		Message: fmt.Sprintf("workflow %s is no longer at version %d", workflowID, expected),
		Hint:    "Read the workflow again and follow a link of the fresh answer.",
		Links:   []contracts.Link{{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": workflowID}}}}
}

// auraError rewrites the praxec links of an error answered on an aura_*
// route. Links in aura_* answers name aura_* tools (DESIGN, "Missions are
// praxec workflows"), errors included; the engine and the conflicts above
// build praxec links (seeds/000), which an aura-only client cannot follow
// and which lead to a projection without runId. A get link becomes
// aura_get_mission on runID (the mission the error is about); the
// workflow list becomes aura_search_capabilities. Other links are kept.
func auraError(err error, runID string) error {
	var ce *contracts.Error
	if !errors.As(err, &ce) || len(ce.Links) == 0 {
		return err
	}
	c := *ce
	c.Links = make([]contracts.Link, 0, len(ce.Links))
	for _, l := range ce.Links {
		switch {
		case l.Method == contracts.ToolPraxecQuery && l.Rel == "get" && runID != "":
			l = contracts.Link{Rel: "get", Title: "Read the mission", Method: contracts.ToolGetMission, Args: map[string]any{"runId": runID}}
		case l.Method == contracts.ToolPraxecQuery && l.Rel == "list_workflows":
			l = contracts.Link{Rel: "search", Title: "Search the workflows", Method: contracts.ToolSearchCapabilities, Args: map[string]any{"query": "", "kind": "workflow"}}
		}
		c.Links = append(c.Links, l)
	}
	return &c
}

// startMission starts a workflow for the call's principal.
func (ms *missions) startMission(ctx context.Context, tx store.Tx, e *env, definitionID, runID string, input map[string]any) (*workflow.Outcome, error) {
	// The start's lease first: the run a start stores with its lease has
	// its runId, and the lease says whose it is and how it ended.
	if err := ms.leases.checkStartLease(ctx, tx, e, runID); err != nil { // leases_start.go
		return nil, err
	}
	if runID != "" {
		if existing, err := tx.GetMissionByRunID(ctx, e.Principal.Tenant, runID); err == nil && !e.ownsRun(existing) {
			return nil, runIDTaken(ctx, tx, &workflow.Instance{Tenant: e.Principal.Tenant, RunID: existing.RunID})
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	out, err := ms.engine.Start(ms.moveCtx(ctx, e), workflow.StartRequest{ID: e.startRun, DefinitionID: definitionID, Input: input, RunID: runID,
		Tenant: e.Principal.Tenant})
	if err != nil {
		if out != nil {
			ms.engineEvents(e, out.Events, runID)
		}
		return nil, ms.leases.finishStart(ctx, tx, e, definitionID, moveError(err, ""))
	}
	// The quotas before any write (finishStart deletes the start lease).
	if err := ms.checkOutcomeQuota(ctx, tx, e, out, nil); err != nil { // quotas.go
		return nil, err
	}
	if err := ms.leases.finishStart(ctx, tx, e, definitionID, nil); err != nil {
		return nil, err
	}
	if err := ms.persist(ctx, tx, e, out, nil, store.Mission{}); err != nil {
		return nil, err
	}
	return out, nil
}

// praxecStart serves praxec.command start.
func (ms *missions) praxecStart(ctx context.Context, tx store.Tx, e *env) (any, error) {
	input, _ := e.Args["input"].(map[string]any)
	out, err := ms.startMission(ctx, tx, e, stringArg(e.Args, "definitionId"), stringArg(e.Args, "runId"), input)
	if err != nil {
		return nil, err
	}
	return project(ms.workflows, out.Instance, statusStarted, op.StylePraxec, out.Chain), nil
}

// submitFingerprint identifies a submit for exact replay.
func submitFingerprint(transition string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"transition": transition, "arguments": args})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// submit fires a transition of a loaded instance, with the arguments and
// the expectedVersion the request gives under those names on every
// surface. An exact replay of a submit that already succeeded answers the
// recorded response.
func (ms *missions) submit(ctx context.Context, tx store.Tx, e *env, byRunID bool, ref, transition string, style op.LinkStyle) (_ any, err error) {
	args, _ := e.Args["arguments"].(map[string]any)
	expected := int64Arg(e.Args, "expectedVersion")
	in, m, err := ms.loadMission(ctx, tx, e.Principal.Tenant, byRunID, ref)
	if err != nil {
		return nil, err
	}
	if style == op.StyleAura {
		// Fix: VERSION_CONFLICT and GUARD_REJECTED answered a signal with
		// praxec get links; an aura_* answer links aura_* tools.
		defer func() { err = auraError(err, in.RunID) }()
	}
	if args == nil {
		args = map[string]any{}
	}
	fp := submitFingerprint(transition, args)
	if expected != in.Version {
		if rec, err := tx.GetSubmit(ctx, in.Tenant, in.ID, expected); err == nil && rec.Fingerprint == fp+styleSuffix(style) {
			return replaySubmit(rec) // leases.go: a recorded outcome-unknown replays as one
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, versionConflict(in.ID, expected)
	}
	d, _ := ms.workflows.Lookup(in.DefinitionID)
	if style == op.StyleAura && d != nil && d.Terminal(in.State) {
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "the mission ended in state %s and takes no signal", in.State)
	}
	out, err := ms.engine.Fire(ms.moveCtx(ctx, e), in, transition, args)
	if err != nil {
		if out != nil {
			ms.engineEvents(e, out.Events, in.RunID)
		}
		if ce := (*contracts.Error)(nil); errors.As(err, &ce) && ce.Code == contracts.CodeOutcomeUnknown && ms.reachesOutside(in.DefinitionID) {
			return nil, ms.leases.submitUnknown(ctx, tx, e, m, transition, fp+styleSuffix(style), ce) // leases.go
		}
		if e.actedBefore(in) {
			// A call of the move may have acted before it failed: the
			// answer is the outcome-unknown its lease would be resolved
			// to, recorded now so that the retries answer the same.
			ce := actedUnknown(fmt.Sprintf("the move %s on workflow %s at version %d", transition, in.ID, in.Version), err)
			return nil, ms.leases.submitUnknown(ctx, tx, e, m, transition, fp+styleSuffix(style), ce)
		}
		return nil, moveError(err, in.ID)
	}
	if err := ms.persist(ctx, tx, e, out, in, m); err != nil {
		return nil, err
	}
	status := statusExecuted
	p := project(ms.workflows, out.Instance, status, style, out.Chain)
	body, err := marshal(p)
	if err != nil {
		return nil, err
	}
	if err := tx.PutSubmit(ctx, store.SubmitRecord{Tenant: in.Tenant, WorkflowID: in.ID, ExpectedVersion: expected,
		Fingerprint: fp + styleSuffix(style), Response: body, CreatedAt: e.Now}); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, versionConflict(in.ID, expected)
		}
		return nil, err
	}
	return json.RawMessage(body), nil
}

// styleSuffix keeps a praxec submit from replaying an aura signal's answer
// (their links differ) and the reverse.
func styleSuffix(style op.LinkStyle) string {
	if style == op.StyleAura {
		return ":aura"
	}
	return ""
}

func int64Arg(args map[string]any, name string) int64 { return op.Int64Arg(args, name) }

// praxecSubmit serves praxec.command submit.
func (ms *missions) praxecSubmit(ctx context.Context, tx store.Tx, e *env) (any, error) {
	return ms.submit(ctx, tx, e, false, stringArg(e.Args, "workflowId"), stringArg(e.Args, "transition"), op.StylePraxec)
}

// praxecGet serves praxec.query get.
func (ms *missions) praxecGet(ctx context.Context, tx store.ReadTx, e *env) (any, error) {
	in, _, err := ms.loadMission(ctx, tx, e.Principal.Tenant, false, stringArg(e.Args, "workflowId"))
	if err != nil {
		return nil, err
	}
	p := project(ms.workflows, in, statusWaiting, op.StylePraxec, nil)
	if p.Moving, err = ms.movingRef(ctx, tx, in); err != nil { // inflight.go
		return nil, err
	}
	return p, nil
}

// Explanation is the answer of praxec.query explain.
type Explanation struct {
	WorkflowID              string   `json:"workflowId"`
	CurrentState            string   `json:"currentState"`
	Transition              string   `json:"transition"`
	AllowedFromCurrentState bool     `json:"allowedFromCurrentState"`
	Actor                   *string  `json:"actor"`
	Deterministic           bool     `json:"deterministic"`
	LegalTransitionsNow     []string `json:"legalTransitionsNow"`
}

// praxecExplain serves praxec.query explain: can this transition fire from
// where the instance is now, and what else can?
func (ms *missions) praxecExplain(ctx context.Context, tx store.ReadTx, e *env) (any, error) {
	in, _, err := ms.loadMission(ctx, tx, e.Principal.Tenant, false, stringArg(e.Args, "workflowId"))
	if err != nil {
		return nil, err
	}
	name := stringArg(e.Args, "transition")
	x := Explanation{WorkflowID: in.ID, CurrentState: in.State, Transition: name, LegalTransitionsNow: []string{}}
	d, ok := ms.workflows.Lookup(in.DefinitionID)
	if !ok {
		return x, nil
	}
	for _, t := range d.Legal(in.State) {
		if in.Pending != nil && in.Pending.Transition == t.Name || in.Waiting != nil {
			continue
		}
		x.LegalTransitionsNow = append(x.LegalTransitionsNow, t.Name)
		if t.Name == name {
			x.AllowedFromCurrentState = true
		}
	}
	if t, ok := d.Transition(name); ok {
		actor := t.Actor()
		x.Actor = &actor
		x.Deterministic = actor == config.ActorDeterministic
	}
	return x, nil
}

// createMission serves aura_create_mission. Without a definitionId the goal
// is compiled to a workflow: the one best match starts; several equal
// matches answer AMBIGUOUS_INTENT with a create link for each.
func (ms *missions) createMission(ctx context.Context, tx store.Tx, e *env) (any, error) {
	def := stringArg(e.Args, "definitionId")
	goal := stringArg(e.Args, "goal")
	if def == "" {
		cands := ms.candidates(goal)
		switch {
		case len(cands) == 0:
			return nil, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "no configured workflow matches the goal",
				Hint:   "Name a definitionId, or search the workflows first.",
				Fields: []contracts.FieldError{{Pointer: "/goal", Detail: "matches no configured workflow"}},
				Links:  []contracts.Link{{Rel: "search", Method: contracts.ToolSearchCapabilities, Args: map[string]any{"query": "", "kind": "workflow"}}}}
		case len(cands) > 1 && cands[0].Score == cands[1].Score:
			err := &contracts.Error{Code: contracts.CodeAmbiguousIntent, Message: "several workflows match the goal equally",
				Hint: "Choose one: each link creates the mission with that workflow."}
			for _, c := range cands {
				if c.Score < cands[0].Score {
					break
				}
				args := map[string]any{"goal": goal, "definitionId": c.DefinitionID, "idempotencyKey": NewIdempotencyKey()}
				if in, ok := e.Args["input"]; ok {
					args["input"] = in
				}
				err.Links = append(err.Links, contracts.Link{Rel: "create_" + c.DefinitionID, Title: c.Title, Method: contracts.ToolCreateMission, Args: args})
			}
			return nil, err
		}
		def = cands[0].DefinitionID
	}
	input, _ := e.Args["input"].(map[string]any)
	out, err := ms.startMission(ctx, tx, e, def, stringArg(e.Args, "runId"), input)
	if err != nil {
		// Fix: RUN_ID_ALREADY_RUNNING (and an unknown definitionId) answered
		// aura_create_mission with praxec links; the existing mission is
		// the one with the runId the caller sent.
		return nil, auraError(err, stringArg(e.Args, "runId"))
	}
	e.Event("mission.created", map[string]any{"runId": out.Instance.RunID, "workflowId": out.Instance.ID, "definitionId": def})
	return project(ms.workflows, out.Instance, statusStarted, op.StyleAura, out.Chain), nil
}

// candidates ranks the configured workflows against free text, best first,
// with the discovery index's search (ties in id order); blank text has
// none.
func (ms *missions) candidates(text string) []Candidate {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var out []Candidate
	for _, h := range ms.cat.Index().Search(discovery.Query{Text: text, Kinds: []discovery.Kind{discovery.KindWorkflow}, Limit: discovery.MaxLimit}) {
		out = append(out, Candidate{DefinitionID: h.Item.ID, Title: h.Item.Title, Description: h.Item.Description, Score: h.Score})
	}
	return out
}

// getMission serves aura_get_mission.
func (ms *missions) getMission(ctx context.Context, tx store.ReadTx, e *env) (any, error) {
	runID := stringArg(e.Args, "runId")
	in, _, err := ms.loadMission(ctx, tx, e.Principal.Tenant, true, runID)
	if ce := (*contracts.Error)(nil); errors.As(err, &ce) && ce.Code == contracts.CodeNotFound {
		// A run whose start still runs is starting, not missing (inflight.go).
		starting, serr := ms.startRunning(ctx, tx, e.Principal.Tenant, runID)
		if serr != nil {
			return nil, serr
		}
		if starting != nil {
			return nil, starting
		}
	}
	if err != nil {
		return nil, err
	}
	p := project(ms.workflows, in, statusWaiting, op.StyleAura, nil)
	if l, ok := startTraceLink(in); ok { // leases_start.go
		p.Links = append(p.Links, l)
	}
	if p.Moving, err = ms.movingRef(ctx, tx, in); err != nil {
		return nil, err
	}
	return p, nil
}

// signalMission serves aura_signal_mission.
func (ms *missions) signalMission(ctx context.Context, tx store.Tx, e *env) (any, error) {
	return ms.submit(ctx, tx, e, true, stringArg(e.Args, "runId"), stringArg(e.Args, "signal"), op.StyleAura)
}

// cancelMission serves aura_cancel_mission: durable, idempotent on a
// cancelled mission, refused on one that completed otherwise.
func (ms *missions) cancelMission(ctx context.Context, tx store.Tx, e *env) (any, error) {
	in, m, err := ms.loadMission(ctx, tx, e.Principal.Tenant, true, stringArg(e.Args, "runId"))
	if err != nil {
		return nil, err
	}
	if in.State == workflow.CancelledState {
		return project(ms.workflows, in, statusCompleted, op.StyleAura, nil), nil
	}
	out, err := ms.engine.Cancel(in, stringArg(e.Args, "reason"))
	if err != nil {
		return nil, err
	}
	if err := ms.persist(ctx, tx, e, out, in, m); err != nil {
		return nil, err
	}
	return project(ms.workflows, out.Instance, statusCompleted, op.StyleAura, nil), nil
}

// missionExists is the ownership check of the mission routes: another
// tenant's mission answers not-found before anything else is looked at.
func (ms *missions) missionExists(ctx context.Context, tx store.ReadTx, tenant, runID string) error {
	if _, err := tx.GetMissionByRunID(ctx, tenant, runID); errors.Is(err, store.ErrNotFound) {
		return missionNotFound(runID, true)
	} else if err != nil {
		return err
	}
	return nil
}

// createdHeader sets Location on a created mission.
func createdHeader(result any) map[string]string {
	if p, ok := result.(Projection); ok {
		return map[string]string{"Location": "/v8/missions/" + p.RunID}
	}
	return nil
}
