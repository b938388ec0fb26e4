package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file is what a reader sees of a move still in flight: the mission
// read (aura_get_mission, praxec.query get) names the move a lease holds
// on the mission's current version (moving), and a read of a run whose
// start still runs answers that it is starting. Both read the leases of
// leases.go and leases_start.go, which every replica takes in the store
// before its first outside call, so any replica answers the same. The
// outcome-unknown answer of a request that stopped waiting for its move
// (outlive.go) carries a MoveRunning as its cause, for an edge that
// answers it otherwise (the MCP Tasks extension: a task to poll).

// MovingRef is the moving member of a mission read: the move a request is
// running on the mission's current version, which every other move waits
// for.
type MovingRef struct {
	// Transition is the move (the transition an approval fires, for an
	// approval's move).
	Transition string `json:"transition"`
	// Version is the version the move leaves from (the mission's).
	Version int64 `json:"version"`
	// Since is when the move's first outside call began, RFC 3339.
	Since string `json:"since"`
	// Deadline is when its lease runs out, RFC 3339: a move still
	// leased past it was left by a gateway that stopped, and is resolved
	// as outcome-unknown.
	Deadline string `json:"deadline"`
}

// movingRef reads the move in flight on in's current version, nil for
// none. Only a mission of a definition that reaches outside can have one
// (only such moves take a lease), so the others cost no read.
func (ms *missions) movingRef(ctx context.Context, tx store.ReadTx, in *workflow.Instance) (*MovingRef, error) {
	if !ms.reachesOutside(in.DefinitionID) {
		return nil, nil
	}
	if d, ok := ms.workflows.Lookup(in.DefinitionID); !ok || d.Terminal(in.State) {
		return nil, nil
	}
	l, ok, err := found(tx.GetMoveLease(ctx, in.Tenant, in.ID, in.Version))
	if !ok {
		return nil, err
	}
	return &MovingRef{Transition: l.Transition, Version: l.ExpectedVersion,
		Since: l.CreatedAt.UTC().Format(time.RFC3339), Deadline: l.Deadline.UTC().Format(time.RFC3339)}, nil
}

// startRunning answers a read of a runId that names no mission yet but
// whose start holds its lease (a start that calls outside, still
// running, whose lease was taken without a run: see runStarting):
// idempotency-request-in-progress, with the read to retry, instead of
// not-found. Nil when no start of the runId runs.
func (ms *missions) startRunning(ctx context.Context, tx store.ReadTx, tenant, runID string) (*contracts.Error, error) {
	l, ok, err := found(tx.GetStartLease(ctx, tenant, "run:"+runID))
	switch {
	case !ok:
		return nil, err
	case l.Status != 0:
		return nil, nil // resolved: the start ended without a run
	}
	return runStarting(store.Mission{RunID: runID, DefinitionID: l.DefinitionID}, true), nil
}

// runStarting answers a read or a move of the run m whose start still
// runs: the run its start stored with its start lease (leases_start.go,
// Status starting), or only the lease of a runId (a lease taken before
// runs were stored with leases): idempotency-request-in-progress, with
// the read to retry, on the surface that names the run by runId (aura)
// or by workflow id (praxec).
func runStarting(m store.Mission, byRunID bool) *contracts.Error {
	ce := &contracts.Error{Code: contracts.CodeIdempotencyInProgress,
		Message: fmt.Sprintf("run %s is still starting: its first move (of workflow %s) calls outside the gateway", m.RunID, m.DefinitionID),
		Hint:    "Read the mission again in a moment."}
	if byRunID {
		ce.Links = []contracts.Link{{Rel: "get", Title: "Read the mission", Method: contracts.ToolGetMission, Args: map[string]any{"runId": m.RunID}}}
	} else {
		ce.Links = []contracts.Link{{Rel: "get", Title: "Read the workflow again", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": m.ID}}}
	}
	return ce
}

// MoveRunning is the cause of the outcome-unknown answer of a request
// whose deadline passed while its move still ran (outlive.go): which run
// and move. RunID is "" when the run is not known yet (a start without a
// runId: its run is minted when the move ends).
type MoveRunning struct {
	RunID      string
	WorkflowID string
	// Move is the transition, or for a start "start of" and the
	// definition.
	Move string
}

func (m *MoveRunning) Error() string {
	return "gateway: the move " + m.Move + " is still running"
}

// runningMove names the move of a request that stopped waiting for it.
// A praxec.command submit names its workflow by id: the runId is read
// back (the request's own deadline has passed, so the read has one of its
// own).
func (ms *missions) runningMove(ctx context.Context, e *env) *MoveRunning {
	m := &MoveRunning{RunID: stringArg(e.Args, "runId"), WorkflowID: stringArg(e.Args, "workflowId")}
	switch {
	case e.Tool.Name == contracts.ToolSignalMission:
		m.Move = stringArg(e.Args, "signal")
	case m.WorkflowID != "":
		m.Move = stringArg(e.Args, "transition")
		m.RunID = "" // praxec's runId threads the audit; the run is the workflow's
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if in, err := ms.viewMission(rctx, e.Principal.Tenant, false, m.WorkflowID); err == nil {
			m.RunID = in.RunID
		}
	default:
		def := stringArg(e.Args, "definitionId")
		if def == "" {
			def = "the goal's workflow"
		}
		m.Move = "start of " + def
	}
	return m
}
