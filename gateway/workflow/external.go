package workflow

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/internal/jsonvalue"
)

// The outcomes of an executor call that did not succeed.
const (
	// OutcomeUnavailable: the call never reached the upstream (the
	// connection could not be opened, the program could not start, the
	// sandbox it demands is missing). Nothing happened; retrying is safe.
	OutcomeUnavailable = "unavailable"
	// OutcomeFailed: the upstream answered with a failure (a non-zero
	// exit status, an HTTP error status, an MCP error result).
	OutcomeFailed = "failed"
	// OutcomeUnknown: the call may have taken effect, but no answer came
	// (a timeout or a connection lost after the request was sent).
	OutcomeUnknown = "unknown"
)

// ExecutorError is what a Runner returns when a call did not succeed.
// Messages never carry secrets: runners build them from the connection's
// name, the tool, command or path, and what the upstream said.
type ExecutorError struct {
	// Outcome is OutcomeUnavailable, OutcomeFailed or OutcomeUnknown.
	Outcome string
	// Kind and Connection name the executor.
	Kind       config.Kind
	Connection string
	// Message says what happened.
	Message string
	// Output is what the upstream answered, when it answered (an exit
	// status and output, an HTTP status and body, MCP content).
	Output map[string]any
	// RetryAfter, when positive, is how long the upstream asked to be left
	// alone before the call is tried again (a REST Retry-After, already
	// bounded by config.MaxRetryAfter).
	RetryAfter time.Duration
	// Repeatable says that sending the same call again cannot add an
	// effect even though the upstream may have seen it: a REST request
	// with an idempotent method (RFC 9110 §9.2.2) answered 5xx or left
	// without an answer. The engine may retry it, or hand it to a
	// fallback, as it does an unavailable call.
	Repeatable bool
}

func (e *ExecutorError) Error() string {
	if e.Connection == "" {
		return fmt.Sprintf("%s executor: %s", e.Kind, e.Message)
	}
	return fmt.Sprintf("%s connection %s: %s", e.Kind, e.Connection, e.Message)
}

// UnrecordedHint is the hint of an outcome-unknown that nothing recorded: a
// call on the light path, or a start without an idempotency key or a
// runId. Retrying it would call the upstream again, so the hint of a
// recorded move (contractError's) would be a trap.
const UnrecordedHint = "Do not assume it failed, and do not send it again blindly: nothing recorded this call, so the same request would call the upstream again. Read the upstream back first. To have a retry answered from the record, send an idempotency key (Idempotency-Key over REST, idempotencyKey over MCP) or start a run of proxy_default through praxec.command."

// Unrecorded gives ce, an outcome-unknown, the hint of a call nothing
// recorded (UnrecordedHint); other errors are returned as they are.
func Unrecorded(ce *contracts.Error) *contracts.Error {
	if ce == nil || ce.Code != contracts.CodeOutcomeUnknown {
		return ce
	}
	c := *ce
	c.Hint = UnrecordedHint
	return &c
}

// contractError turns a failed call into the answer of the move that made
// it; workflowID, when set, gives the answer a link to read the workflow
// back.
func (e *ExecutorError) contractError(workflowID string) *contracts.Error {
	var links []contracts.Link
	if workflowID != "" {
		links = []contracts.Link{{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": workflowID}}}
	}
	switch e.Outcome {
	case OutcomeUnknown:
		return &contracts.Error{Code: contracts.CodeOutcomeUnknown, Message: e.Error() + "; the call may have taken effect",
			Hint:  "Do not assume it failed: retry the same request (it is answered from the record, not sent again) or read the upstream back before another move.",
			Links: links, Cause: e}
	case OutcomeFailed:
		return &contracts.Error{Code: contracts.CodeUpstreamFailed, Message: e.Error(),
			Hint: "The upstream refused the call; the move did not happen. Fix the arguments or the upstream and try again.", Links: links, Cause: e}
	}
	return &contracts.Error{Code: contracts.CodeUnavailable, Message: e.Error(),
		Hint: "The call was not sent; nothing happened. Retry later.", Links: links, Cause: e}
}

// Tape records the calls that reach outside the engine (executors of the
// kinds Runners serve), so that a move can run them once, outside any
// store transaction, and be replayed inside one without calling again.
// A Tape made by NewRecorder records; its Replay plays the same calls back
// in order. The engine uses the Tape the context carries (WithTape).
type Tape struct {
	mu     sync.Mutex
	replay bool
	calls  []tapeCall
	pos    int
	// before runs once, before the first call is sent; renew before
	// every later one.
	before, renew func(ctx context.Context) error
	started       bool
	// stopped is why the recording stopped before a call (its renewal
	// failed); the replay answers it where that call would come.
	stopped error
	// at is the instant the move's guards read (Engine.now), zero until
	// they read it; the replay keeps it.
	at time.Time
}

// clock returns the instant the move's guards read: read from now the
// first time, the same ever after, and on the replay.
func (t *Tape) clock(now func() time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.at.IsZero() {
		t.at = now()
	}
	return t.at
}

// tapeCall is one executor call: its final answer and, under a retry or
// fallback policy, every attempt it made to get it.
type tapeCall struct {
	// exec is the executor as the recording move declared it; a replay
	// whose definition declares another (a configuration reload between
	// the two) does not take this call's answer.
	exec     config.Executor
	out      map[string]any
	err      error
	attempts []attempt
	// branches, for a parallel executor, are its branches' calls by
	// branch name (err is then the executor's final answer).
	branches map[string]*tapeCall
}

// ErrTapeMismatch is answered by a replay that meets another call than the
// one recorded: the instance changed between recording and replay.
var ErrTapeMismatch = errors.New("workflow: the move no longer makes the calls that were recorded")

// NewRecorder returns a recording Tape. before, when set, runs once right
// before the first call is sent (a lease); its error stops the move.
func NewRecorder(before func(ctx context.Context) error) *Tape {
	return &Tape{before: before}
}

// RenewBefore sets what runs before every call after the first (the
// renewal of the lease before took), and returns t; its error stops the
// move before that call is sent.
func (t *Tape) RenewBefore(renew func(ctx context.Context) error) *Tape {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.renew = renew
	return t
}

// Replay returns a Tape that plays back the recorded calls.
func (t *Tape) Replay() *Tape {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &Tape{replay: true, calls: t.calls, stopped: t.stopped, at: t.at}
}

// Calls returns how many calls were recorded.
func (t *Tape) Calls() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

// Unknown reports whether a recorded call's outcome is unknown.
func (t *Tape) Unknown() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.calls {
		var xe *ExecutorError
		if errors.As(c.err, &xe) && xe.Outcome == OutcomeUnknown {
			return true
		}
	}
	return false
}

// MayHaveActed reports whether a recorded call may have taken effect
// upstream: one that succeeded or whose outcome is unknown. A call that
// was never sent (unavailable), that the upstream refused (failed), or
// that the runner refused before sending anything (a contract error: a
// path outside the connection's roots, a kind without a runner) did not
// act.
func (t *Tape) MayHaveActed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.calls {
		if mayHaveActed(c.err) {
			return true
		}
	}
	return false
}

// mayHaveActed reports whether a call that answered err may have taken
// effect: a success, an unknown outcome, or an error of no known kind
// (taken for the worst).
func mayHaveActed(err error) bool {
	if err == nil {
		return true
	}
	var xe *ExecutorError
	if errors.As(err, &xe) {
		return xe.Outcome == OutcomeUnknown
	}
	var ce *contracts.Error
	return !errors.As(err, &ce)
}

type tapeKey struct{}

// WithTape returns a context whose moves record into, or replay from, t.
func WithTape(ctx context.Context, t *Tape) context.Context {
	return context.WithValue(ctx, tapeKey{}, t)
}

func tapeFrom(ctx context.Context) *Tape {
	t, _ := ctx.Value(tapeKey{}).(*Tape)
	return t
}

// beforeCall runs, without t.mu held, what runs before a recorded call is
// sent: before for the recording's first call, renew for every later one.
// A renewal that fails stops the recording, so that a replay answers why
// instead of a mismatch.
func (t *Tape) beforeCall(ctx context.Context) error {
	t.mu.Lock()
	first := !t.started
	t.started = true
	hook := t.renew
	if first {
		hook = t.before
	}
	t.mu.Unlock()
	if hook == nil {
		return nil
	}
	err := hook(ctx)
	if err != nil && !first {
		t.mu.Lock()
		t.stopped = err
		t.mu.Unlock()
	}
	return err
}

// next takes a replay's next recorded call, which must be one of x (t.mu
// held). Past the last one it answers the error the recording stopped
// with, ErrTapeMismatch when it did not stop.
func (t *Tape) next(x config.Executor) (tapeCall, error) {
	if t.pos >= len(t.calls) {
		if t.stopped != nil {
			return tapeCall{}, t.stopped
		}
		return tapeCall{}, ErrTapeMismatch
	}
	c := t.calls[t.pos]
	t.pos++
	if !reflect.DeepEqual(c.exec, x) {
		return tapeCall{}, ErrTapeMismatch
	}
	return c, nil
}

// run makes (or replays) one executor call of x: call makes it, with
// every attempt its reliability allows, and returns the final answer and
// the attempts. A replay plays back the final answer and the attempts as
// they were recorded, without waiting and without calling.
func (t *Tape) run(ctx context.Context, x config.Executor, call func(context.Context) (map[string]any, []attempt, error)) (map[string]any, []attempt, error) {
	t.mu.Lock()
	if t.replay {
		defer t.mu.Unlock()
		c, err := t.next(x)
		if err != nil {
			return nil, nil, err
		}
		return jsonvalue.CloneMap(c.out), slices.Clone(c.attempts), c.err
	}
	t.mu.Unlock()
	if err := t.beforeCall(ctx); err != nil {
		return nil, nil, err
	}
	out, attempts, err := call(ctx)
	t.mu.Lock()
	t.calls = append(t.calls, tapeCall{exec: x, out: jsonvalue.CloneMap(out), err: err, attempts: slices.Clone(attempts)})
	t.mu.Unlock()
	return out, attempts, err
}
