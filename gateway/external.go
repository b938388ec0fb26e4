package gateway

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file keeps the calls that reach outside the gateway (the mcp, cli
// and rest executors of package connect) out of store transactions: a
// store transaction must be short and do no I/O (gateway/store), and the
// SQLite driver's one writer would otherwise wait on an upstream.
//
// A move (start, submit, signal, an approval) whose definition may reach
// outside runs in two phases:
//
//  1. prepare, outside any transaction: read the instance, take the
//     move's lock, and run the move with a recording workflow.Tape: every
//     outside call is made once and its answer recorded; the resulting
//     instance is thrown away.
//  2. mutate, in the store transaction as before: read the instance again
//     and run the same move with the tape replaying the recorded answers
//     (no call is made), then store the outcome with compare-and-set.
//
// The engine is deterministic given the instance and the answers, and the
// lock keeps the instance from moving between the phases within one
// process, so the replay takes the same path; if it does not (another
// replica moved the instance) the replay refuses and the move answers
// VERSION_CONFLICT. Across replicas (and across a restart) the store-backed
// move lease of leases.go keeps two moves on one version from both
// reaching their upstream.
//
// Without runners, or when no definition has an executor that reaches
// outside, nothing of this runs.

// moveLocks serializes the moves on one workflow (or one start runId)
// within the process: 256 striped mutexes keyed by a hash.
type moveLocks struct {
	stripes [256]sync.Mutex
}

func (l *moveLocks) lock(key string) func() {
	h := fnv.New32a()
	h.Write([]byte(key))
	m := &l.stripes[h.Sum32()%uint32(len(l.stripes))]
	m.Lock()
	return m.Unlock
}

func noRelease() {}

// reachesOutside reports whether moves on definitionID may call outside.
func (ms *missions) reachesOutside(definitionID string) bool {
	if len(ms.engine.Runners) == 0 {
		return false
	}
	d, ok := ms.workflows.Lookup(definitionID)
	return ok && d.ReachesOutside()
}

// moveCtx is the context a move runs under inside its transaction: it
// replays the calls prepare recorded; where prepare recorded nothing, an
// empty tape still keeps the move from calling out inside the transaction.
func (ms *missions) moveCtx(ctx context.Context, e *env) context.Context {
	if e.tape != nil {
		return workflow.WithTape(ctx, e.tape.Replay())
	}
	if len(ms.engine.Runners) > 0 {
		return workflow.WithTape(ctx, workflow.NewRecorder(nil).Replay())
	}
	return ctx
}

// moveError turns a replay that met other calls than recorded into a
// version conflict.
func moveError(err error, workflowID string) error {
	if errors.Is(err, workflow.ErrTapeMismatch) {
		if workflowID == "" {
			return &contracts.Error{Code: contracts.CodeVersionConflict, Message: "the workflow changed while the move was running",
				Hint: "Start it again."}
		}
		return versionConflict(workflowID, 0)
	}
	return err
}

// prepareStart prepares praxec.command start.
func (ms *missions) prepareStart(ctx context.Context, e *env) func() {
	return ms.prepareNew(ctx, e, stringArg(e.Args, "definitionId"))
}

// prepareCreate prepares aura_create_mission.
func (ms *missions) prepareCreate(ctx context.Context, e *env) func() {
	def := stringArg(e.Args, "definitionId")
	if def == "" {
		cands := ms.candidates(stringArg(e.Args, "goal"))
		if len(cands) == 0 || len(cands) > 1 && cands[0].Score == cands[1].Score {
			return noRelease
		}
		def = cands[0].DefinitionID
	}
	return ms.prepareNew(ctx, e, def)
}

// prepareNew runs a start's outside calls.
func (ms *missions) prepareNew(ctx context.Context, e *env, definitionID string) func() {
	if !ms.reachesOutside(definitionID) {
		return noRelease
	}
	runID := stringArg(e.Args, "runId")
	release := noRelease
	if runID != "" {
		release = ms.moves.lock("run\x00" + e.Principal.Tenant + "\x00" + runID)
		var taken bool
		_ = ms.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			_, err := tx.GetMissionByRunID(ctx, e.Principal.Tenant, runID)
			taken = err == nil
			return nil
		})
		if taken {
			return release // mutate answers RUN_ID_ALREADY_RUNNING
		}
	}
	input, _ := e.Args["input"].(map[string]any)
	// The first outside call takes the start's lease (leases_start.go),
	// when the start has a runId or a key to be known by.
	var hook func(context.Context) error
	if ref := startRef(e, runID); ref != "" {
		// The run the lease stores has the id the start's workflow gets.
		e.startRun = newID("wf")
		hook = ms.leases.startLeaseHook(e, ref, definitionID)
	} else {
		hook = ms.startQuotaHook(e, definitionID) // quotas.go
	}
	tape := workflow.NewRecorder(hook).RenewBefore(ms.leases.renewStartLease(e))
	_, _ = ms.engine.Start(workflow.WithTape(ctx, tape), workflow.StartRequest{ID: e.startRun, DefinitionID: definitionID, Input: input,
		RunID: runID, Tenant: e.Principal.Tenant})
	e.tape = tape
	return func() {
		if e.startLease != nil {
			ms.leases.settleStartLease(ctx, e, tape)
		}
		release()
	}
}

// prepareSubmit prepares praxec.command submit.
func (ms *missions) prepareSubmit(ctx context.Context, e *env) func() {
	args, _ := e.Args["arguments"].(map[string]any)
	return ms.prepareMove(ctx, e, false, stringArg(e.Args, "workflowId"), stringArg(e.Args, "transition"), int64Arg(e.Args, "expectedVersion"), args)
}

// prepareSignal prepares aura_signal_mission.
func (ms *missions) prepareSignal(ctx context.Context, e *env) func() {
	args, _ := e.Args["arguments"].(map[string]any)
	return ms.prepareMove(ctx, e, true, stringArg(e.Args, "runId"), stringArg(e.Args, "signal"), int64Arg(e.Args, "expectedVersion"), args)
}

// prepareMove runs a submit's outside calls, holding the workflow's lock
// until the transaction is done.
func (ms *missions) prepareMove(ctx context.Context, e *env, byRunID bool, ref, transition string, expected int64, args map[string]any) func() {
	if len(ms.engine.Runners) == 0 {
		return noRelease
	}
	in, err := ms.viewMission(ctx, e.Principal.Tenant, byRunID, ref)
	if err != nil || !ms.reachesOutside(in.DefinitionID) {
		return noRelease
	}
	release := ms.moves.lock("wf\x00" + e.Principal.Tenant + "\x00" + in.ID)
	// Read again under the lock: a move that held it may have moved on.
	if in, err = ms.viewMission(ctx, e.Principal.Tenant, false, in.ID); err != nil || in.Version != expected {
		return release // mutate answers the replay or the conflict
	}
	if args == nil {
		args = map[string]any{}
	}
	style := op.StylePraxec
	if byRunID {
		style = op.StyleAura
	}
	// The first outside call takes the move's lease (leases.go).
	tape := workflow.NewRecorder(ms.leases.leaseHook(e, in, transition, submitFingerprint(transition, args)+styleSuffix(style))).
		RenewBefore(ms.leases.renewMoveLease(e))
	_, _ = ms.engine.Fire(workflow.WithTape(ctx, tape), in, transition, args)
	e.tape = tape
	return func() {
		if e.lease != nil {
			ms.leases.settleLease(ctx, e, tape)
		}
		release()
	}
}

// viewMission reads a mission outside any write transaction.
func (ms *missions) viewMission(ctx context.Context, tenant string, byRunID bool, ref string) (*workflow.Instance, error) {
	var in *workflow.Instance
	err := ms.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		in, _, err = ms.loadMission(ctx, tx, tenant, byRunID, ref)
		return err
	})
	return in, err
}

// prepareApproval runs the outside calls of the transition an approval
// fires.
func (ms *missions) prepareApproval(ctx context.Context, e *env, tenant, approvalID string, approve bool) func() {
	if !approve || len(ms.engine.Runners) == 0 {
		return noRelease
	}
	var a store.Approval
	err := ms.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		a, err = tx.GetApproval(ctx, tenant, approvalID)
		return err
	})
	if err != nil || a.Status != "pending" {
		return noRelease
	}
	release := ms.moves.lock("wf\x00" + tenant + "\x00" + a.WorkflowID)
	in, err := ms.viewMission(ctx, tenant, false, a.WorkflowID)
	if err != nil || !ms.reachesOutside(in.DefinitionID) {
		return release
	}
	// The first outside call takes the move's lease on the version, as a
	// submit's does (leases.go).
	tape := workflow.NewRecorder(ms.leases.leaseHook(e, in, a.Transition, approvalFingerprint(approvalID))).RenewBefore(ms.leases.renewMoveLease(e))
	_, _ = ms.engine.Resolve(workflow.WithTape(ctx, tape), in, approvalID, true, e.Principal.Subject)
	e.tape = tape
	return func() {
		if e.lease != nil {
			ms.leases.settleLease(ctx, e, tape)
		}
		release()
	}
}
