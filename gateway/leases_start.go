package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// Start leases: the move lease of leases.go for a workflow that does not
// exist yet. A start (praxec.command start, aura_create_mission) whose
// chain calls outside before its transaction commits takes a store lease
// on what identifies the start within the tenant, right before its first
// outside call:
//
//   - the runId the caller gave ("run:" + runId): runIds are single-use,
//     so two starts with one runId, keyed alike or not, are one start;
//   - else its idempotency key ("key:" + namespace + ":" + key);
//   - else nothing: a start with neither is a new workflow each time it is
//     sent, so there is nothing to deduplicate across replicas (each
//     request calls once; a keyless start that died mid-call leaves no
//     lease and cannot be told from a new one). Send a runId or an
//     idempotency key to have a start deduplicated.
//
// The lease is settled as a move lease is: the start's transaction deletes
// it with the new workflow; a start refused after its call may have acted,
// or one whose call's outcome is unknown, or one found past its deadline
// (its gateway stopped mid-call) is resolved as outcome-unknown: the lease
// row becomes the record of the 504 answer (kept, so a retry with the same
// runId, keyed or not, replays it: for good when keyed by runId, as long
// as the key's idempotency record when keyed by the key, after which
// store.SweepIdempotency deletes it) and, keyed, so does the idempotency
// record. A request that finds a live lease held by another answers 409
// idempotency-request-in-progress at once; nothing calls twice.
//
// The lease's transaction also stores the start's run (issue 27 item 7):
// the workflow the start will be, under the id and runId it will have
// (minted before the first call, StartLease.WorkflowID), at its initial
// state, version 0, status starting, its lastRun saying its outcome is
// unknown, with the start's trace. So whatever happens to the gateway
// during the call, the object the call may have acted for exists and can
// be read back: the start's transaction replaces it with the workflow; a
// release (no call may have acted) deletes it, freeing its runId; a
// resolution as outcome-unknown makes it an active run at version 1,
// still at its initial state, which the 504 links and whose read shows
// the outcome and the trace. While the lease is held, reads and moves of
// the run answer 409 in progress (runStarting). The run costs no fsync:
// it is one more row of the lease's own transaction.

// startRef is what a start lease is keyed by ("" for none).
func startRef(e *env, runID string) string {
	switch {
	case runID != "":
		return "run:" + runID
	case e.idemKey != "":
		return "key:" + e.idemNS + ":" + e.idemKey
	}
	return ""
}

// startFingerprint identifies a start request for the replay of its
// recorded answer: the operation and arguments without the key, as its
// idempotency fingerprint.
func startFingerprint(e *env) string {
	if e.idemFP != "" {
		return e.idemFP
	}
	fp, _ := fingerprint(e.Tool.OperationID, e.Args)
	return fp
}

// startInProgress answers a start another request holds the lease of.
func startInProgress(ref string) *contracts.Error {
	what := "this start"
	if runID, ok := strings.CutPrefix(ref, "run:"); ok {
		what = "the start of run " + runID
	}
	return &contracts.Error{Code: contracts.CodeIdempotencyInProgress,
		Message: fmt.Sprintf("another request is running %s (it calls outside the gateway)", what),
		Hint:    "Retry the same request in a moment: once that start completes it is answered from the record."}
}

// startLeaseOwner is the owner of the start lease this call holds.
func (e *env) startLeaseOwner() string {
	if e.startLease == nil {
		return ""
	}
	return e.startLease.Owner
}

// startLeaseHook returns the tape's before hook of a start: it takes the
// start lease on ref, or refuses the start (e.refusal when another request
// holds it; nothing when the runId is taken, the start was recorded, or a
// stale lease was resolved: the transaction then answers).
func (ls *leases) startLeaseHook(e *env, ref, definitionID string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		now := ls.now()
		tenant := e.Principal.Tenant
		l := store.StartLease{Tenant: tenant, Ref: ref, DefinitionID: definitionID, Fingerprint: startFingerprint(e),
			Namespace: e.idemNS, Key: e.idemKey, Operation: e.Tool.OperationID, KeyFingerprint: e.idemFP,
			Owner: ls.owner + "/" + newID("st"), CreatedAt: now, Deadline: now.Add(ls.leaseTTL), WorkflowID: e.startRun}
		var prev store.StartLease
		err := ls.takeLease(ctx, e, leaseSite{
			find: func(ctx context.Context, tx store.Tx) (leaseFound, error) {
				// The lease first, then what answers the start without a
				// call: a start that completes commits its workflow, its
				// idempotency record and the deletion of its lease
				// together, so when the lease is found missing the reads
				// that follow see the completion (under PostgreSQL's READ
				// COMMITTED each statement sees what was committed before
				// it started).
				var lerr error
				prev, lerr = tx.GetStartLease(ctx, tenant, ref)
				switch {
				case lerr == nil && prev.Status != 0:
					return leaseAnswered, nil // recorded: the transaction replays it
				case lerr != nil && !errors.Is(lerr, store.ErrNotFound):
					return 0, lerr
				}
				if runID, ok := strings.CutPrefix(ref, "run:"); ok {
					if _, err := tx.GetMissionByRunID(ctx, tenant, runID); err == nil {
						return leaseAnswered, nil // the transaction answers RUN_ID_ALREADY_RUNNING
					} else if !errors.Is(err, store.ErrNotFound) {
						return 0, err
					}
				}
				if e.idemKey != "" {
					// Another replica completed the same keyed start since
					// this request's fast path: the transaction replays it.
					if _, err := tx.GetIdempotency(ctx, e.idemNS, e.idemKey, now); err == nil {
						return leaseAnswered, nil
					} else if !errors.Is(err, store.ErrNotFound) {
						return 0, err
					}
				}
				return foundLease(lerr, prev.Deadline, now)
			},
			resolve: func(ctx context.Context, tx store.Tx) error {
				_, err := ls.resolveStartLease(ctx, tx, e, prev, nil, true)
				return err
			},
			insert: func(ctx context.Context, tx store.Tx) error {
				// The held lease is an open mission from now on: the
				// start's quota slot, taken before its first outside call
				// (quotas.go).
				if err := ls.quotas.check(ctx, tx, startQuotaNeed(e, definitionID)); err != nil {
					return err
				}
				if err := tx.InsertStartLease(ctx, l); err != nil {
					return err
				}
				return ls.storeStartingRun(ctx, tx, e, l)
			},
			busy: func() *contracts.Error { return startInProgress(ref) },
		})
		if err == nil {
			e.startLease = &l
		}
		return err
	}
}

// renewStartLease returns the tape's hook before every outside call after
// the first of a start: it renews the start lease e holds, as
// renewMoveLease does a move's.
func (ls *leases) renewStartLease(e *env) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		l := e.startLease
		if l == nil {
			return nil
		}
		return ls.renewLease(ctx, "st", &l.Owner, &l.Deadline, func(ctx context.Context, tx store.Tx, owner string, now, deadline time.Time) error {
			return tx.RenewStartLease(ctx, l.Tenant, l.Ref, l.Owner, owner, now, deadline)
		})
	}
}

// checkStartLease is the lease check of a start in its transaction, before
// the engine runs: a recorded start answers its record; another request's
// live lease refuses the start; an expired one is resolved as
// outcome-unknown and answered. The call's own lease is left for
// finishStart. The lease is read whatever the definition says now (one
// primary-key lookup): after a reload, or on a replica with another
// configuration, a definition that no longer reaches outside must still
// not start what another gateway is calling for.
func (ls *leases) checkStartLease(ctx context.Context, tx store.Tx, e *env, runID string) error {
	ref := startRef(e, runID)
	if ref == "" {
		return nil
	}
	l, ok, err := found(tx.GetStartLease(ctx, e.Principal.Tenant, ref))
	switch {
	case !ok:
		return err
	case l.Status != 0:
		return replayStart(e, l)
	case l.Owner == e.startLeaseOwner():
		return nil
	case ls.now().Before(l.Deadline):
		return startInProgress(ref)
	}
	if _, err := ls.resolveStartLease(ctx, tx, e, l, nil, true); err != nil {
		return err
	}
	l, err = tx.GetStartLease(ctx, e.Principal.Tenant, ref)
	if err != nil {
		return err
	}
	return replayStart(e, l)
}

// finishStart settles the call's own start lease in the start's
// transaction: deleted when the start succeeded (err nil), resolved with
// the answer when the start's own call answered outcome-unknown, or when
// the start failed after one of its calls may have acted (a chain whose
// earlier call succeeded: the answer is then that outcome-unknown, not
// the failure, so that the first answer and every retry agree). It
// returns the start's answer.
func (ls *leases) finishStart(ctx context.Context, tx store.Tx, e *env, definitionID string, err error) error {
	var ce *contracts.Error
	if err != nil && !(errors.As(err, &ce) && ce.Code == contracts.CodeOutcomeUnknown) {
		if e.tape == nil || !e.tape.MayHaveActed() {
			return err
		}
		ce = actedUnknown("the start of workflow "+definitionID, err)
		err = ce
	}
	if e.startLease == nil {
		// A start without a key or a runId: nothing records its answer,
		// so a retry would call again.
		if ce != nil {
			return workflow.Unrecorded(ce)
		}
		return err
	}
	l := *e.startLease
	if _, rerr := startingRunOf(ctx, tx, l); rerr != nil { // the run before the lease (startingRunOf)
		return rerr
	}
	if err == nil {
		if err := tx.DeleteStartLease(ctx, l.Tenant, l.Ref, l.Owner); err != nil {
			// Taken for stopped and resolved while the call ran: its
			// record is the answer.
			return ls.lostStartLease(ctx, tx, e, l, err)
		}
		return nil
	}
	answer, rerr := ls.resolveStartLease(ctx, tx, e, l, ce, false)
	if rerr != nil {
		return ls.lostStartLease(ctx, tx, e, l, rerr)
	}
	return answer
}

// lostStartLease answers a start whose own lease was resolved by another
// gateway while its call ran: the recorded answer.
func (ls *leases) lostStartLease(ctx context.Context, tx store.Tx, e *env, l store.StartLease, err error) error {
	if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	got, gerr := tx.GetStartLease(ctx, l.Tenant, l.Ref)
	if gerr != nil || got.Status == 0 {
		return startInProgress(l.Ref)
	}
	return replayStart(e, got)
}

// settleStartLease runs after the start's transaction (committed or not):
// a start lease this call still holds was not completed. It is deleted
// when no call may have acted, and otherwise resolved as outcome-unknown.
func (ls *leases) settleStartLease(ctx context.Context, e *env, tape *workflow.Tape) {
	l := e.startLease
	ctx = context.WithoutCancel(ctx)
	var held bool
	_ = ls.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetStartLease(ctx, l.Tenant, l.Ref)
		held = err == nil && got.Status == 0 && got.Owner == l.Owner
		return nil
	})
	if !held {
		return
	}
	acted := tape.MayHaveActed()
	err := ls.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetStartLease(ctx, l.Tenant, l.Ref)
		if errors.Is(err, store.ErrNotFound) || err == nil && (got.Status != 0 || got.Owner != l.Owner) {
			return nil
		}
		if err != nil {
			return err
		}
		if !acted {
			// Nothing happened: the lease goes, and the run stored with
			// it (read first: see startingRunOf).
			if _, err := startingRunOf(ctx, tx, got); err != nil {
				return err
			}
			if err := tx.DeleteStartLease(ctx, l.Tenant, l.Ref, l.Owner); err != nil {
				return err
			}
			return dropStartingRun(ctx, tx, got)
		}
		e.Events = e.Events[:0]
		if _, err := ls.resolveStartLease(ctx, tx, e, got, nil, true); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, e.Events)
	})
	if err != nil {
		// The lease stays and expires; whoever finds it resolves it.
		ls.log.ErrorContext(ctx, "start lease not settled", "ref", l.Ref, "err", err)
	}
}

// resolveStartLease records the outcome-unknown of the start l describes:
// ce (the start's own answer), or when nil the answer of a start whose
// gateway stopped mid-call. The lease becomes the record of the answer;
// with writeKey so does the idempotency record of its key (a request that
// records its own answer passes false); the run stored with the lease
// becomes a run whose start's outcome is unknown (resolveStartingRun),
// which the answer links. It returns the answer.
func (ls *leases) resolveStartLease(ctx context.Context, tx store.Tx, e *env, l store.StartLease, ce *contracts.Error, writeKey bool) (*contracts.Error, error) {
	if ce == nil {
		ce = &contracts.Error{Code: contracts.CodeOutcomeUnknown,
			Message: fmt.Sprintf("the start of workflow %s called outside the gateway and its answer was not recorded; the call may have taken effect",
				l.DefinitionID),
			Hint: "Do not assume it failed: read the upstream back before starting it again. Retrying the same request answers this again; it does not call again."}
	}
	answer := *ce
	answer.Cause = nil
	run, err := startingRunOf(ctx, tx, l)
	if err != nil {
		return nil, err
	}
	if run != nil {
		answer.Links = append(startRunLinks(l, *run), answer.Links...)
		answer.Hint = "Do not assume it failed: read the run back (the linked get: its lastRun says what is unknown, with the start's trace) and the upstream before starting it again. Retrying the same request answers this again; it does not call again."
	}
	body, err := json.Marshal(answer.Envelope())
	if err != nil {
		return nil, err
	}
	// A record keyed by runId is kept for good (a runId is single-use);
	// one keyed by an idempotency key as long as the key's record.
	now := ls.now()
	var expires time.Time
	if strings.HasPrefix(l.Ref, "key:") {
		expires = now.Add(ls.keys.retention)
	}
	// The first write: a resolver that read the lease before its holder
	// renewed it (a new owner) stops here, before anything is written.
	if err := tx.ResolveStartLease(ctx, l.Tenant, l.Ref, l.Owner, answer.Status(), body, expires); err != nil {
		return nil, leaseChanged(fmt.Errorf("resolve start lease %s: %w", l.Ref, err), startInProgress(l.Ref))
	}
	trace, capability := "", ""
	if run != nil {
		if trace, capability, err = ls.resolveStartingRun(ctx, tx, *run, answer.Message, now); err != nil {
			return nil, err
		}
	}
	if writeKey && l.Key != "" {
		rec := ls.keys.record(l.Namespace, l.Key, l.Operation, l.KeyFingerprint, now)
		rec.Status, rec.Body, rec.Object = answer.Status(), body, keyObject(&Result{Err: &answer})
		if err := tx.InsertIdempotency(ctx, rec); err != nil && !errors.Is(err, store.ErrExists) {
			return nil, err
		}
	}
	attrs := map[string]any{"definitionId": l.DefinitionID}
	if l.DefinitionID == config.ProxyDefaultWorkflow {
		// The capability the start called: its stored run says (a sweep
		// has no request), or else the start's own input.
		input, _ := e.Args["input"].(map[string]any)
		if capability = cmp.Or(capability, stringArg(input, "capability")); capability != "" {
			attrs["capability"] = capability
		}
	}
	ev := e.EventOf(op.EventSpec{Tenant: l.Tenant, Type: "start.outcome_unknown", Outcome: "failed",
		Code: string(contracts.CodeOutcomeUnknown), At: ls.now(), Attributes: attrs})
	if runID, ok := strings.CutPrefix(l.Ref, "run:"); ok {
		ev.RunID = runID
	}
	if run != nil {
		// The start's own trace shows how it ended.
		ev.WorkflowID, ev.RunID = run.ID, run.RunID
		if trace != "" && trace != ev.TraceID {
			ev.TraceID, ev.CallTraceID = trace, cmp.Or(ev.CallTraceID, ev.TraceID)
		}
	}
	e.Events = append(e.Events, ev)
	return &answer, nil
}

// ownsRun reports whether m is the run this call's start stored with its
// start lease.
func (e *env) ownsRun(m store.Mission) bool {
	return e.startLease != nil && e.startLease.WorkflowID != "" && e.startLease.WorkflowID == m.ID && e.startLease.Tenant == m.Tenant
}

// startRunID is the runId of the run a start lease's start stores: the
// runId the caller gave, else its workflow id (as the engine mints it).
func startRunID(l store.StartLease) string {
	if runID, ok := strings.CutPrefix(l.Ref, "run:"); ok {
		return runID
	}
	return l.WorkflowID
}

// storeStartingRun stores, in the transaction that takes the start lease
// l, the run of the start: its workflow at the initial state, version 0,
// status starting, its lastRun saying the start's outcome is unknown
// (what it stays if the start never completes), with the call's trace.
// Nothing for a lease without one.
func (ls *leases) storeStartingRun(ctx context.Context, tx store.Tx, e *env, l store.StartLease) error {
	if l.WorkflowID == "" {
		return nil
	}
	d, ok := ls.workflows.Lookup(l.DefinitionID)
	if !ok {
		return fmt.Errorf("start lease %s: no workflow %s", l.Ref, l.DefinitionID)
	}
	input, _ := e.Args["input"].(map[string]any)
	last := map[string]any{"start": l.DefinitionID, "outcome": workflow.OutcomeUnknown, "ok": false, "traceId": e.TraceID}
	if capability := stringArg(input, "capability"); capability != "" && l.DefinitionID == config.ProxyDefaultWorkflow {
		last["capability"] = capability
	}
	in := &workflow.Instance{ID: l.WorkflowID, RunID: startRunID(l), Tenant: l.Tenant, DefinitionID: d.ID, DefinitionVersion: d.Version,
		State: d.Initial, Version: 0, Context: map[string]any{workflow.LastRunKey: last}, Input: input, Evidence: []string{}}
	m, err := toStore(in, d, store.Mission{CreatedAt: l.CreatedAt, UpdatedAt: l.CreatedAt})
	if err != nil {
		return err
	}
	m.Status = store.StatusStarting
	return tx.InsertMission(ctx, m)
}

// startingRunOf reads the run stored with the start lease l while it is
// still starting, nil when there is none (a lease taken without one).
// Every transaction that writes a start lease and its run reads the run
// first, as a move's transactions read the workflow before its lease: on
// PostgreSQL the read locks the run's row (pgstore), so a start that
// completes and a gateway resolving its lease take the two rows in one
// order and cannot deadlock.
func startingRunOf(ctx context.Context, tx store.ReadTx, l store.StartLease) (*store.Mission, error) {
	if l.WorkflowID == "" {
		return nil, nil
	}
	m, ok, err := found(tx.GetMission(ctx, l.Tenant, l.WorkflowID))
	switch {
	case !ok:
		return nil, err
	case m.Status != store.StatusStarting:
		return nil, nil
	}
	return &m, nil
}

// resolveStartingRun makes the run a start stored with its lease what an
// unknown outcome leaves: an active run at version 1, still at its
// initial state, its lastRun saying what is unknown (message). It returns
// the trace of the start and the capability it called (proxy_default's),
// which lastRun keeps.
func (ls *leases) resolveStartingRun(ctx context.Context, tx store.Tx, m store.Mission, message string, now time.Time) (trace, capability string, err error) {
	in, err := fromStore(m)
	if err != nil {
		return "", "", err
	}
	last, _ := in.Context[workflow.LastRunKey].(map[string]any)
	if last == nil {
		last = map[string]any{}
		in.Context[workflow.LastRunKey] = last
	}
	last["error"] = message
	in.Version = 1
	d, _ := ls.workflows.Lookup(in.DefinitionID)
	m.UpdatedAt = now
	nm, err := toStore(in, d, m)
	if err != nil {
		return "", "", err
	}
	if err := tx.UpdateMission(ctx, nm, 0); err != nil {
		return "", "", fmt.Errorf("the run of start %s: %w", m.ID, err)
	}
	trace, _ = last["traceId"].(string)
	capability, _ = last["capability"].(string)
	return trace, capability, nil
}

// dropStartingRun deletes the run stored with the start lease l, whose
// start released the lease without any call that may have acted: nothing
// happened, and its runId is free again.
func dropStartingRun(ctx context.Context, tx store.Tx, l store.StartLease) error {
	if l.WorkflowID == "" {
		return nil
	}
	if err := tx.DeleteMission(ctx, l.Tenant, l.WorkflowID, 0); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("the run of start lease %s: %w", l.Ref, err)
	}
	return nil
}

// startRunLinks are the reads of the run m a start stored with its lease
// l, on the surface of the start: aura_get_mission and the start's trace
// for aura_create_mission, the praxec get otherwise.
func startRunLinks(l store.StartLease, m store.Mission) []contracts.Link {
	if l.Operation != tools[contracts.ToolCreateMission].OperationID {
		return []contracts.Link{{Rel: "get", Title: "Read the run back: its lastRun says what is unknown", Method: contracts.ToolPraxecQuery,
			Args: map[string]any{"workflowId": m.ID}}}
	}
	links := []contracts.Link{{Rel: "get", Title: "Read the run back: its lastRun says what is unknown", Method: contracts.ToolGetMission,
		Args: map[string]any{"runId": m.RunID}}}
	if in, err := fromStore(m); err == nil {
		if l, ok := startTraceLink(in); ok {
			links = append(links, l)
		}
	}
	return links
}

// startTraceLink is the read of the audit trace of the start of in, when
// in's lastRun says the start's outcome is unknown (a run whose start's
// gateway stopped mid-call, or whose call's answer was lost): the trace
// shows what the start did and how it ended. aura_get_mission adds it to
// the run's links.
func startTraceLink(in *workflow.Instance) (contracts.Link, bool) {
	last, _ := in.Context[workflow.LastRunKey].(map[string]any)
	trace, _ := last["traceId"].(string)
	if _, start := last["start"]; !start || last["outcome"] != workflow.OutcomeUnknown || trace == "" {
		return contracts.Link{}, false
	}
	return contracts.Link{Rel: "trace", Title: "Read the audit trace of the start whose outcome is unknown", Method: contracts.ToolGetTrace,
		Args: map[string]any{"traceId": trace}}, true
}

// replayStart answers a start from a resolved start lease: the recorded
// answer to the same request; another request with the runId (or key) is
// refused.
func replayStart(e *env, l store.StartLease) error {
	if sameFingerprint(l.Fingerprint, startFingerprint(e), e.Tool.OperationID, e.Args) {
		var env contracts.ErrorEnvelope
		if err := json.Unmarshal(l.Response, &env); err != nil {
			return fmt.Errorf("start record %s: %w", l.Ref, err)
		}
		return env.Err()
	}
	if runID, ok := strings.CutPrefix(l.Ref, "run:"); ok {
		return &contracts.Error{Code: contracts.CodeRunIDAlreadyRunning,
			Message: fmt.Sprintf("run_id '%s' was used by a start whose outcome is unknown.", runID),
			Hint:    "Each run_id is single-use. Retry that start with the same request to read its answer, or start with a fresh run_id."}
	}
	return &contracts.Error{Code: contracts.CodeIdempotencyKeyReused,
		Message: "this idempotency key was already used for a different request",
		Hint:    "Use a new key for a new mutation; reuse a key only to retry the identical request."}
}
