package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/praxa/praxa/contracts"
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
//     cannot commit the one without the other;
//   - the wait sweeper (SweepWaits) fails the move of a parent past its
//     deadline and cancels the child, each in a transaction of its own
//     that reads the parent again and compares its version, so of several
//     replicas exactly one ends each wait;
//   - cancelling the parent cancels the child (and its own parked child,
//     down the line) in the cancel's transaction.

// waitSweepTool names the wait sweeper in the audit events it records.
var waitSweepTool = contracts.Tool{Name: "wait-sweeper", OperationID: "sweepWaits"}

// WaitingRef is the waiting member of a mission projection: the
// sub-workflow the parked move waits for.
type WaitingRef struct {
	Transition    string `json:"transition"`
	ChildWorkflow string `json:"childWorkflowId"`
	ChildRunID    string `json:"childRunId"`
	DefinitionID  string `json:"definitionId"`
	// Deadline is when the wait times out (RFC 3339), "" for never.
	Deadline string `json:"deadline,omitempty"`
}

// waitingRef renders the wait of a parked instance and its links: read
// the mission back, read the child (whose links move it on), and on the
// aura surface cancel.
func (s *Service) waitingRef(in *workflow.Instance, style linkStyle) (*WaitingRef, []contracts.Link) {
	w := in.Waiting
	ref := &WaitingRef{Transition: w.Transition, ChildWorkflow: w.ChildID, ChildRunID: w.ChildRunID, DefinitionID: w.DefinitionID}
	if !w.Deadline.IsZero() {
		ref.Deadline = w.Deadline.UTC().Format(time.RFC3339Nano)
	}
	title := fmt.Sprintf("Read the mission (move %s waits for sub-workflow %s)", w.Transition, w.ChildID)
	get := contracts.Link{Rel: "get", Title: title, Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": in.ID}}
	child := contracts.Link{Rel: "child", Title: "Read the sub-workflow and move it on", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": w.ChildID}}
	links := []contracts.Link{get, child}
	if style == styleAura {
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
func (s *Service) setWaitDeadlines(e *env, out *workflow.Outcome) {
	set := func(in *workflow.Instance) {
		if w := in.Waiting; w != nil && w.TimeoutMs > 0 && w.Deadline.IsZero() {
			w.Deadline = e.now.Add(time.Duration(w.TimeoutMs) * time.Millisecond)
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
func (s *Service) afterMove(ctx context.Context, tx store.Tx, e *env, before, in *workflow.Instance, d *workflow.Definition) error {
	if before.Waiting != nil && in.State == workflow.CancelledState {
		if err := s.cancelChild(ctx, tx, e, in, before.Waiting.ChildID, "the parent mission was cancelled"); err != nil {
			return err
		}
	}
	if in.ParentID != "" && in.Status(d) != "active" {
		return s.resumeParent(ctx, tx, e, in)
	}
	return nil
}

// resumeParent resumes the parent parked on child, which just ended, in
// the transaction of child's final move.
func (s *Service) resumeParent(ctx context.Context, tx store.Tx, e *env, child *workflow.Instance) error {
	pm, err := tx.GetMission(ctx, child.Tenant, child.ParentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
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
	if len(s.engine.Runners) > 0 {
		rctx = workflow.WithTape(ctx, workflow.NewRecorder(nil).Replay())
	}
	out, err := s.engine.Resume(rctx, parent, child)
	if err != nil {
		reason := "the move could not complete: " + err.Error()
		if errors.Is(err, workflow.ErrTapeMismatch) {
			reason = "the move's continuation makes an outside call, which a resume inside the sub-workflow's final move cannot make"
		}
		if out, err = s.engine.FailWait(parent, "workflow.wait.failed", reason); err != nil {
			return err
		}
	}
	return s.persist(ctx, tx, e, out, parent, pm)
}

// cancelChild cancels the child a parked move waited for, if it has not
// ended, with a workflow.wait.cancelled event on the parent; a child
// parked on its own child cancels that one too (persist recurses).
func (s *Service) cancelChild(ctx context.Context, tx store.Tx, e *env, parent *workflow.Instance, childID, reason string) error {
	m, err := tx.GetMission(ctx, parent.Tenant, childID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	child, err := fromStore(m)
	if err != nil {
		return err
	}
	cd, _ := s.workflows.Lookup(child.DefinitionID)
	if child.Status(cd) != "active" {
		return nil
	}
	out, err := s.engine.Cancel(child, reason)
	if err != nil {
		return err
	}
	out.Events = append(out.Events, workflow.Event{Type: "workflow.wait.cascade_cancelled", WorkflowID: parent.ID,
		Attributes: map[string]any{"childId": child.ID, "childRunId": child.RunID, "reason": reason}})
	return s.persist(ctx, tx, e, out, child, m)
}

// WaitSweepInterval is how often RunWaitSweeper looks for parked moves
// past their timeoutMs.
const WaitSweepInterval = time.Second

// RunWaitSweeper ends the waits past their deadline every
// WaitSweepInterval until ctx ends (praxa serve runs it for the life of
// the gateway).
func (s *Service) RunWaitSweeper(ctx context.Context) {
	t := time.NewTicker(WaitSweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.SweepWaits(ctx); err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "wait sweep failed", "err", err)
			}
		}
	}
}

// SweepWaits fails, once, the parked moves whose wait passed its deadline
// (the workflow executor's timeoutMs): the parent's move fails with a
// workflow.wait.timedout event and the child is cancelled, in one
// transaction per parent. It returns how many waits it ended; a wait
// another replica ended first, or that ended otherwise, is skipped.
func (s *Service) SweepWaits(ctx context.Context) (int, error) {
	now := s.now()
	var due []store.Mission
	if err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		due, err = tx.ExpiredWaits(ctx, now, sweepBatch)
		return err
	}); err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, listed := range due {
		done, err := s.timeOutWait(ctx, listed)
		if done {
			n++
		}
		if err != nil && !lostRace(err) {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// timeOutWait ends one wait past its deadline, if it still is.
func (s *Service) timeOutWait(ctx context.Context, listed store.Mission) (bool, error) {
	e := &env{principal: s.sweepEnv(listed.Tenant).principal, tool: waitSweepTool, args: map[string]any{}, now: s.now(), traceID: newTraceID()}
	var done bool
	err := s.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		done = false
		e.events = e.events[:0]
		m, err := tx.GetMission(ctx, listed.Tenant, listed.ID)
		if err != nil {
			return err
		}
		in, err := fromStore(m)
		if err != nil {
			return err
		}
		w := in.Waiting
		if m.Version != listed.Version || w == nil || w.Deadline.IsZero() || !e.now.After(w.Deadline) {
			return nil
		}
		reason := fmt.Sprintf("sub-workflow %s did not end within timeoutMs %d; it was cancelled and move %s failed", w.ChildID, w.TimeoutMs, w.Transition)
		out, err := s.engine.FailWait(in, "workflow.wait.timedout", reason)
		if err != nil {
			return err
		}
		if err := s.persist(ctx, tx, e, out, in, m); err != nil {
			return err
		}
		if err := s.cancelChild(ctx, tx, e, out.Instance, w.ChildID, "the parent's wait timed out"); err != nil {
			return err
		}
		done = true
		return tx.AppendEvents(ctx, e.events)
	})
	return done, err
}
