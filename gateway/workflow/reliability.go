package workflow

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/internal/jsonvalue"
)

// attempt is one call an executor call made: which executor (the
// capability's own, or a fallback), the how-manieth try on it, and how it
// ended.
type attempt struct {
	// Branch names the parallel executor's branch that made it ("" for
	// any other executor).
	Branch string
	// Fallback is 0 for the executor itself, N for fallback executor N.
	Fallback   int
	Kind       config.Kind
	Connection string
	// Try counts the attempts on this executor, from 1.
	Try int
	// Outcome is "ok", or the Outcome of the ExecutorError, or "error"
	// for any other error.
	Outcome string
	Message string
	// Usage is what an llm call spent and the budget it had (its output's
	// usage and budget members), nil for other kinds.
	Usage map[string]any
}

// record renders a as a JSON value for the audit event and the run's
// lastRun.
func (a attempt) record() map[string]any {
	r := map[string]any{"kind": string(a.Kind), "connection": a.Connection, "attempt": a.Try, "outcome": a.Outcome}
	if a.Branch != "" {
		r["branch"] = a.Branch
	}
	if a.Fallback > 0 {
		r["fallback"] = a.Fallback
	}
	if a.Usage != nil {
		r["usage"] = jsonvalue.CloneMap(a.Usage)
	}
	if a.Message != "" {
		r["message"] = a.Message
	}
	return r
}

// listAttempts reports whether a move's attempts are listed in its
// lastRun and its audit event: when there was more than one, when a
// parallel executor's branches made them, or when they carry an llm call's
// usage.
func listAttempts(attempts []attempt) bool {
	if len(attempts) > 1 {
		return true
	}
	for _, a := range attempts {
		if a.Branch != "" || a.Usage != nil {
			return true
		}
	}
	return false
}

// llmUsage returns the usage and budget the output (or failed answer) of
// a call of a kind that reports them (an llm call) holds, for its attempt.
func llmUsage(kind config.Kind, out map[string]any) map[string]any {
	if !kind.ReportsUsage() || out == nil {
		return nil
	}
	u := map[string]any{}
	for _, k := range []string{"usage", "budget"} {
		if v, ok := out[k]; ok {
			u[k] = jsonvalue.Clone(v)
		}
	}
	if len(u) == 0 {
		return nil
	}
	return u
}

// attemptRecords renders attempts for an event or a context member.
func attemptRecords(attempts []attempt) []any {
	out := make([]any, len(attempts))
	for i, a := range attempts {
		out[i] = a.record()
	}
	return out
}

// mayRepeat reports whether err ends an attempt that may be made again on
// the same executor: an ExecutorError whose outcome is unavailable (the
// call was never made, or refused before acting), or one the connection
// marks Repeatable (an idempotent REST request, which a second sending of
// the same request cannot make act twice). Every other failure ends the
// call.
func mayRepeat(err error) (*ExecutorError, bool) {
	var xe *ExecutorError
	if errors.As(err, &xe) && (xe.Outcome == OutcomeUnavailable || xe.Repeatable) {
		return xe, true
	}
	return nil, false
}

// callReliably makes the call of x under rel (nil for the defaults, see
// config.Reliability): x first, then each fallback executor, each up to
// 1 + its retries times.
//
// An attempt is repeated on the same executor only when mayRepeat allows
// it. The call moves on to a fallback executor only when every attempt so
// far was unavailable: a fallback is another request, to another
// connection, so it must never follow one that may have acted, even an
// idempotent one. When an earlier attempt's outcome was unknown (it may
// have acted) and the call still fails, its final answer is unknown too,
// whatever the last attempt said, so the move is recorded as
// outcome-unknown rather than as a call that did nothing.
//
// Waits between retries (backoff with jitter, or a REST Retry-After) never
// outlast ctx: when the next attempt could not start in time the call ends
// with the last answer. It returns every attempt made; when there was more
// than one, the final ExecutorError (a copy) lists them in its message.
func (e *Engine) callReliably(ctx context.Context, x config.Executor, rel *config.Reliability, scope Scope) (map[string]any, []attempt, error) {
	var tried []attempt
	var last error
	mayHaveActed, nothingSent := false, true
	end := func(out map[string]any, err error) (map[string]any, []attempt, error) {
		return out, tried, annotate(err, tried, mayHaveActed)
	}
	for i, ex := range rel.Executors(x) {
		if i > 0 && !nothingSent {
			break // a fallback never follows an attempt that reached the upstream
		}
		r, ok := e.Runners[ex.Kind]
		if !ok {
			err := contracts.Errorf(contracts.CodeNotImplemented, "executors of kind %s need connections, which this gateway does not run here", ex.Kind)
			if i == 0 {
				return nil, nil, err
			}
			last = err
			break
		}
		retries, shared := rel.RetriesFor(ex.Kind)
		actx, cancel := ctx, context.CancelFunc(func() {})
		if shared {
			// Built-in retries stay within the executor's one timeout.
			actx, cancel = context.WithTimeout(ctx, config.ExecutorTimeout(ex))
		}
		stop := false
		for try := 1; ; try++ {
			out, err := r.Run(actx, ex, scope)
			a := attempt{Fallback: i, Kind: ex.Kind, Connection: ex.Connection, Try: try, Outcome: "ok", Usage: llmUsage(ex.Kind, out)}
			var xe *ExecutorError
			switch {
			case err == nil:
			case errors.As(err, &xe):
				a.Outcome, a.Message, a.Usage = xe.Outcome, xe.Message, llmUsage(ex.Kind, xe.Output)
				mayHaveActed = mayHaveActed || xe.Outcome == OutcomeUnknown
				nothingSent = nothingSent && xe.Outcome == OutcomeUnavailable
			default:
				a.Outcome, a.Message = "error", err.Error()
			}
			tried = append(tried, a)
			xe, again := mayRepeat(err)
			if !again {
				cancel()
				return end(out, err)
			}
			last = err
			if try > retries {
				break
			}
			wait := rel.Backoff(try)
			wait += time.Duration(rand.Int64N(int64(wait)/4 + 1))
			wait = max(wait, xe.RetryAfter)
			if !sleep(actx, wait) {
				stop = !shared || ctx.Err() != nil
				break
			}
		}
		cancel()
		if stop || ctx.Err() != nil {
			break // no time left for a fallback
		}
	}
	return end(nil, last)
}

// annotate returns the final answer of a call that failed: err with the
// attempts listed in its message when there was more than one, and with
// the outcome unknown when an earlier attempt may have acted (mayHaveActed)
// though the last one did not (a copy of an ExecutorError; any other error
// as it is).
func annotate(err error, tried []attempt, mayHaveActed bool) error {
	var xe *ExecutorError
	if len(tried) < 2 || !errors.As(err, &xe) {
		return err
	}
	cp := *xe
	var parts []string
	for _, a := range tried[:len(tried)-1] {
		who := string(a.Kind) + " " + a.Connection
		if a.Fallback > 0 {
			who = "fallback " + strconv.Itoa(a.Fallback) + " (" + who + ")"
		}
		parts = append(parts, fmt.Sprintf("%s attempt %d: %s", who, a.Try, a.Outcome))
	}
	cp.Message = fmt.Sprintf("%s (attempt %d of this call; before it, %s)", xe.Message, len(tried), strings.Join(parts, "; "))
	if mayHaveActed && cp.Outcome != OutcomeUnknown {
		cp.Outcome, cp.Repeatable = OutcomeUnknown, false
		cp.Message += "; an earlier attempt may have taken effect"
	}
	return &cp
}

// sleep waits d, or answers false at once when ctx would end first.
func sleep(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
