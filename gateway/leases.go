package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file closes what the tape of external.go leaves open: a gateway
// that stops mid-call, two replicas moving one workflow version at once,
// and a keyless submit retried after an outcome-unknown.
//
// A move on a workflow whose definition reaches outside takes a store
// lease on (tenant, workflowId, expectedVersion) right before its first
// outside call (the tape's before hook), in a durable transaction of its
// own. The lease carries the request's fingerprint (transition and
// arguments, as the submit record's), its idempotency key when it has one,
// its owner (this process and this request) and a deadline. The states:
//
//	leased (in flight) -> completed: the move's transaction stores the
//	                      instance, the submit record and (keyed) the
//	                      idempotency record, and deletes the lease.
//	                   -> outcome unknown: the call may have acted but no
//	                      answer came, or the move could not be recorded, or
//	                      it failed after a call that may have acted (a
//	                      chain whose earlier call succeeded: the first
//	                      answer is this 504 too, recorded in the move's
//	                      own transaction), or the lease expired (its
//	                      gateway stopped mid-call).
//	                      The lease becomes a record: the instance's version
//	                      is bumped (state unchanged, context.lastRun says
//	                      what is unknown), the submit record of the leased
//	                      version holds the 504 answer, and so does the
//	                      idempotency record of a keyed request. An exact
//	                      retry, keyed or not, replays the 504; nothing
//	                      calls again.
//	                   -> released: no call was sent, or the upstream
//	                      refused it (nothing happened); the lease is
//	                      deleted.
//
// A request that finds a live lease held by another request on the
// version it moves (another replica, or another process) answers 409
// idempotency-request-in-progress with Retry-After at once: it never
// waits and never calls. Any other move on the workflow (a cancel, an
// approval, a move that calls nothing) meets the same check in its
// transaction, whatever its definition says (another replica may run
// another configuration), so the leased version cannot move under the
// call. A lease found past its deadline is resolved as outcome-unknown by
// whoever finds it, never by calling again; an approval, approved or
// rejected, that finds one commits the resolution and answers from it.
//
// On PostgreSQL (READ COMMITTED) these checks hold because every write
// transaction that reads a workflow locks its row (pgstore): taking a
// lease, checking one, moving the version and resolving a lease
// serialize on the workflow. The lease hooks also read the lease before
// what answers the request without a call (the version, the workflow of
// a runId, the idempotency record of a key), since a request that
// completes commits those and the deletion of its lease together.
//
// What is leased: praxec.command submit, aura_signal_mission and the
// approval of a human step (REST /v8/approvals, praxa approvals) on a
// definition that reaches outside take this lease on the version they
// move. An approval's lease names the approval (approvalFingerprint); its
// outcome-unknown also marks the approval approved with the recorded
// answer, which a retry of the approval replays (approvalReplay) instead
// of calling again. A parked move resumed outside its child's
// transaction (waits.go, resumeOutside) takes the lease on the parent's
// version under the fingerprint "resume:" and the child's id; its
// outcome-unknown also ends the wait, so nothing resumes it again.
// Starts (praxec.command start, aura_create_mission)
// have no version yet: they take a start lease keyed by their runId, else
// their idempotency key (leases_start.go); a start with neither is not
// leased (each such request is a new workflow, so there is nothing to
// deduplicate across replicas).
//
// The TTL is Options.LeaseTTL, which praxa serve sets from server.leaseTTL
// (config.Config.LeaseTTL; default DefaultLeaseTTL). Besides the requests
// that meet an expired lease, the lease sweeper of leases_sweep.go
// resolves expired leases in the background, the same way.

// leases are the move and start leases of a process: it takes, renews,
// checks and settles them around a move's outside calls, records the
// outcome-unknown of one its holder left past its deadline, and sweeps
// them (leases_sweep.go). The missions hold them; they share the store,
// the clock, the logger and the workflows in force with them, and write
// the idempotency record of a key a lease held (keys) and check the
// tenant quotas of a start (quotas).
type leases struct {
	store     store.Store
	now       func() time.Time
	log       *slog.Logger
	workflows *workflow.Registry
	keys      keyTimes
	quotas    *quotaState
	owner     string        // names this process in its leases
	leaseTTL  time.Duration // how long a lease holds
	swept     atomic.Int64  // expired leases the sweeper resolved (leases_sweep.go)
}

// DefaultLeaseTTL is how long a move or start lease holds before a
// gateway that finds it takes its holder for stopped, when neither
// Options.LeaseTTL nor server.leaseTTL says otherwise. It must outlast the
// longest outside call of a move (the executors' timeouts and retries).
const DefaultLeaseTTL = config.DefaultLeaseTTL

// errLeaseRefused stops a move before its first call: the lease was not
// taken (see leaseHook).
var errLeaseRefused = errors.New("gateway: move lease not taken")

// leaseOwner is the owner of the lease this call holds, "" for none.
func (e *env) leaseOwner() string {
	if e.lease == nil {
		return ""
	}
	return e.lease.Owner
}

// moveInProgress answers a move whose version another request leased.
func moveInProgress(workflowID string, version int64) *contracts.Error {
	return &contracts.Error{Code: contracts.CodeIdempotencyInProgress,
		Message: fmt.Sprintf("another request is running a move on workflow %s at version %d (it calls outside the gateway)", workflowID, version),
		Hint:    "Retry the same request in a moment: once that move completes it is answered from the record. Or read the workflow back.",
		Links:   []contracts.Link{{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": workflowID}}}}
}

// leaseHook returns the tape's before hook of a move on in: it takes the
// lease, or refuses the move (e.refusal when another request holds it;
// nothing when the version moved or a stale lease was resolved: the
// transaction then answers the replay or the conflict).
func (ls *leases) leaseHook(e *env, in *workflow.Instance, transition, fp string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		now := ls.now()
		l := store.MoveLease{Tenant: in.Tenant, WorkflowID: in.ID, ExpectedVersion: in.Version, Transition: transition, Fingerprint: fp,
			Namespace: e.idemNS, Key: e.idemKey, Operation: e.Tool.OperationID, KeyFingerprint: e.idemFP,
			Owner: ls.owner + "/" + newID("mv"), CreatedAt: now, Deadline: now.Add(ls.leaseTTL)}
		if l.Key == "" {
			l.Operation = ""
		}
		var prev store.MoveLease
		err := ls.takeLease(ctx, e, leaseSite{
			find: func(ctx context.Context, tx store.Tx) (leaseFound, error) {
				// The lease first, then the workflow: a move that completes
				// commits its version bump and the deletion of its lease
				// together, so when the lease is found missing the read
				// that follows sees the version moved (under PostgreSQL's
				// READ COMMITTED each statement sees what was committed
				// before it started; the mission read also locks the row
				// there, serializing this transaction with the moves of the
				// workflow: pgstore).
				var lerr error
				prev, lerr = tx.GetMoveLease(ctx, in.Tenant, in.ID, in.Version)
				if lerr != nil && !errors.Is(lerr, store.ErrNotFound) {
					return 0, lerr
				}
				m, err := tx.GetMission(ctx, in.Tenant, in.ID)
				if err != nil {
					return 0, err
				}
				if m.Version != in.Version {
					return leaseAnswered, nil
				}
				return foundLease(lerr, prev.Deadline, now)
			},
			resolve: func(ctx context.Context, tx store.Tx) error {
				_, err := ls.resolveLease(ctx, tx, e, prev)
				return err
			},
			insert: func(ctx context.Context, tx store.Tx) error { return tx.InsertMoveLease(ctx, l) },
			busy:   func() *contracts.Error { return moveInProgress(in.ID, in.Version) },
		})
		if err == nil {
			e.lease = &l
		}
		return err
	}
}

// A move may call outside more than once (a transition's executor, then
// onEnter and deterministic chain steps), each call bounded by the lease
// TTL (the configuration checks that), but not their sum. So before every
// call after the first the holder renews its lease: a new deadline one TTL
// away and a new owner, in a transaction of its own, only while the lease
// is still live. A gateway that read the lease before the renewal and
// decided to resolve it fails its compare-and-set on the old owner; a
// holder that finds its lease expired or resolved makes no further call.

// leaseLost stops a move whose lease another gateway resolved, or whose
// deadline passed, between two of its outside calls.
func leaseLost() *contracts.Error {
	return &contracts.Error{Code: contracts.CodeOutcomeUnknown,
		Message: "the request held its lease past its deadline between two calls outside the gateway, so it was recorded as outcome-unknown; no further call was made",
		Hint:    "Do not assume it failed: read the upstream back before another move. Retrying the same request answers from the record; it does not call again."}
}

// renewMoveLease returns the tape's hook before every outside call after
// the first of a move (or an approval's move): it renews the move lease e
// holds.
func (ls *leases) renewMoveLease(e *env) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		l := e.lease
		if l == nil {
			return nil
		}
		return ls.renewLease(ctx, "mv", &l.Owner, &l.Deadline, func(ctx context.Context, tx store.Tx, owner string, now, deadline time.Time) error {
			return tx.RenewMoveLease(ctx, l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Owner, owner, now, deadline)
		})
	}
}

// renewLease renews a lease this gateway holds, in a transaction of its
// own: renew moves it from its holder to owner (a new holder id of the
// kind's prefix) with a new deadline, a lease TTL from now. Once renewed,
// the held lease's holder and deadline become the new owner and deadline;
// a failed renewal leaves them and answers renewalError's answer.
func (ls *leases) renewLease(ctx context.Context, prefix string, holder *string, until *time.Time, renew func(ctx context.Context, tx store.Tx, owner string, now, deadline time.Time) error) error {
	now := ls.now()
	owner, deadline := ls.owner+"/"+newID(prefix), now.Add(ls.leaseTTL)
	err := ls.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return renew(ctx, tx, owner, now, deadline)
	})
	if err != nil {
		return renewalError(err)
	}
	*holder, *until = owner, deadline
	return nil
}

// leaseChanged answers a resolution whose compare-and-set on the lease
// failed because the lease changed since it was read (its holder renewed
// it, or another resolver got there first): busy, the answer of a request
// that meets a lease in use, with the store's error as its cause (the
// sweeper takes it for a lost race). Any other error is returned as it is.
func leaseChanged(err error, busy *contracts.Error) error {
	if errors.Is(err, store.ErrConflict) {
		busy.Cause = err
		return busy
	}
	return err
}

// renewalError answers a renewal that failed: the lease is lost when it
// is gone or no longer this holder's; any other error is the store's.
func renewalError(err error) error {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return leaseLost()
	}
	return fmt.Errorf("gateway: renew the lease: %w", err)
}

// leaseFound is what a lease hook finds where it would take its lease.
type leaseFound int

const (
	// leaseFree: nothing; the hook takes the lease.
	leaseFree leaseFound = iota
	// leaseAnswered: the request is answered without a call (the version
	// moved, the start is recorded, the runId is taken): the transaction
	// that follows answers it.
	leaseAnswered
	// leaseLive: another request holds the lease.
	leaseLive
	// leaseStale: a lease past its deadline (its gateway stopped
	// mid-call), resolved as outcome-unknown instead of calling.
	leaseStale
)

// found is a store read's answer with a missing row told apart: ok is
// false when the row is not there (err nil) or the read failed (err the
// read's error), so a caller that has nothing to do without the row
// returns err on !ok.
func found[T any](v T, err error) (T, bool, error) {
	if errors.Is(err, store.ErrNotFound) {
		return v, false, nil
	}
	return v, err == nil, err
}

// foundLease classifies the result of reading a lease: none, live or
// stale by its deadline, or the read's error.
func foundLease(err error, deadline, now time.Time) (leaseFound, error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return leaseFree, nil
	case err != nil:
		return 0, err
	case now.Before(deadline):
		return leaseLive, nil
	}
	return leaseStale, nil
}

// leaseSite is one kind of lease as takeLease takes it.
type leaseSite struct {
	// find reads what stands where the lease goes.
	find func(ctx context.Context, tx store.Tx) (leaseFound, error)
	// resolve turns the stale lease find met into its outcome-unknown
	// record, appending its events to e.Events.
	resolve func(ctx context.Context, tx store.Tx) error
	// insert takes the lease; store.ErrExists means another request took
	// it first.
	insert func(ctx context.Context, tx store.Tx) error
	// busy is the answer when another request holds the lease.
	busy func() *contracts.Error
}

// takeLease takes a lease in a durable transaction of its own, right
// before a call leaves the gateway. It returns nil when the lease is
// taken, else errLeaseRefused with e.refusal set when the request is
// answered here (another request holds the lease: site.busy; a store
// failure) and left unset when the transaction that follows answers it (a
// recorded or conflicting request, or a stale lease this hook resolved).
// The one place move, approval and start leases are taken.
func (ls *leases) takeLease(ctx context.Context, e *env, site leaseSite) error {
	var busy, resolved bool
	err := ls.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		busy, resolved = false, false
		found, err := site.find(ctx, tx)
		if err != nil {
			return err
		}
		switch found {
		case leaseAnswered:
			return errLeaseRefused
		case leaseLive:
			busy = true
			return errLeaseRefused
		case leaseStale:
			// Its gateway stopped mid-call: resolve, do not call.
			e.Events = e.Events[:0]
			if err := site.resolve(ctx, tx); err != nil {
				return err
			}
			if err := tx.AppendEvents(ctx, e.Events); err != nil {
				return err
			}
			e.Events = e.Events[:0]
			resolved = true
			return nil
		}
		if err := site.insert(ctx, tx); err != nil {
			if errors.Is(err, store.ErrExists) {
				busy = true
				return errLeaseRefused
			}
			return err
		}
		return nil
	})
	switch {
	case err == nil && !resolved:
		return nil
	case busy:
		e.refusal = site.busy()
	case err != nil && !errors.Is(err, errLeaseRefused):
		e.refusal = asContractError(err)
	}
	return errLeaseRefused
}

// settleLease runs after the move's transaction (committed or not): a
// lease this call still holds was not completed. It is deleted when no
// call may have acted, and otherwise turned into an outcome-unknown: the
// call acted (or may have) and its answer is not recorded.
func (ls *leases) settleLease(ctx context.Context, e *env, tape *workflow.Tape) {
	l := e.lease
	ctx = context.WithoutCancel(ctx)
	var held bool
	_ = ls.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetMoveLease(ctx, l.Tenant, l.WorkflowID, l.ExpectedVersion)
		held = err == nil && got.Owner == l.Owner
		return nil
	})
	if !held {
		return
	}
	acted := tape.MayHaveActed()
	err := ls.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetMoveLease(ctx, l.Tenant, l.WorkflowID, l.ExpectedVersion)
		if errors.Is(err, store.ErrNotFound) || err == nil && got.Owner != l.Owner {
			return nil
		}
		if err != nil {
			return err
		}
		if !acted {
			return tx.DeleteMoveLease(ctx, l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Owner)
		}
		e.Events = e.Events[:0]
		if _, err := ls.resolveLease(ctx, tx, e, got); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, e.Events)
	})
	if err != nil {
		// The lease stays and expires; whoever finds it resolves it.
		ls.log.ErrorContext(ctx, "move lease not settled", "workflow_id", l.WorkflowID, "version", l.ExpectedVersion, "err", err)
	}
}

// checkLease is the lease check of every move on an existing instance, in
// its transaction: the call's own lease is deleted (the move completes);
// another request's live lease refuses the move; an expired one is
// resolved as outcome-unknown and the move answers a version conflict.
// The lease is read whatever the definition says now (one primary-key
// lookup): after a reload, or on a replica with another configuration, a
// definition that no longer reaches outside must still not move a version
// another gateway is calling on.
func (ls *leases) checkLease(ctx context.Context, tx store.Tx, e *env, before *workflow.Instance) error {
	l, ok, err := found(tx.GetMoveLease(ctx, before.Tenant, before.ID, before.Version))
	switch {
	case !ok:
		return err
	case l.Owner == e.leaseOwner():
		return tx.DeleteMoveLease(ctx, l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Owner)
	case ls.now().Before(l.Deadline):
		return moveInProgress(before.ID, before.Version)
	}
	if _, err := ls.resolveLease(ctx, tx, e, l); err != nil {
		return err
	}
	return versionConflict(before.ID, before.Version)
}

// resolveStaleLease is the lease check a move makes before it runs (an
// approval's): another request's lease past its deadline on the version
// in is at is resolved as outcome-unknown, and it reports whether it
// recorded one (the workflow and the approval changed: read them again);
// another request's live lease refuses the move. The call's own lease is
// left for checkLease.
func (ls *leases) resolveStaleLease(ctx context.Context, tx store.Tx, e *env, in *workflow.Instance) (bool, error) {
	l, ok, err := found(tx.GetMoveLease(ctx, in.Tenant, in.ID, in.Version))
	switch {
	case !ok:
		return false, err
	case l.Owner == e.leaseOwner():
		return false, nil
	case ls.now().Before(l.Deadline):
		return false, moveInProgress(in.ID, in.Version)
	}
	return ls.resolveLease(ctx, tx, e, l)
}

// resolveLease turns a lease whose call may have acted into an
// outcome-unknown record (see recordUnknown), with the idempotency record
// of its key, and reports whether it recorded one: a lease whose version
// moved on without it is only deleted.
func (ls *leases) resolveLease(ctx context.Context, tx store.Tx, e *env, l store.MoveLease) (bool, error) {
	m, err := tx.GetMission(ctx, l.Tenant, l.WorkflowID)
	if err != nil {
		return false, err
	}
	if m.Version != l.ExpectedVersion {
		// The version moved on without it: nothing to record.
		if err := tx.DeleteMoveLease(ctx, l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Owner); err != nil {
			return false, leaseChanged(err, moveInProgress(l.WorkflowID, l.ExpectedVersion))
		}
		return false, nil
	}
	ce := &contracts.Error{Code: contracts.CodeOutcomeUnknown,
		Message: fmt.Sprintf("the move %s on workflow %s at version %d called outside the gateway and its answer was not recorded; the call may have taken effect",
			l.Transition, l.WorkflowID, l.ExpectedVersion),
		Hint: "Do not assume it failed: read the upstream back before another move. Retrying the same request answers this again; it does not call again."}
	if _, err := ls.recordUnknown(ctx, tx, e, m, l, ce, true); err != nil {
		return false, err
	}
	return true, nil
}

// actedBefore reports whether the move on in that this call prepared
// failed after a call it made outside the gateway may have acted (a chain
// whose earlier call succeeded, or an answer that can no longer be
// replayed): the calls were made under this call's lease on in's version.
func (e *env) actedBefore(in *workflow.Instance) bool {
	return e.tape != nil && e.lease != nil && e.lease.WorkflowID == in.ID && e.lease.ExpectedVersion == in.Version && e.tape.MayHaveActed()
}

// actedUnknown is the answer of a move or start (what names it) that
// failed after a call it made outside the gateway may have acted: not the
// failure, whose "nothing happened" would be false, but outcome-unknown,
// recorded as such so that every retry answers the same.
func actedUnknown(what string, err error) *contracts.Error {
	msg := err.Error()
	var ce *contracts.Error
	if errors.As(err, &ce) {
		msg = ce.Message
	}
	return &contracts.Error{Code: contracts.CodeOutcomeUnknown,
		Message: fmt.Sprintf("%s failed after a call it made outside the gateway that may have taken effect (%s)", what, msg),
		Hint:    "Do not assume it failed: read the upstream back before another move. Retrying the same request answers this again; it does not call again.",
		Cause:   err}
}

// recordUnknown records the outcome-unknown of the move l describes on
// mission m (at l.ExpectedVersion): the instance's version is bumped with
// its state kept and context.lastRun saying what is unknown; the submit
// record of the version holds the 504 answer, and with writeKey so does
// the idempotency record of l's key (a request that records its own
// answer passes false); the lease is deleted. It returns the answer, with
// links to read the workflow back and to take the next move.
func (ls *leases) recordUnknown(ctx context.Context, tx store.Tx, e *env, m store.Mission, l store.MoveLease, ce *contracts.Error, writeKey bool) (*contracts.Error, error) {
	if l.Owner != "" {
		// The lease goes first, before anything is written: a resolver that
		// read it before its holder renewed it (a new owner) stops here.
		if err := tx.DeleteMoveLease(ctx, l.Tenant, l.WorkflowID, l.ExpectedVersion, l.Owner); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, leaseChanged(err, moveInProgress(l.WorkflowID, l.ExpectedVersion))
		}
	}
	in, err := fromStore(m)
	if err != nil {
		return nil, err
	}
	before := in.Version
	d, _ := ls.workflows.Lookup(in.DefinitionID)
	if in.Context == nil {
		in.Context = map[string]any{}
	}
	approvalID, approval := strings.CutPrefix(l.Fingerprint, approvalPrefix)
	if approval && in.Pending != nil && in.Pending.ApprovalID == approvalID {
		// The approval was acted on: the mission no longer waits for it.
		in.Pending = nil
	}
	if strings.HasPrefix(l.Fingerprint, resumePrefix) && in.Waiting != nil {
		// A resume outside the child's transaction (waits.go): the wait
		// ends with the unknown outcome; nothing resumes it again.
		in.Waiting = nil
	}
	in.Context[workflow.LastRunKey] = map[string]any{"transition": l.Transition, "capability": l.Transition, "outcome": workflow.OutcomeUnknown,
		"ok": false, "error": ce.Message, "version": before}
	in.Version++
	m.UpdatedAt = ls.now()
	nm, err := toStore(in, d, m)
	if err != nil {
		return nil, err
	}
	if err := tx.UpdateMission(ctx, nm, before); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, versionConflict(in.ID, before)
		}
		return nil, err
	}
	style := op.StylePraxec
	if strings.HasSuffix(l.Fingerprint, styleSuffix(op.StyleAura)) {
		style = op.StyleAura
	}
	answer := *ce
	answer.Cause = nil
	get := contracts.Link{Rel: "get", Title: "Read the workflow back", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": in.ID}}
	answer.Links = append([]contracts.Link{get}, project(ls.workflows, in, statusWaiting, style, nil).Links...)
	if style == op.StyleAura {
		var ae *contracts.Error
		if errors.As(auraError(&answer, in.RunID), &ae) {
			answer = *ae
		}
	}
	body, err := json.Marshal(answer.Envelope())
	if err != nil {
		return nil, err
	}
	if err := tx.PutSubmit(ctx, store.SubmitRecord{Tenant: in.Tenant, WorkflowID: in.ID, ExpectedVersion: before, Fingerprint: l.Fingerprint,
		Status: answer.Status(), Response: body, CreatedAt: ls.now()}); err != nil && !errors.Is(err, store.ErrExists) {
		return nil, err
	}
	if approval {
		if err := ls.approvalUnknown(ctx, tx, e, in.Tenant, approvalID, body); err != nil {
			return nil, err
		}
	}

	if writeKey && l.Key != "" {
		rec := ls.keys.record(l.Namespace, l.Key, l.Operation, l.KeyFingerprint, ls.now())
		rec.Status, rec.Body, rec.Object = answer.Status(), body, keyObject(&Result{Err: &answer})
		if err := tx.InsertIdempotency(ctx, rec); err != nil && !errors.Is(err, store.ErrExists) {
			return nil, err
		}
	}
	attrs := map[string]any{"transition": l.Transition, "version": before}
	if in.DefinitionID == config.ProxyDefaultWorkflow {
		// A transition of proxy_default is a capability's call: its
		// unknown outcome reaches the capability's audit sinks.
		attrs["capability"] = l.Transition
	}
	e.Events = append(e.Events, e.EventOf(op.EventSpec{Type: "move.outcome_unknown", Outcome: "failed",
		Code: string(contracts.CodeOutcomeUnknown), WorkflowID: in.ID, RunID: in.RunID, At: ls.now(), Attributes: attrs}))
	return &answer, nil
}

// submitUnknown records the outcome-unknown a move's own call answered
// (see recordUnknown); the caller's idempotency record is written by the
// mutation.
func (ls *leases) submitUnknown(ctx context.Context, tx store.Tx, e *env, m store.Mission, transition, fp string, ce *contracts.Error) error {
	l := store.MoveLease{Tenant: m.Tenant, WorkflowID: m.ID, ExpectedVersion: m.Version, Transition: transition, Fingerprint: fp}
	if e.lease != nil && e.lease.WorkflowID == m.ID && e.lease.ExpectedVersion == m.Version {
		l.Owner = e.lease.Owner
	}
	answer, err := ls.recordUnknown(ctx, tx, e, m, l, ce, false)
	if err != nil {
		return err
	}
	return answer
}

// replaySubmit answers an exact replay from a submit record: the recorded
// projection, or the recorded refusal.
func replaySubmit(rec store.SubmitRecord) (any, error) {
	if rec.Status < 400 {
		return json.RawMessage(rec.Response), nil
	}
	var env contracts.ErrorEnvelope
	if err := json.NewDecoder(bytes.NewReader(rec.Response)).Decode(&env); err != nil {
		return nil, err
	}
	return nil, env.Err()
}

// approvalPrefix starts the fingerprint of the move lease an approval's
// move takes: approving is not a submit, so its lease names the approval
// instead of a transition and its arguments.
const approvalPrefix = "approval:"

// approvalFingerprint is the lease fingerprint of approving approvalID.
func approvalFingerprint(approvalID string) string { return approvalPrefix + approvalID }

// approvalUnknown records on a pending approval that approving it called
// outside and its outcome is unknown (answer is the 504 envelope): the
// approval is approved (its move was attempted and may have acted) and
// keeps the answer, which a retry of the approval replays instead of
// calling again.
func (ls *leases) approvalUnknown(ctx context.Context, tx store.Tx, e *env, tenant, approvalID string, answer []byte) error {
	a, ok, err := pendingApproval(ctx, tx, tenant, approvalID)
	if err != nil || !ok {
		return err
	}
	doc := map[string]json.RawMessage{}
	if len(a.Doc) > 0 {
		if err := json.Unmarshal(a.Doc, &doc); err != nil {
			return fmt.Errorf("approval %s: %w", approvalID, err)
		}
	}
	doc[approvalOutcomeKey] = answer
	if a.Doc, err = json.Marshal(doc); err != nil {
		return err
	}
	a.Status, a.ResolvedAt = "approved", ls.now()
	if e.Principal != nil {
		a.ResolvedBy = e.Principal.Subject
	}
	return tx.UpdateApproval(ctx, a, "pending")
}

// approvalOutcomeKey is the member of an approval's doc that holds the
// recorded outcome-unknown answer of its move.
const approvalOutcomeKey = "outcomeUnknown"

// approvalReplay returns the recorded outcome-unknown answer of an
// approved approval, or nil.
func approvalReplay(a store.Approval) *contracts.Error {
	var doc map[string]json.RawMessage
	if a.Status != "approved" || json.Unmarshal(a.Doc, &doc) != nil || len(doc[approvalOutcomeKey]) == 0 {
		return nil
	}
	var env contracts.ErrorEnvelope
	if json.Unmarshal(doc[approvalOutcomeKey], &env) != nil {
		return nil
	}
	return env.Err()
}
