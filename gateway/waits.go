package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// Parked moves: a workflow executor whose child waits for a move parks the
// parent's move (workflow.Waiting in the parent's stored document, the
// deadline of its timeoutMs in the missions.wait_deadline column). The
// parent holds no lease while parked: the move that parked it committed
// and deleted its own. Everything that ends the wait happens in a store
// transaction, so it is as durable, and as shared between replicas, as
// the missions themselves:
//
//   - the child's final move (through any surface, on any replica)
//     resumes the parent in the same transaction (afterMove): a crash
//     cannot commit the one without the other; when the continuation
//     calls a connection, that transaction instead marks the parent due
//     (Waiting.ResumeAt, its wait deadline now) and the resume runs after
//     the commit, outside any transaction under a move lease
//     (resumeOutside), started at once and by the wait sweeper of any
//     replica if this gateway stops first;
//   - the wait sweeper (SweepWaits) fails the move of a parent past its
//     deadline and cancels the child, each in a transaction of its own
//     that reads the parent again and compares its version, so of several
//     replicas exactly one ends each wait;
//   - cancelling the parent cancels the child (and its own parked child,
//     down the line) in the cancel's transaction.

// WaitingRef is the waiting member of a mission projection: the
// sub-workflow the parked move waits for.
type WaitingRef struct {
	Transition string `json:"transition"`
	// State is set when the onEnter of this state waits (the state is
	// entered; Transition is the move that entered it, "" for a start).
	State         string `json:"state,omitempty"`
	ChildWorkflow string `json:"childWorkflowId"`
	ChildRunID    string `json:"childRunId"`
	DefinitionID  string `json:"definitionId"`
	// Deadline is when the wait times out (RFC 3339), "" for never.
	Deadline string `json:"deadline,omitempty"`
	// ResumeAt is when the child ended, set while the move is resumed
	// outside the child's transaction (its continuation calls a
	// connection): the wait no longer times out.
	ResumeAt string `json:"resumeAt,omitempty"`
}

// waitLabel names what a wait holds up, for messages: "move T", or the
// onEnter of a state.
func waitLabel(w *workflow.Waiting) string {
	if w.State == "" {
		return "move " + w.Transition
	}
	return w.Move()
}

// waitingRef renders the wait of a parked instance and its links: read
// the mission back, read the child (whose links move it on), and on the
// aura surface cancel.
func waitingRef(in *workflow.Instance, style op.LinkStyle) (*WaitingRef, []contracts.Link) {
	w := in.Waiting
	ref := &WaitingRef{Transition: w.Transition, State: w.State, ChildWorkflow: w.ChildID, ChildRunID: w.ChildRunID, DefinitionID: w.DefinitionID}
	if !w.Deadline.IsZero() {
		ref.Deadline = w.Deadline.UTC().Format(time.RFC3339Nano)
	}
	if !w.ResumeAt.IsZero() {
		ref.ResumeAt = w.ResumeAt.UTC().Format(time.RFC3339Nano)
	}
	title := fmt.Sprintf("Read the mission (%s waits for sub-workflow %s)", waitLabel(w), w.ChildID)
	get := contracts.Link{Rel: "get", Title: title, Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": in.ID}}
	child := contracts.Link{Rel: "child", Title: "Read the sub-workflow and move it on", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": w.ChildID}}
	links := []contracts.Link{get, child}
	if style == op.StyleAura {
		links = []contracts.Link{
			{Rel: "get", Title: title, Method: contracts.ToolGetMission, Args: map[string]any{"runId": in.RunID}},
			{Rel: "child", Title: child.Title, Method: contracts.ToolGetMission, Args: map[string]any{"runId": w.ChildRunID}},
			{Rel: "cancel", Title: "Cancel the mission (and the sub-workflow)", Method: contracts.ToolCancelMission,
				Args: map[string]any{"runId": in.RunID, "idempotencyKey": NewIdempotencyKey()}},
		}
	}
	return ref, links
}

// setWaitDeadlines gives every instance the outcome parked (the instance
// and the sub-workflows it started, which may park on their own children)
// the deadline of its executor's timeoutMs from now.
func (ms *missions) setWaitDeadlines(e *env, out *workflow.Outcome) {
	set := func(in *workflow.Instance) {
		if w := in.Waiting; w != nil && w.TimeoutMs > 0 && w.Deadline.IsZero() {
			w.Deadline = e.Now.Add(time.Duration(w.TimeoutMs) * time.Millisecond)
		}
	}
	set(out.Instance)
	for _, c := range out.Children {
		set(c)
	}
}

// afterMove is the part of persist that concerns waits, once the move
// from before to in is written: a child that ended resumes (or fails) the
// parent waiting for it; a parked parent that was cancelled cancels its
// child.
func (ms *missions) afterMove(ctx context.Context, tx store.Tx, e *env, before, in *workflow.Instance, d *workflow.Definition) error {
	if before.Waiting != nil && in.State == workflow.CancelledState {
		if err := ms.cancelChild(ctx, tx, e, in, before.Waiting.ChildID, "the parent mission was cancelled"); err != nil {
			return err
		}
	}
	if in.ParentID != "" && in.Status(d) != "active" {
		return ms.resumeParent(ctx, tx, e, in)
	}
	return nil
}

// resumeParent resumes the parent parked on child, which just ended, in
// the transaction of child's final move.
func (ms *missions) resumeParent(ctx context.Context, tx store.Tx, e *env, child *workflow.Instance) error {
	pm, ok, err := found(tx.GetMission(ctx, child.Tenant, child.ParentID))
	if !ok {
		return err
	}
	parent, err := fromStore(pm)
	if err != nil {
		return err
	}
	if parent.Waiting == nil || parent.Waiting.ChildID != child.ID {
		return nil // the parent stopped waiting (timed out, cancelled)
	}
	// The continuation runs inside this transaction, so it may make no
	// outside call: an empty tape refuses one instead of calling.
	rctx := ctx
	if len(ms.engine.Runners) > 0 {
		rctx = workflow.WithTape(ctx, workflow.NewRecorder(nil).Replay())
	}
	out, err := ms.engine.Resume(rctx, parent, child)
	if errors.Is(err, workflow.ErrTapeMismatch) {
		// The continuation calls a connection: it runs outside this
		// transaction, under a move lease (resumeOutside), once this one
		// commits. The parent records that its child ended; its wait
		// deadline becomes now, so the wait sweeper finds it from the
		// index even if this gateway stops before resuming it.
		in := parent.Clone()
		in.Waiting.ResumeAt = e.Now
		in.Version++
		out = &workflow.Outcome{Instance: in, Events: []workflow.Event{{Type: "workflow.resume.due", WorkflowID: in.ID,
			Attributes: map[string]any{"transition": in.Waiting.Transition, "childId": child.ID, "childRunId": child.RunID,
				"childStatus": "ended", "version": in.Version}}}}
		e.resumeDue = append(e.resumeDue, missionRef{tenant: in.Tenant, id: in.ID})
		return ms.persist(ctx, tx, e, out, parent, pm)
	}
	if err != nil {
		if out, err = ms.engine.FailWait(parent, "workflow.wait.failed", "the move could not complete: "+err.Error()); err != nil {
			return err
		}
	}
	return ms.persist(ctx, tx, e, out, parent, pm)
}

// missionRef names a mission of a tenant.
type missionRef struct{ tenant, id string }

// resumeFingerprint is the fingerprint of the move lease a resume outside
// the child's transaction takes: the move is the parked one, resumed
// because child ended (recordUnknown ends the wait when it resolves one).
func resumeFingerprint(childID string) string { return resumePrefix + childID }

// resumePrefix starts the fingerprint of a resume's move lease.
const resumePrefix = "resume:"

// resumeAfterCommit resumes, in the background, the parents that the
// committed call's transaction left due for a resume outside it (their
// continuation calls a connection). Close waits for them; a gateway that
// stops first leaves them to the wait sweeper of any replica.
func (ms *missions) resumeAfterCommit(ctx context.Context, e *env) {
	due := e.resumeDue
	e.resumeDue = nil
	seen := map[missionRef]bool{}
	for _, r := range due {
		if seen[r] {
			continue
		}
		seen[r] = true
		ms.detached.wg.Add(1)
		go func() {
			defer ms.detached.wg.Done()
			if _, err := ms.resumeOutside(context.WithoutCancel(ctx), r.tenant, r.id); err != nil && !lostRace(err) {
				ms.log.WarnContext(ctx, "resume of a parked move failed; the wait sweeper retries it", "workflow_id", r.id, "err", err)
			}
		}()
	}
}

// resumeOutside completes the move of the parent mission id, parked on a
// child that ended, whose continuation calls a connection: as a submit
// does (external.go, leases.go), the continuation runs first outside any
// transaction under the workflow's move lock, its first outside call
// taking a move lease on the parent's version, each call recorded on a
// tape; then a transaction replays the tape and stores the outcome,
// deleting the lease. A continuation that fails after a call that may
// have acted records outcome-unknown; one that fails before fails the
// wait (FailWait). A gateway that stops between a call and the commit
// leaves its lease to expire, and whoever finds it (the lease sweeper,
// the wait sweeper, any move) records outcome-unknown and ends the wait
// without calling again. It reports whether it ended the wait.
func (ms *missions) resumeOutside(ctx context.Context, tenant, id string) (bool, error) {
	release := ms.moves.lock("wf\x00" + tenant + "\x00" + id)
	defer release()
	parent, err := ms.viewMission(ctx, tenant, false, id)
	if err != nil {
		return false, err
	}
	w := parent.Waiting
	if w == nil || w.ResumeAt.IsZero() {
		return false, nil // resumed already, or ended otherwise
	}
	child, err := ms.viewMission(ctx, tenant, false, w.ChildID)
	if err != nil {
		return false, err
	}
	// A resume outside a transaction acts as the gateway's wait-resume job.
	e := &env{Request: op.SystemActor(tenant, "wait-resume", "resumeWait").Request(ms.now())}
	e.TraceID = newTraceID()
	tape := workflow.NewRecorder(ms.leases.leaseHook(e, parent, w.Move(), resumeFingerprint(w.ChildID))).RenewBefore(ms.leases.renewMoveLease(e))
	_, _ = ms.engine.Resume(workflow.WithTape(ctx, tape), parent, child)
	e.tape = tape
	defer func() {
		if e.lease != nil {
			ms.leases.settleLease(ctx, e, tape)
		}
	}()
	if e.refusal != nil {
		// Another gateway holds the lease: it resumes the move.
		return false, nil
	}
	var done bool
	err = ms.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		done = false
		e.Events = e.Events[:0]
		e.resumeDue = e.resumeDue[:0]
		m, err := tx.GetMission(ctx, tenant, id)
		if err != nil {
			return err
		}
		in, err := fromStore(m)
		if err != nil {
			return err
		}
		if in.Version != parent.Version || in.Waiting == nil || in.Waiting.ResumeAt.IsZero() {
			return nil // another gateway resumed it, or resolved its lease
		}
		out, err := ms.engine.Resume(ms.moveCtx(ctx, e), in, child)
		if err != nil {
			if e.actedBefore(in) {
				ce := actedUnknown(fmt.Sprintf("the resumed %s on workflow %s at version %d", waitLabel(w), in.ID, in.Version), err)
				if _, err := ms.leases.recordUnknown(ctx, tx, e, m, *e.lease, ce, false); err != nil {
					return err
				}
				done = true
				return tx.AppendEvents(ctx, e.Events)
			}
			reason := "the move could not complete: " + err.Error()
			if errors.Is(err, workflow.ErrTapeMismatch) {
				reason = "the move's continuation changed while it was resumed (a configuration reload?): " + err.Error()
			}
			if out, err = ms.engine.FailWait(in, "workflow.wait.failed", reason); err != nil {
				return err
			}
		}
		if err := ms.persist(ctx, tx, e, out, in, m); err != nil {
			return err
		}
		done = true
		return tx.AppendEvents(ctx, e.Events)
	})
	if err == nil {
		ms.resumeAfterCommit(ctx, e) // a grandparent whose own continuation calls out
	}
	return done, err
}

// cancelChild cancels the child a parked move waited for, if it has not
// ended, with a workflow.wait.cancelled event on the parent; a child
// parked on its own child cancels that one too (persist recurses).
func (ms *missions) cancelChild(ctx context.Context, tx store.Tx, e *env, parent *workflow.Instance, childID, reason string) error {
	m, ok, err := found(tx.GetMission(ctx, parent.Tenant, childID))
	if !ok {
		return err
	}
	child, err := fromStore(m)
	if err != nil {
		return err
	}
	cd, _ := ms.workflows.Lookup(child.DefinitionID)
	if child.Status(cd) != "active" {
		return nil
	}
	out, err := ms.engine.Cancel(child, reason)
	if err != nil {
		return err
	}
	out.Events = append(out.Events, workflow.Event{Type: "workflow.wait.cascade_cancelled", WorkflowID: parent.ID,
		Attributes: map[string]any{"childId": child.ID, "childRunId": child.RunID, "reason": reason}})
	return ms.persist(ctx, tx, e, out, child, m)
}

// WaitSweepInterval is how often the wait sweep (Jobs) looks for parked moves
// past their timeoutMs.
const WaitSweepInterval = time.Second

// sweepWaits is one round of the wait sweep (Service.SweepWaits).
func (ms *missions) sweepWaits(ctx context.Context) (int, error) {
	now := ms.now()
	var due []store.Mission
	if err := ms.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		due, err = tx.ExpiredWaits(ctx, now, sweepBatch)
		return err
	}); err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, listed := range due {
		end := ms.timeOutWait
		if in, err := fromStore(listed); err == nil && in.Waiting != nil && !in.Waiting.ResumeAt.IsZero() {
			// The child ended; the continuation calls outside.
			end = func(ctx context.Context, m store.Mission) (bool, error) { return ms.resumeOutside(ctx, m.Tenant, m.ID) }
		}
		done, err := end(ctx, listed)
		if done {
			n++
		}
		if err != nil && !lostRace(err) {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// timeOutWait ends one wait past its deadline, if it still is (another
// resolver's win is no error: sweepOne).
func (ms *missions) timeOutWait(ctx context.Context, listed store.Mission) (bool, error) {
	// The wait sweeper acts as the lease sweeper's subject (its events
	// have always named lease-sweeper), through its own tool.
	e := &env{Request: op.Actor{Principal: leaseSweeper(listed.Tenant).Principal, Tool: "wait-sweeper", Operation: "sweepWaits"}.Request(ms.now())}
	e.TraceID = newTraceID()
	return sweepOne(ctx, ms.store, e, func(ctx context.Context, tx store.Tx) (bool, error) {
		m, err := tx.GetMission(ctx, listed.Tenant, listed.ID)
		if err != nil {
			return false, err
		}
		in, err := fromStore(m)
		if err != nil {
			return false, err
		}
		w := in.Waiting
		if m.Version != listed.Version || w == nil || w.Deadline.IsZero() || !w.ResumeAt.IsZero() || !e.Now.After(w.Deadline) {
			return false, nil
		}
		reason := fmt.Sprintf("sub-workflow %s did not end within timeoutMs %d; it was cancelled and %s failed", w.ChildID, w.TimeoutMs, waitLabel(w))
		out, err := ms.engine.FailWait(in, "workflow.wait.timedout", reason)
		if err != nil {
			return false, err
		}
		if err := ms.persist(ctx, tx, e, out, in, m); err != nil {
			return false, err
		}
		err = ms.cancelChild(ctx, tx, e, out.Instance, w.ChildID, "the parent's wait timed out")
		return err == nil, err
	})
}
