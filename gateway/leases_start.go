package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
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
	fp, _ := fingerprint(e.tool.OperationID, e.args)
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
func (s *Service) startLeaseHook(e *env, ref, definitionID string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		now := s.now()
		tenant := e.principal.Tenant
		l := store.StartLease{Tenant: tenant, Ref: ref, DefinitionID: definitionID, Fingerprint: startFingerprint(e),
			Namespace: e.idemNS, Key: e.idemKey, Operation: e.tool.OperationID, KeyFingerprint: e.idemFP,
			Owner: s.owner + "/" + newID("st"), CreatedAt: now, Deadline: now.Add(s.leaseTTL)}
		var prev store.StartLease
		err := s.takeLease(ctx, e, leaseSite{
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
			resolve: func(ctx context.Context, tx store.Tx) error { return s.resolveStartLease(ctx, tx, e, prev, nil, true) },
			insert: func(ctx context.Context, tx store.Tx) error {
				// The held lease is an open mission from now on: the
				// start's quota slot, taken before its first outside call
				// (quotas.go).
				if err := s.checkQuota(ctx, tx, startQuotaNeed(e, definitionID)); err != nil {
					return err
				}
				return tx.InsertStartLease(ctx, l)
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
func (s *Service) renewStartLease(e *env) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if e.startLease == nil {
			return nil
		}
		l, now := *e.startLease, s.now()
		owner, deadline := s.owner+"/"+newID("st"), now.Add(s.leaseTTL)
		err := s.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.RenewStartLease(ctx, l.Tenant, l.Ref, l.Owner, owner, now, deadline)
		})
		if err != nil {
			return renewalError(err)
		}
		e.startLease.Owner, e.startLease.Deadline = owner, deadline
		return nil
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
func (s *Service) checkStartLease(ctx context.Context, tx store.Tx, e *env, runID string) error {
	ref := startRef(e, runID)
	if ref == "" {
		return nil
	}
	l, err := tx.GetStartLease(ctx, e.principal.Tenant, ref)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case l.Status != 0:
		return replayStart(e, l)
	case l.Owner == e.startLeaseOwner():
		return nil
	case s.now().Before(l.Deadline):
		return startInProgress(ref)
	}
	if err := s.resolveStartLease(ctx, tx, e, l, nil, true); err != nil {
		return err
	}
	l, err = tx.GetStartLease(ctx, e.principal.Tenant, ref)
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
func (s *Service) finishStart(ctx context.Context, tx store.Tx, e *env, definitionID string, err error) error {
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
	if err == nil {
		if err := tx.DeleteStartLease(ctx, l.Tenant, l.Ref, l.Owner); err != nil {
			// Taken for stopped and resolved while the call ran: its
			// record is the answer.
			return s.lostStartLease(ctx, tx, e, l, err)
		}
		return nil
	}
	if rerr := s.resolveStartLease(ctx, tx, e, l, ce, false); rerr != nil {
		return s.lostStartLease(ctx, tx, e, l, rerr)
	}
	return err
}

// lostStartLease answers a start whose own lease was resolved by another
// gateway while its call ran: the recorded answer.
func (s *Service) lostStartLease(ctx context.Context, tx store.Tx, e *env, l store.StartLease, err error) error {
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
func (s *Service) settleStartLease(ctx context.Context, e *env, tape *workflow.Tape) {
	l := e.startLease
	ctx = context.WithoutCancel(ctx)
	var held bool
	_ = s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetStartLease(ctx, l.Tenant, l.Ref)
		held = err == nil && got.Status == 0 && got.Owner == l.Owner
		return nil
	})
	if !held {
		return
	}
	acted := tape.MayHaveActed()
	err := s.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetStartLease(ctx, l.Tenant, l.Ref)
		if errors.Is(err, store.ErrNotFound) || err == nil && (got.Status != 0 || got.Owner != l.Owner) {
			return nil
		}
		if err != nil {
			return err
		}
		if !acted {
			return tx.DeleteStartLease(ctx, l.Tenant, l.Ref, l.Owner)
		}
		e.events = e.events[:0]
		if err := s.resolveStartLease(ctx, tx, e, got, nil, true); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, e.events)
	})
	if err != nil {
		// The lease stays and expires; whoever finds it resolves it.
		s.log.ErrorContext(ctx, "start lease not settled", "ref", l.Ref, "err", err)
	}
}

// resolveStartLease records the outcome-unknown of the start l describes:
// ce (the start's own answer), or when nil the answer of a start whose
// gateway stopped mid-call. The lease becomes the record of the answer;
// with writeKey so does the idempotency record of its key (a request that
// records its own answer passes false).
func (s *Service) resolveStartLease(ctx context.Context, tx store.Tx, e *env, l store.StartLease, ce *contracts.Error, writeKey bool) error {
	if ce == nil {
		ce = &contracts.Error{Code: contracts.CodeOutcomeUnknown,
			Message: fmt.Sprintf("the start of workflow %s called outside the gateway and its answer was not recorded; the call may have taken effect",
				l.DefinitionID),
			Hint: "Do not assume it failed: read the upstream back before starting it again. Retrying the same request answers this again; it does not call again."}
	}
	answer := *ce
	answer.Cause = nil
	body, err := json.Marshal(answer.Envelope())
	if err != nil {
		return err
	}
	// A record keyed by runId is kept for good (a runId is single-use);
	// one keyed by an idempotency key as long as the key's record.
	now := s.now()
	var expires time.Time
	if strings.HasPrefix(l.Ref, "key:") {
		expires = now.Add(s.retention)
	}
	// The first write: a resolver that read the lease before its holder
	// renewed it (a new owner) stops here, before anything is written.
	if err := tx.ResolveStartLease(ctx, l.Tenant, l.Ref, l.Owner, answer.Status(), body, expires); err != nil {
		return leaseChanged(fmt.Errorf("resolve start lease %s: %w", l.Ref, err), startInProgress(l.Ref))
	}
	if writeKey && l.Key != "" {
		rec := s.keyRecord(l.Namespace, l.Key, l.Operation, l.KeyFingerprint, now)
		rec.Status, rec.Body = answer.Status(), body
		if err := tx.InsertIdempotency(ctx, rec); err != nil && !errors.Is(err, store.ErrExists) {
			return err
		}
	}
	attrs := map[string]any{"definitionId": l.DefinitionID}
	ev := e.eventOf("start.outcome_unknown", "failed", string(contracts.CodeOutcomeUnknown), s.now(), attrs)
	ev.Tenant = l.Tenant
	if runID, ok := strings.CutPrefix(l.Ref, "run:"); ok {
		ev.RunID = runID
	}
	e.events = append(e.events, ev)
	return nil
}

// replayStart answers a start from a resolved start lease: the recorded
// answer to the same request; another request with the runId (or key) is
// refused.
func replayStart(e *env, l store.StartLease) error {
	if sameFingerprint(l.Fingerprint, startFingerprint(e), e.tool.OperationID, e.args) {
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
