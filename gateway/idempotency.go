package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// This file holds the one implementation of idempotency keys, shared by
// every surface. A key is scoped to the principal's namespace (tenant,
// issuer, subject, client), so a key never replays another principal's
// answer. The fingerprint covers the operation and its merged arguments
// without the key, so the same mutation sent over REST and over MCP has the
// same fingerprint.
//
// A mutation's idempotency record, its state change and its audit events
// commit in one store transaction: after a crash either all of them exist
// (a retry replays) or none does (a retry executes once). Refusals that
// happen before the operation runs (authentication, scope, key format,
// schema, policy) never reach this code and consume no key. Answers of the
// operation itself are recorded and replayed when they are decided by the
// state: a success, or a 409 conflict (version, transition, guard, runId,
// mission state). Refusals of the request itself (a transition's arguments
// that do not validate, an unknown object, an ambiguous goal) consume no
// key either, so the caller can correct the request and resend it with the
// same key, as the links it follows carry one. Internal failures roll back
// and consume nothing.
//
// A record replays for the retention (server.idempotency.retention, 24h by
// default). Past it the record is a tombstone until the tombstone window
// ends (server.idempotency.tombstoneRetention from the key's first use, 30
// days by default; store.IdempotencyRecord.TombstoneUntil): the answer is
// dropped, the key, its fingerprint, the object the request created or
// acted on (keyObject) and when are kept. A late retry of the same request
// with the key answers 409 idempotency-key-expired, linking that object,
// instead of acting a second time; another request with the key answers
// idempotency-key-reused, as within the retention. Only past the window
// is the key forgotten.

// storedRefusal is a refusal kept under an idempotency key: the seeds/000
// envelope (with the trace id of the request that met it) and that
// request's id, so that a replay answers the original problem, requestId,
// instance and traceId included (the retry's own ids are in its
// X-Request-Id and Traceparent headers). Records stored without requestId
// or traceId replay with the retry's.
type storedRefusal struct {
	contracts.ErrorEnvelope
	RequestID string `json:"requestId,omitempty"`
}

// errReplay carries a stored record out of a transaction.
type errReplay struct{ rec store.IdempotencyRecord }

func (errReplay) Error() string { return "idempotency: replay" }

func (s *Service) mutate(ctx context.Context, p *auth.Principal, tool contracts.Tool, op operation, e *env, key string) *Result {
	fired := firedBy(ctx, op, e)
	if key == "" {
		// A versioned operation sent without a key: its own rules
		// deduplicate it.
		if refused := s.admitMove(ctx, p, tool, e.toolSet, fired); refused != nil {
			return refused
		}
		run := func(ctx context.Context) *Result {
			if op.prepare != nil {
				defer op.prepare(ctx, e)()
			}
			if e.refusal != nil {
				return &Result{Err: e.refusal}
			}
			res, _ := s.runMutation(ctx, op, e, nil)
			return res
		}
		if op.prepare != nil {
			return s.missions.outlive(ctx, e, run)
		}
		return run(ctx)
	}
	ns := p.Namespace()
	fp, err := fingerprint(tool.OperationID, e.Args)
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	// A completed key replays. Most keys are new, so the common path looks
	// the key up only once, inside the Update (runMutation), where a
	// completed key replays too; a read of its own before the Update (a
	// read-only transaction) is taken only where something must not
	// happen before the replay: an operation that prepares (leases, a
	// call outside), a policy denial, another request with the key in
	// flight. The answer is the same either way.
	if op.prepare != nil {
		if res := s.replayCompleted(ctx, p, tool, e, ns, key, fp); res != nil {
			return res
		}
	}
	// Policy, quarantine and a capability's rate limit come after the
	// replay of a completed request and before anything runs; a refusal
	// consumes no key (admission.go).
	if refused := s.admitMove(ctx, p, tool, e.toolSet, fired); refused != nil {
		if op.prepare == nil {
			if res := s.replayCompleted(ctx, p, tool, e, ns, key, fp); res != nil {
				return res
			}
		}
		return refused
	}
	// Within one process, a second request with a key whose first request
	// is still running answers 409 at once instead of queueing behind it.
	// Across processes the store's unique key decides (ErrExists below).
	slot := ns + "\x00" + key
	if _, busy := s.inflight.LoadOrStore(slot, struct{}{}); busy {
		if op.prepare == nil {
			// A retry of a completed request replays, even while
			// another retry of it is in flight.
			if res := s.replayCompleted(ctx, p, tool, e, ns, key, fp); res != nil {
				return res
			}
		}
		return &Result{Err: keyInFlight(tool, key)}
	}
	e.idemNS, e.idemKey, e.idemFP = ns, key, fp
	run := func(ctx context.Context) *Result {
		defer s.inflight.Delete(slot)
		if op.prepare != nil {
			defer op.prepare(ctx, e)()
		}
		if e.refusal != nil {
			// Refused before it ran (a move lease held elsewhere): no key.
			return &Result{Err: e.refusal}
		}
		rec := s.keys.record(ns, key, tool.OperationID, fp, e.Now)
		res, prev := s.runMutation(ctx, op, e, &rec)
		if prev != nil {
			return s.replay(p, tool, e, *prev, fp)
		}
		return res
	}
	if op.prepare != nil {
		return s.missions.outlive(ctx, e, run)
	}
	return run(ctx)
}

// replayCompleted answers with the record of a completed request with the
// key, read in a read-only transaction, or returns nil when there is none.
func (s *Service) replayCompleted(ctx context.Context, p *auth.Principal, tool contracts.Tool, e *env, ns, key, fp string) *Result {
	var rec store.IdempotencyRecord
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		rec, err = tx.GetIdempotency(ctx, ns, key, e.Now)
		return err
	})
	switch {
	case err == nil:
		return s.replay(p, tool, e, rec, fp)
	case errors.Is(err, store.ErrNotFound):
		return nil
	default:
		return &Result{Err: asContractError(err)}
	}
}

// recordedRefusal says whether a refusal by the operation is remembered
// under the idempotency key: only conflicts with the state, which a retry
// of the same request would meet again.
func recordedRefusal(err *contracts.Error) bool {
	// An outcome-unknown is recorded too: the call may have acted, so a
	// retry with the same key answers from the record instead of calling
	// again.
	// A move refused because another request holds its lease is not:
	// the retry is answered once that request completes.
	return err.Status() == http.StatusConflict && err.Code != contracts.CodeIdempotencyInProgress || err.Code == contracts.CodeOutcomeUnknown
}

// keyTimes are how long an idempotency record replays (retention) and,
// from a key's first use, how long the key is kept from acting again
// (tombstones).
type keyTimes struct {
	retention, tombstones time.Duration
}

// record is the idempotency record of a key first used at now, without
// its answer: it replays for the retention, then is the key's tombstone
// until the end of the tombstone window. The one place a record's times
// are decided.
func (k keyTimes) record(ns, key, operation, fp string, now time.Time) store.IdempotencyRecord {
	return store.IdempotencyRecord{Namespace: ns, Key: key, Operation: operation, Fingerprint: fp,
		CreatedAt: now, ExpiresAt: now.Add(k.retention), TombstoneUntil: now.Add(k.tombstones)}
}

func inProgress() *contracts.Error {
	return &contracts.Error{Code: contracts.CodeIdempotencyInProgress,
		Message: "a request with this idempotency key is still being processed",
		Hint:    "Retry the same request with the same key in a moment."}
}

// runMutation runs o in one transaction with the record (when keyed) and
// the call's audit events. When another request completed the key first it
// runs nothing and returns that request's record instead.
func (s *Service) runMutation(ctx context.Context, o operation, e *env, rec *store.IdempotencyRecord) (*Result, *store.IdempotencyRecord) {
	var res *Result
	err := s.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		e.Events = e.Events[:0]
		if rec != nil {
			// A completed key replays: the only look-up of a new key (see
			// mutate), and another process may have completed the key
			// since any read before the Update.
			if prev, err := tx.GetIdempotency(ctx, rec.Namespace, rec.Key, e.Now); err == nil {
				return errReplay{prev}
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		out, opErr := o.mutate(ctx, tx, e)
		var ce *contracts.Error
		switch {
		case opErr == nil:
			res = s.success(e, o, out)
			if res.Err != nil {
				return res.Err
			}
		case errors.As(opErr, &ce) && ce.Code != contracts.CodeInternal && ce.Code != contracts.CodeUnavailable:
			res = &Result{Status: ce.Status(), Err: ce}
			e.Events = append(e.Events, e.EventOf(op.EventSpec{Type: "request.refused", Outcome: "refused", Code: string(ce.Code)}))
		default:
			return opErr
		}
		if rec != nil && (res.Err == nil || recordedRefusal(res.Err)) {
			rec.Status = res.Status
			rec.Header = res.Header
			rec.Object = keyObject(res)
			if res.Err != nil {
				env := res.Err.Envelope()
				env.TraceID = e.TraceID
				body, err := json.Marshal(storedRefusal{ErrorEnvelope: env, RequestID: e.RequestID})
				if err != nil {
					return err
				}
				rec.Body = body
			} else {
				rec.Body = res.Body
			}
			if err := tx.InsertIdempotency(ctx, *rec); err != nil {
				if errors.Is(err, store.ErrExists) {
					// Lost a race with another process: replay its answer.
					prev, gerr := tx.GetIdempotency(ctx, rec.Namespace, rec.Key, e.Now)
					if gerr != nil {
						return gerr
					}
					return errReplay{prev}
				}
				return err
			}
		}
		return tx.AppendEvents(ctx, e.Events)
	})
	if err != nil {
		var rp errReplay
		if errors.As(err, &rp) {
			return nil, &rp.rec
		}
		return &Result{Err: asContractError(err)}, nil
	}
	// A refusal by the operation was audited inside the transaction.
	res.audited = res.Err != nil
	s.missions.resumeAfterCommit(ctx, e) // waits.go
	return res, nil
}

// replay answers with a stored record, or refuses a key reused for another
// request, or a late retry of the request of an expired key (its
// tombstone).
func (s *Service) replay(p *auth.Principal, tool contracts.Tool, e *env, rec store.IdempotencyRecord, fp string) *Result {
	if rec.Operation != tool.OperationID || !sameFingerprint(rec.Fingerprint, fp, tool.OperationID, e.Args) {
		return &Result{Err: keyReused(tool, rec)}
	}
	if rec.Expired {
		return &Result{Err: keyExpired(tool, rec)}
	}
	s.audit.Record(e.EventOf(op.EventSpec{Type: "request.replayed", Outcome: "replayed"}))
	res := &Result{Status: rec.Status, Header: rec.Header, Replayed: true, audited: true}
	if rec.Status >= 400 {
		var stored storedRefusal
		if err := json.NewDecoder(bytes.NewReader(rec.Body)).Decode(&stored); err != nil {
			return &Result{Err: asContractError(err)}
		}
		res.Err, res.RequestID, res.TraceID = stored.Err(), stored.RequestID, stored.TraceID
		return res
	}
	res.Body = rec.Body
	return res
}
