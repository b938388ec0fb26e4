package workflow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
	"github.com/praxa/praxa/internal/jsonvalue"
)

// maxChain bounds deterministic chaining, so a cycle of deterministic
// transitions cannot spin forever.
const maxChain = 64

// maxDepth bounds nested sub-workflows.
const maxDepth = 8

// Instance is a workflow instance: what a mission is.
type Instance struct {
	ID                string         `json:"-"`
	RunID             string         `json:"-"`
	Tenant            string         `json:"-"`
	DefinitionID      string         `json:"-"`
	DefinitionVersion int            `json:"-"`
	State             string         `json:"-"`
	Version           int64          `json:"-"`
	ParentID          string         `json:"-"`
	Context           map[string]any `json:"context"`
	Input             map[string]any `json:"input"`
	Evidence          []string       `json:"evidence"`
	// Pending is the transition waiting for a human approval, if any.
	Pending *Pending `json:"pending,omitempty"`
	// Waiting is the move parked on a sub-workflow, if any.
	Waiting *Waiting `json:"waiting,omitempty"`
}

// Waiting is a move parked on a sub-workflow: its workflow executor
// started a child that waits for a move, so the move completes (or fails)
// when the child ends, not in the call that made it.
type Waiting struct {
	// Transition is the parked move; Arguments and Actor are its own.
	// With State set it is the move that entered State ("" for a start).
	Transition string `json:"transition"`
	// State is set when the onEnter executor of this state waits, not a
	// transition's: the state is entered, its onEnter's output is what
	// the resume adds to the context.
	State     string         `json:"state,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Actor     string         `json:"actor"`
	// ChildID, ChildRunID and DefinitionID name the child.
	ChildID      string `json:"childId"`
	ChildRunID   string `json:"childRunId"`
	DefinitionID string `json:"definitionId"`
	// TimeoutMs is the executor's timeoutMs (0: no timeout); Deadline,
	// set by the caller that keeps the clock, is when the wait times out.
	TimeoutMs int       `json:"timeoutMs,omitempty"`
	Deadline  time.Time `json:"deadline,omitzero"`
	// ResumeAt, set by the caller, is when the child ended with a
	// continuation that calls outside the gateway: the move is resumed
	// outside the child's transaction, under a move lease (the caller's
	// job), no longer waiting on a deadline.
	ResumeAt time.Time `json:"resumeAt,omitzero"`
}

// Move names what waits: the transition, or the onEnter of a state.
func (w *Waiting) Move() string {
	if w.State == "" {
		return w.Transition
	}
	return "onEnter of state " + w.State
}

// Clone returns a deep copy of the instance.
func (in *Instance) Clone() *Instance {
	c := *in
	c.Context = jsonvalue.CloneMap(in.Context)
	c.Input = jsonvalue.CloneMap(in.Input)
	c.Evidence = slices.Clone(in.Evidence)
	if in.Pending != nil {
		p := *in.Pending
		p.Arguments = jsonvalue.CloneMap(p.Arguments)
		c.Pending = &p
	}
	if in.Waiting != nil {
		w := *in.Waiting
		w.Arguments = jsonvalue.CloneMap(w.Arguments)
		c.Waiting = &w
	}
	return &c
}

// Status is the stored status of an instance: active, completed,
// cancelled, or expired (a proxy_default run the gateway ended for
// idleness, see Expire: nobody completed or cancelled it).
func (in *Instance) Status(d *Definition) string {
	switch {
	case in.State == CancelledState:
		return "cancelled"
	case in.State == ExpiredState && d != nil && d.proxy:
		return "expired"
	case d.Terminal(in.State):
		return "completed"
	}
	return "active"
}

// Pending is a transition waiting for a person.
type Pending struct {
	ApprovalID string         `json:"approvalId"`
	Transition string         `json:"transition"`
	Queue      string         `json:"queue,omitempty"`
	Arguments  map[string]any `json:"arguments,omitempty"`
}

// Step is one fired transition.
type Step struct {
	Transition string `json:"transition"`
	From       string `json:"from"`
	To         string `json:"to"`
	Actor      string `json:"actor"`
}

// Event is an audit event the engine asks the caller to record.
type Event struct {
	Type       string
	WorkflowID string
	Attributes map[string]any
}

// Outcome is what starting an instance or firing a transition did.
type Outcome struct {
	// Instance is the instance after the call.
	Instance *Instance
	// Chain lists the deterministic transitions that fired on their own.
	Chain []Step
	// Pending is set when the call queued a human approval.
	Pending *Pending
	// Children are sub-workflow instances created by workflow executors.
	Children []*Instance
	// Parked is set when the call parked a move on a sub-workflow that
	// waits for a move (the instance's Waiting).
	Parked *Waiting
	// Events are the audit events of the call, in order.
	Events []Event
}

// Runner runs the executors of kinds that reach outside the engine (mcp,
// cli, rest, llm). Kinds without a runner answer not-implemented.
type Runner interface {
	Run(ctx context.Context, exec config.Executor, scope Scope) (map[string]any, error)
}

// Scope is what an executor's paths resolve against.
type Scope struct {
	Arguments map[string]any
	Context   map[string]any
	Input     map[string]any
	Output    map[string]any
}

// Engine starts instances and fires transitions.
type Engine struct {
	Registry *Registry
	// NewID mints instance and approval ids.
	NewID func(prefix string) string
	// Now is the clock schedule guards read (default time.Now). A move
	// recorded on a Tape reads it once: its replay sees the same instant.
	Now func() time.Time
	// Runners run the executor kinds that reach outside the engine
	// (config.RunRunner), by kind.
	Runners map[config.Kind]Runner
}

// StartRequest starts an instance.
type StartRequest struct {
	// ID is the instance's id; "" mints one. A start that stores its run
	// before its first outside call (the gateway's start lease) names it
	// here, in both of its runs (the recording and the replay).
	ID           string
	DefinitionID string
	Input        map[string]any
	RunID        string
	Tenant       string
	ParentID     string
	// Arguments are the arguments of the first move of a proxy_default
	// run; nil takes the input's members other than capability.
	Arguments map[string]any
}

// Start creates an instance at its definition's initial state, runs the
// initial state's onEnter executor and chains deterministic transitions.
func (e *Engine) Start(ctx context.Context, req StartRequest) (*Outcome, error) {
	return e.start(ctx, req, 0)
}

func (e *Engine) start(ctx context.Context, req StartRequest, depth int) (*Outcome, error) {
	d, ok := e.Registry.Lookup(req.DefinitionID)
	if !ok {
		return nil, &contracts.Error{Code: contracts.CodeNotFound, Message: fmt.Sprintf("there is no workflow %q", req.DefinitionID),
			Hint:  "Search for workflows and copy a start link.",
			Links: []contracts.Link{{Rel: "list_workflows", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": "", "kind": "workflow"}}}}
	}
	input := req.Input
	if input == nil {
		input = map[string]any{}
	}
	if d.input != nil {
		if err := contracts.Validate(d.input, input, "the input does not match the input schema of workflow "+d.ID); err != nil {
			return nil, prefixPointers(err, "/input")
		}
	}
	id := req.ID
	if id == "" {
		id = e.NewID("wf")
	}
	runID := req.RunID
	if runID == "" {
		runID = id
	}
	in := &Instance{ID: id, RunID: runID, Tenant: req.Tenant, DefinitionID: d.ID, DefinitionVersion: d.Version,
		State: d.Initial, Version: 1, ParentID: req.ParentID, Context: map[string]any{}, Input: jsonvalue.CloneMap(input), Evidence: []string{}}
	out := &Outcome{Instance: in}
	out.Events = append(out.Events, Event{Type: "workflow.started", WorkflowID: id,
		Attributes: map[string]any{"definitionId": d.ID, "definitionVersion": d.Version, "state": in.State, "parentId": req.ParentID}})
	if d.proxy {
		// A run of proxy_default starts with its first move.
		t, args, err := proxyFirstMove(d, req, input)
		if err != nil {
			return nil, err
		}
		if err := t.validate(args, "/input"); err != nil {
			return nil, err
		}
		if err := guards(t, in, args, e.now(ctx)); err != nil {
			ge := err.(*guardError)
			out.Events = append(out.Events, Event{Type: "guard.rejected", WorkflowID: in.ID, Attributes: t.capabilityAttributes(ge.attributes(t.Name), args, nil)})
			ce := ge.contract(in, t)
			ce.Links = proxyGuardLinks(d, in, t, ge, args, false)
			return out, ce
		}
		if err := e.fire(ctx, d, in, t, args, out, depth, config.ActorAgent); err != nil && !errors.Is(err, errParked) {
			return nil, err
		}
		return out, nil
	}
	if err := e.enter(ctx, d, in, out, depth, "", config.ActorDeterministic); err != nil {
		return parked(out, err)
	}
	if err := e.chain(ctx, d, in, out, depth); err != nil && !errors.Is(err, errParked) {
		return nil, err
	}
	return out, nil
}

// Fire fires the named transition of in, which must be at expectedVersion
// (the caller compares versions and records replays). A transition that
// needs a person queues an approval instead and leaves the state as is.
func (e *Engine) Fire(ctx context.Context, in *Instance, name string, args map[string]any) (*Outcome, error) {
	d, ok := e.Registry.Lookup(in.DefinitionID)
	if !ok {
		return nil, unconfigured(in)
	}
	in = in.Clone()
	out := &Outcome{Instance: in}
	t, err := e.legal(d, in, name)
	if err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	if t.input != nil {
		if err := contracts.Validate(t.input, args, "the arguments do not match the input schema of transition "+name); err != nil {
			return nil, prefixPointers(err, "/arguments")
		}
	}
	if err := guards(t, in, args, e.now(ctx)); err != nil {
		ge := err.(*guardError)
		attrs := ge.attributes(name)
		if d.proxy {
			attrs = t.capabilityAttributes(attrs, args, nil)
		}
		out.Events = append(out.Events, Event{Type: "guard.rejected", WorkflowID: in.ID, Attributes: attrs})
		ce := ge.contract(in, t)
		if d.proxy {
			ce.Links = proxyGuardLinks(d, in, t, ge, args, true)
		}
		return out, ce
	}
	if t.NeedsApproval() {
		queue := ""
		if t.Executor != nil {
			queue = t.Executor.Queue
		}
		in.Pending = &Pending{ApprovalID: e.NewID("apr"), Transition: name, Queue: queue, Arguments: jsonvalue.CloneMap(args)}
		in.Version++
		out.Pending = in.Pending
		out.Events = append(out.Events, Event{Type: "human.approval.requested", WorkflowID: in.ID,
			Attributes: map[string]any{"transition": name, "approvalId": in.Pending.ApprovalID, "queue": queue}})
		return out, nil
	}
	if err := e.fire(ctx, d, in, t, args, out, 0, config.ActorAgent); err != nil {
		return parked(out, err)
	}
	return parked(out, e.chain(ctx, d, in, out, 0))
}

// errParked stops a call whose move parked on a sub-workflow: the
// instance is stored as it is, waiting.
var errParked = errors.New("workflow: the move parked on a sub-workflow")

// parked answers a call that ended with err: a parked move is an outcome.
func parked(out *Outcome, err error) (*Outcome, error) {
	if err != nil && !errors.Is(err, errParked) {
		return nil, err
	}
	return out, nil
}

// parkError is what a workflow executor returns when its child waits for
// a move.
type parkError struct {
	child *Instance
	exec  *config.Executor
}

func (p *parkError) Error() string {
	return fmt.Sprintf("sub-workflow %s waits in state %s", p.child.DefinitionID, p.child.State)
}

// Resume completes the move in parked on child, which has ended: a child
// that completed gives its final context as the move's output (the move's
// set, produces, target state and the deterministic chain after it, as if
// the executor had answered at once); one that was cancelled or expired
// fails the move (FailWait). The resumed move makes no outside call
// itself; its continuation runs under ctx as any move does.
func (e *Engine) Resume(ctx context.Context, parent, child *Instance) (*Outcome, error) {
	d, ok := e.Registry.Lookup(parent.DefinitionID)
	if !ok {
		return nil, unconfigured(parent)
	}
	w := parent.Waiting
	if w == nil || w.ChildID != child.ID {
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "workflow %s does not wait for sub-workflow %s", parent.ID, child.ID)
	}
	cd, _ := e.Registry.Lookup(child.DefinitionID)
	switch st := child.Status(cd); st {
	case "completed":
	case "active":
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "sub-workflow %s has not ended", child.ID)
	default:
		return e.FailWait(parent, "workflow.wait.failed", "the sub-workflow ended "+st)
	}
	if w.State != "" {
		// A state's onEnter waited: its output joins the context, as
		// enter's does, and the chain goes on from the state.
		in := parent.Clone()
		in.Waiting = nil
		delete(in.Context, WaitFailedKey)
		maps.Copy(in.Context, jsonvalue.CloneMap(child.Context))
		in.Version++
		out := &Outcome{Instance: in}
		out.Events = append(out.Events, Event{Type: "workflow.resumed", WorkflowID: in.ID,
			Attributes: map[string]any{"transition": w.Transition, "state": w.State, "childId": child.ID, "childRunId": child.RunID, "version": in.Version}})
		return parked(out, e.chain(ctx, d, in, out, 0))
	}
	t, ok := d.Transition(w.Transition)
	if !ok {
		return e.FailWait(parent, "workflow.wait.failed", "transition "+w.Transition+" is no longer configured")
	}
	in := parent.Clone()
	in.Waiting = nil
	delete(in.Context, WaitFailedKey)
	out := &Outcome{Instance: in}
	out.Events = append(out.Events, Event{Type: "workflow.resumed", WorkflowID: in.ID,
		Attributes: map[string]any{"transition": w.Transition, "childId": child.ID, "childRunId": child.RunID}})
	if err := e.complete(ctx, d, in, t, w.Arguments, jsonvalue.CloneMap(child.Context), nil, nil, out, 0, w.Actor); err != nil {
		return parked(out, err)
	}
	return parked(out, e.chain(ctx, d, in, out, 0))
}

// FailWait ends the wait of a parked instance as a failure of its move:
// the instance stays in the state it was in, its version moves, and an
// event of type typ ("workflow.wait.failed", "workflow.wait.timedout")
// says why. The caller cancels the child when it has not ended.
func (e *Engine) FailWait(parent *Instance, typ, reason string) (*Outcome, error) {
	w := parent.Waiting
	if w == nil {
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "workflow %s waits for no sub-workflow", parent.ID)
	}
	in := parent.Clone()
	in.Waiting = nil
	in.Version++
	if in.Context == nil {
		in.Context = map[string]any{}
	}
	failed := map[string]any{"transition": w.Transition, "childId": w.ChildID, "childRunId": w.ChildRunID,
		"timedOut": typ == "workflow.wait.timedout", "reason": reason}
	attrs := map[string]any{"transition": w.Transition, "childId": w.ChildID, "childRunId": w.ChildRunID, "reason": reason, "ok": false}
	if w.State != "" {
		// The state stays entered, without its onEnter's output.
		failed["state"], attrs["state"] = w.State, w.State
	}
	in.Context[WaitFailedKey] = failed
	return &Outcome{Instance: in, Events: []Event{{Type: typ, WorkflowID: in.ID, Attributes: attrs}}}, nil
}

// WaitFailedKey is the context member where FailWait says why the last
// parked move failed (its transition, child, whether it timed out, the
// reason); a move that resumes removes it.
const WaitFailedKey = "waitFailed"

// Resolve completes or drops the approval a pending transition waits for.
// Approving fires the transition (its guards are checked again).
func (e *Engine) Resolve(ctx context.Context, in *Instance, approvalID string, approve bool, by string) (*Outcome, error) {
	d, ok := e.Registry.Lookup(in.DefinitionID)
	if !ok {
		return nil, unconfigured(in)
	}
	if in.Pending == nil || in.Pending.ApprovalID != approvalID {
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "the mission no longer waits for approval %s", approvalID)
	}
	in = in.Clone()
	p := in.Pending
	in.Pending = nil
	out := &Outcome{Instance: in}
	if !approve {
		in.Version++
		out.Events = append(out.Events, Event{Type: "human.approval.rejected", WorkflowID: in.ID,
			Attributes: map[string]any{"transition": p.Transition, "approvalId": approvalID, "by": by}})
		return out, nil
	}
	t, err := e.legal(d, in, p.Transition)
	if err != nil {
		return nil, err
	}
	if err := guards(t, in, p.Arguments, e.now(ctx)); err != nil {
		return nil, err.(*guardError).contract(in, t)
	}
	out.Events = append(out.Events, Event{Type: "human.approval.granted", WorkflowID: in.ID,
		Attributes: map[string]any{"transition": p.Transition, "approvalId": approvalID, "by": by}})
	if err := e.fire(ctx, d, in, t, p.Arguments, out, 0, config.ActorHuman); err != nil {
		return parked(out, err)
	}
	return parked(out, e.chain(ctx, d, in, out, 0))
}

// Cancel moves a non-terminal instance to the cancelled state.
func (e *Engine) Cancel(in *Instance, reason string) (*Outcome, error) {
	// An instance whose definition a configuration reload removed can
	// still be cancelled (d is nil: only the cancelled state is terminal).
	d, _ := e.Registry.Lookup(in.DefinitionID)
	if d.Terminal(in.State) {
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "the mission already ended in state %s", in.State)
	}
	in = in.Clone()
	from := in.State
	attrs := map[string]any{"from": from, "reason": reason}
	if in.Waiting != nil {
		// The caller cancels the child the move waited for.
		attrs["childId"] = in.Waiting.ChildID
	}
	in.State, in.Pending, in.Waiting = CancelledState, nil, nil
	in.Version++
	return &Outcome{Instance: in, Events: []Event{{Type: "workflow.cancelled", WorkflowID: in.ID, Attributes: attrs}}}, nil
}

// now reads the clock for the guards of a move: once per Tape, so that
// a move recorded outside the transaction and replayed inside it checks
// its schedule at one instant.
func (e *Engine) now(ctx context.Context) time.Time {
	clock := e.Now
	if clock == nil {
		clock = time.Now
	}
	if t := tapeFrom(ctx); t != nil {
		return t.clock(clock)
	}
	return clock()
}

// unconfigured answers a move on an instance whose definition is no
// longer configured (a configuration reload removed it).
func unconfigured(in *Instance) error {
	return &contracts.Error{Code: contracts.CodeInvalidTransition,
		Message: fmt.Sprintf("the workflow %q of this mission is no longer configured on this gateway; no transition is legal", in.DefinitionID),
		Hint:    "The mission can still be read and cancelled; start a workflow the gateway offers now.",
		Links:   append(readBack(in), contracts.Link{Rel: "list_workflows", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": "", "kind": "workflow"}})}
}

// readBack is the next move of a refused move on in: read it again, whose
// answer links the moves legal now (the aura surface rewrites it to
// aura_get_mission).
func readBack(in *Instance) []contracts.Link {
	return []contracts.Link{{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": in.ID}}}
}

// legal checks that name may fire from the instance's state now.
func (e *Engine) legal(d *Definition, in *Instance, name string) (*Transition, error) {
	if w := in.Waiting; w != nil {
		return nil, &contracts.Error{Code: contracts.CodeInvalidTransition,
			Message: fmt.Sprintf("%s waits for sub-workflow %s (run %s) to end; no transition is legal until it does", w.Move(), w.ChildID, w.ChildRunID),
			Hint:    "Move the sub-workflow on (its links), or cancel this mission; read it back to see the wait end.",
			Links:   append(readBack(in), contracts.Link{Rel: "child", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": w.ChildID}})}
	}
	legal := d.Legal(in.State)
	for _, t := range legal {
		if t.Name == name {
			if in.Pending != nil && in.Pending.Transition == name {
				return nil, &contracts.Error{Code: contracts.CodeInvalidTransition,
					Message: fmt.Sprintf("transition %s is waiting for a human approval", name),
					Hint:    "Wait for the approval, or take another move from the links.", Links: readBack(in)}
			}
			return t, nil
		}
	}
	names := make([]string, 0, len(legal))
	for _, t := range legal {
		names = append(names, t.Name)
	}
	msg := fmt.Sprintf("transition %s is not legal in state %s", name, in.State)
	if d.Terminal(in.State) {
		msg = fmt.Sprintf("the workflow ended in state %s; no transition is legal", in.State)
	}
	return nil, &contracts.Error{Code: contracts.CodeInvalidTransition, Message: msg,
		Hint: "Legal now: " + strings.Join(names, ", ") + ". Follow a link of the latest answer.", Links: readBack(in)}
}

// fire runs t's executor and moves the instance.
func (e *Engine) fire(ctx context.Context, d *Definition, in *Instance, t *Transition, args map[string]any, out *Outcome, depth int, actor string) error {
	scope := Scope{Arguments: args, Context: in.Context, Input: in.Input}
	output, attempts, err := e.execute(ctx, t.Executor, t.reliability, scope, in, out, depth, true)
	var xe *ExecutorError
	var pk *parkError
	switch {
	case err == nil:
	case errors.As(err, &pk):
		w := &Waiting{Transition: t.Name, Arguments: jsonvalue.CloneMap(args), Actor: actor, ChildID: pk.child.ID, ChildRunID: pk.child.RunID,
			DefinitionID: pk.child.DefinitionID, TimeoutMs: pk.exec.TimeoutMs}
		in.Waiting = w
		in.Version++
		withdrawPending(in, out)
		out.Parked = w
		out.Events = append(out.Events, Event{Type: "workflow.parked", WorkflowID: in.ID, Attributes: map[string]any{
			"transition": t.Name, "childId": w.ChildID, "childRunId": w.ChildRunID, "definitionId": w.DefinitionID,
			"childState": pk.child.State, "timeoutMs": w.TimeoutMs, "version": in.Version}})
		return errParked
	case errors.As(err, &xe) && d.proxy && xe.Outcome == OutcomeFailed:
		// In a proxy run a failed call is the move's result: the run
		// records it and gains no evidence.
		output = xe.Output
	case errors.As(err, &xe):
		wf := ""
		if in.Version > 1 || !d.proxy {
			wf = in.ID
		}
		return xe.contractError(wf)
	default:
		return err
	}
	return e.complete(ctx, d, in, t, args, output, xe, attempts, out, depth, actor)
}

// complete moves the instance by t once its executor answered output (xe
// set when the call failed in a proxy run). A successful output that does
// not satisfy t's output schema fails the call (checkOutput).
func (e *Engine) complete(ctx context.Context, d *Definition, in *Instance, t *Transition, args, output map[string]any, xe *ExecutorError, attempts []attempt, out *Outcome, depth int, actor string) error {
	if xe == nil {
		if xe = t.checkOutput(output); xe != nil {
			output = nil
		}
	}
	ok := xe == nil
	if output == nil {
		output = map[string]any{}
	}
	scope := Scope{Arguments: args, Context: in.Context, Input: in.Input, Output: output}
	from := in.State
	for k, v := range t.Set {
		in.Context[k] = Resolve(v, scope)
	}
	if d.proxy {
		last := map[string]any{"capability": t.Name, "ok": ok, "output": jsonvalue.CloneMap(output)}
		if !ok {
			last["error"] = xe.Message
		}
		if listAttempts(attempts) {
			last["attempts"] = attemptRecords(attempts)
		}
		in.Context[LastRunKey] = last
	}
	produced := []string{}
	for _, ev := range t.Produces {
		if !ok {
			break
		}
		produced = append(produced, ev)
		if !slices.Contains(in.Evidence, ev) {
			in.Evidence = append(in.Evidence, ev)
		}
	}
	in.State = t.To
	in.Version++
	withdrawPending(in, out)
	fired := map[string]any{"transition": t.Name, "from": from, "to": t.To, "actor": actor, "version": in.Version, "produced": produced, "ok": ok}
	if listAttempts(attempts) {
		// What was tried before the answer: retries and fallbacks, a
		// parallel executor's branches, an llm call's usage.
		fired["attempts"] = attemptRecords(attempts)
	}
	if d.proxy {
		// A move of a proxy run is a call of the capability: its event
		// names it and records what its audit block asks (record.go).
		fired = t.capabilityAttributes(fired, args, output)
	}
	out.Events = append(out.Events, Event{Type: "transition.fired", WorkflowID: in.ID, Attributes: fired})
	return e.enter(ctx, d, in, out, depth, t.Name, actor)
}

// withdrawPending drops the approval in waits for, if any, recording
// human.approval.cancelled in out: another move was taken (fired, or
// parked on a child workflow), so the waiting approval no longer applies.
func withdrawPending(in *Instance, out *Outcome) {
	if in.Pending == nil {
		return
	}
	out.Events = append(out.Events, Event{Type: "human.approval.cancelled", WorkflowID: in.ID,
		Attributes: map[string]any{"approvalId": in.Pending.ApprovalID, "transition": in.Pending.Transition}})
	in.Pending = nil
}

// enter runs the onEnter executor of the instance's state, which the move
// via (by actor; "" for a start) entered. A workflow executor whose child
// waits for a move parks the instance there (errParked): the state is
// entered and the chain waits until the child ends (Resume).
func (e *Engine) enter(ctx context.Context, d *Definition, in *Instance, out *Outcome, depth int, via, actor string) error {
	st := d.States[in.State]
	if st.OnEnter == nil {
		return nil
	}
	output, _, err := e.execute(ctx, st.OnEnter, nil, Scope{Arguments: map[string]any{}, Context: in.Context, Input: in.Input}, in, out, depth, true)
	var xe *ExecutorError
	var pk *parkError
	if errors.As(err, &pk) {
		w := &Waiting{Transition: via, State: in.State, Actor: actor, ChildID: pk.child.ID, ChildRunID: pk.child.RunID,
			DefinitionID: pk.child.DefinitionID, TimeoutMs: pk.exec.TimeoutMs}
		in.Waiting = w
		out.Parked = w
		out.Events = append(out.Events, Event{Type: "workflow.parked", WorkflowID: in.ID, Attributes: map[string]any{
			"transition": via, "state": in.State, "childId": w.ChildID, "childRunId": w.ChildRunID, "definitionId": w.DefinitionID,
			"childState": pk.child.State, "timeoutMs": w.TimeoutMs, "version": in.Version}})
		return errParked
	}
	if errors.As(err, &xe) {
		return xe.contractError(in.ID)
	}
	if err != nil {
		return err
	}
	maps.Copy(in.Context, output)
	return nil
}

// chain fires deterministic transitions whose guards pass, in declaration
// order, until none can fire.
func (e *Engine) chain(ctx context.Context, d *Definition, in *Instance, out *Outcome, depth int) error {
	for range maxChain {
		var next *Transition
		for _, t := range d.Legal(in.State) {
			if t.Actor() == config.ActorDeterministic && guards(t, in, nil, e.now(ctx)) == nil {
				next = t
				break
			}
		}
		if next == nil {
			return nil
		}
		from := in.State
		if err := e.fire(ctx, d, in, next, map[string]any{}, out, depth, config.ActorDeterministic); err != nil {
			return err
		}
		out.Chain = append(out.Chain, Step{Transition: next.Name, From: from, To: next.To, Actor: config.ActorDeterministic})
	}
	return contracts.Errorf(contracts.CodeInternal, "workflow %s chained more than %d deterministic transitions", d.ID, maxChain)
}

// execute runs an executor and returns its output; with park, a workflow
// executor whose child waits for a move answers a parkError (a
// transition's executor parks; a state's onEnter cannot). An executor that
// reaches a connection runs under rel (nil for the defaults): its retries
// and fallbacks, whose attempts it returns.
//
// While telemetry.Tracing, a run in a traced request is a span of its own
// (praxa.executor, praxa.connection, praxa.run.id, praxa.outcome), the
// parent of its upstream hops.
func (e *Engine) execute(ctx context.Context, x *config.Executor, rel *config.Reliability, scope Scope, in *Instance, out *Outcome, depth int, park bool) (res map[string]any, tried []attempt, err error) {
	if x == nil {
		return map[string]any{}, nil, nil
	}
	if tracing.Recording(ctx) {
		var span trace.Span
		ctx, span = tracing.StartChild(ctx, "executor "+string(x.Kind), trace.SpanKindInternal,
			tracing.KeyExecutor.String(string(x.Kind)), tracing.KeyConnection.String(tracing.Bounded(x.Connection)),
			tracing.KeyRunID.String(runID(in)), tracing.KeyTenant.String(tracing.Bounded(in.Tenant)))
		if span != nil {
			defer func() {
				outcome, failed := "ok", err
				var xe *ExecutorError
				var pe *parkError
				switch {
				case errors.As(err, &pe):
					outcome, failed = "parked", nil
				case errors.As(err, &xe):
					outcome = xe.Outcome
				case err != nil:
					outcome = "error"
				}
				if span.IsRecording() {
					span.SetAttributes(tracing.KeyOutcome.String(outcome))
				}
				errType := ""
				if failed != nil {
					errType = outcome
				}
				tracing.End(span, failed, errType)
			}()
		}
	}
	return e.run(ctx, x, rel, scope, in, out, depth, park)
}

// runID is the run an instance is part of: its RunID, or its own id.
func runID(in *Instance) string {
	if in.RunID != "" {
		return in.RunID
	}
	return in.ID
}

// run is execute without its span.
func (e *Engine) run(ctx context.Context, x *config.Executor, rel *config.Reliability, scope Scope, in *Instance, out *Outcome, depth int, park bool) (map[string]any, []attempt, error) {
	switch x.Kind.Runs() {
	case config.RunNothing:
		return map[string]any{}, nil, nil
	case config.RunWorkflow:
		if depth >= maxDepth {
			return nil, nil, contracts.Errorf(contracts.CodeInternal, "sub-workflows nest deeper than %d", maxDepth)
		}
		input, _ := Resolve(x.Input, scope).(map[string]any)
		sub, err := e.start(ctx, StartRequest{DefinitionID: x.DefinitionID, Input: input, Tenant: in.Tenant, ParentID: in.ID}, depth+1)
		if err != nil {
			return nil, nil, err
		}
		child := sub.Instance
		out.Children = append(out.Children, child)
		out.Children = append(out.Children, sub.Children...)
		out.Events = append(out.Events, sub.Events...)
		cd, _ := e.Registry.Lookup(child.DefinitionID)
		if !cd.Terminal(child.State) && park {
			return nil, nil, &parkError{child: child, exec: x}
		}
		if !cd.Terminal(child.State) {
			return nil, nil, &contracts.Error{Code: contracts.CodeInvalidTransition,
				Message: fmt.Sprintf("sub-workflow %s stopped in state %s waiting for a move; a workflow executor needs one that completes on its own", x.DefinitionID, child.State)}
		}
		return jsonvalue.CloneMap(child.Context), nil, nil
	case config.RunBranches:
		return e.parallel(ctx, *x, rel, scope)
	default:
		if _, ok := e.Runners[x.Kind]; !ok {
			return nil, nil, contracts.Errorf(contracts.CodeNotImplemented, "executors of kind %s need connections, which this gateway does not run here", x.Kind)
		}
		call := func(ctx context.Context) (map[string]any, []attempt, error) {
			return e.callReliably(ctx, *x, rel, scope)
		}
		if tp := tapeFrom(ctx); tp != nil {
			return tp.run(ctx, *x, call)
		}
		return call(ctx)
	}
}

// Resolve evaluates a value of a set, map or input block: strings starting
// with "$." are paths into the scope ($.arguments, $.context, $.input,
// $.output); maps and lists resolve member by member; anything else is a
// literal. A plain dotted path ($.arguments.title) walks objects member by
// member; any other path is a JSONPath query (RFC 9535) over the document
// {"arguments", "context", "input", "output"}: a singular query gives its
// node or nil, any other query the list of its nodes. A path that leads
// nowhere resolves to nil.
func Resolve(v any, s Scope) any {
	switch v := v.(type) {
	case string:
		if !strings.HasPrefix(v, "$.") {
			return v
		}
		if config.IsSimplePath(v) || !strings.ContainsAny(v[2:], ".[") {
			return resolveDotted(v, s)
		}
		return resolveJSONPath(v, s)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = Resolve(x, s)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = Resolve(x, s)
		}
		return out
	default:
		return v
	}
}

// root returns the scope member a path starts from.
func (s Scope) root(name string) (any, bool) {
	switch name {
	case "arguments":
		return s.Arguments, true
	case "context":
		return s.Context, true
	case "input":
		return s.Input, true
	case "output":
		return s.Output, true
	}
	return nil, false
}

// resolveDotted walks a plain dotted path.
func resolveDotted(v string, s Scope) any {
	parts := strings.Split(v[2:], ".")
	cur, ok := s.root(parts[0])
	if !ok {
		return nil
	}
	for _, p := range parts[1:] {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return jsonvalue.Clone(cur)
}

// resolveJSONPath evaluates a JSONPath query against the scope document.
func resolveJSONPath(v string, s Scope) any {
	p, err := config.ParseJSONPath(v)
	if err != nil {
		return nil
	}
	doc := map[string]any{}
	for _, name := range []string{"arguments", "context", "input", "output"} {
		if r, _ := s.root(name); r != nil {
			if m, ok := r.(map[string]any); !ok || m != nil {
				doc[name] = r
			}
		}
	}
	nodes := p.Select(doc)
	if p.Query().Singular() != nil {
		if len(nodes) == 0 {
			return nil
		}
		return jsonvalue.Clone(nodes[0])
	}
	out := make([]any, len(nodes))
	for i, n := range nodes {
		out[i] = jsonvalue.Clone(n)
	}
	return out
}

// validate checks a proxy capability's arguments against its input schema.
func (t *Transition) validate(args map[string]any, prefix string) error {
	if t.input == nil {
		return nil
	}
	if err := contracts.Validate(t.input, args, "the arguments do not match the input schema of capability "+t.Name); err != nil {
		return prefixPointers(err, prefix)
	}
	return nil
}

// prefixPointers moves the field errors of a validation error under a
// member of the call's arguments.
func prefixPointers(err error, prefix string) error {
	ce := contracts.AsError(err)
	for i := range ce.Fields {
		ce.Fields[i].Pointer = prefix + ce.Fields[i].Pointer
	}
	return ce
}
