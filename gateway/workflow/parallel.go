package workflow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/internal/jsonvalue"
)

// This file runs the parallel executor: its branches (each one call of a
// connection's kind, or noop) run at once, and its output holds each
// branch's output under the branch's name.
//
// On a tape the whole executor is one entry, taken before any branch
// starts: recording it runs the tape's hook once (the move's lease for
// the first call of a move, its renewal for a later one), so one lease,
// and one renewal, serves every branch. The entry keeps each branch's
// answer and attempts under the branch's name, and a replay hands each
// branch its own answer by name: branches finish in any order, so a
// position would not say whose answer is whose.

// branchResult is one branch's answer.
type branchResult struct {
	out      map[string]any
	attempts []attempt
	err      error
}

// parallel runs the parallel executor x under rel: each branch under rel's
// timeout and retries (no fallback: a fallback replaces the executor of a
// call, and the parallel executor is not one call).
func (e *Engine) parallel(ctx context.Context, x config.Executor, rel *config.Reliability, scope Scope) (map[string]any, []attempt, error) {
	var g *tapeGroup
	if tp := tapeFrom(ctx); tp != nil {
		var err error
		if g, err = tp.group(ctx, x); err != nil {
			return nil, nil, err
		}
	}
	var brel *config.Reliability
	if rel != nil {
		r := *rel
		r.Fallback = nil
		brel = &r
	}
	names := slices.Sorted(maps.Keys(x.Branches))
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]branchResult, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		bx := x.Branches[name]
		call := func(ctx context.Context) (map[string]any, []attempt, error) {
			return e.branch(ctx, bx, brel, scope)
		}
		wg.Go(func() {
			var r branchResult
			if g != nil {
				r.out, r.attempts, r.err = g.run(bctx, name, bx, call)
			} else {
				r.out, r.attempts, r.err = call(bctx)
			}
			for j := range r.attempts {
				r.attempts[j].Branch = name
			}
			results[i] = r
			if r.err != nil && x.Policy == config.ParallelFailFast {
				cancel() // the other branches stop where they are
			}
		})
	}
	wg.Wait()
	out, attempts, err := merge(names, results)
	if g != nil {
		g.finish(err)
	}
	return out, attempts, err
}

// branch makes one branch's call.
func (e *Engine) branch(ctx context.Context, x config.Executor, rel *config.Reliability, scope Scope) (map[string]any, []attempt, error) {
	if x.Kind.Runs() == config.RunNothing {
		return map[string]any{}, nil, nil
	}
	if _, ok := e.Runners[x.Kind]; !ok {
		return nil, nil, contracts.Errorf(contracts.CodeNotImplemented, "executors of kind %s need connections, which this gateway does not run here", x.Kind)
	}
	return e.callReliably(ctx, x, rel, scope)
}

// merge makes the answer of a parallel executor from its branches' (in
// the order of names): the outputs under the branches' names and every
// attempt, branch by branch. When a branch failed, the answer is an
// ExecutorError of kind parallel whose Output holds what each branch
// answered: outcome unknown when any branch may have acted (it succeeded,
// or its outcome is unknown), unavailable when every failed branch was
// unavailable, failed otherwise. A branch refused by the gateway itself
// (a contract error) when no branch may have acted answers that refusal,
// and a replay that met other calls than recorded answers that.
func merge(names []string, results []branchResult) (map[string]any, []attempt, error) {
	out := map[string]any{}
	var attempts []attempt
	var failed []string
	var refusal error
	acted, allUnavailable := []string{}, true
	for i, name := range names {
		r := results[i]
		attempts = append(attempts, r.attempts...)
		var xe *ExecutorError
		switch {
		case r.err == nil:
			out[name] = nonNil(r.out)
		case errors.As(r.err, &xe):
			out[name] = nonNil(xe.Output)
		default:
			out[name] = map[string]any{}
		}
		if mayHaveActed(r.err) {
			acted = append(acted, name)
		}
		if r.err == nil {
			continue
		}
		if errors.Is(r.err, ErrTapeMismatch) {
			return nil, attempts, r.err
		}
		msg := r.err.Error()
		if xe != nil {
			msg = xe.Message
			allUnavailable = allUnavailable && xe.Outcome == OutcomeUnavailable
		} else {
			allUnavailable = false
			if refusal == nil {
				refusal = r.err
			}
		}
		failed = append(failed, fmt.Sprintf("branch %s (%s): %s", name, branchWho(r, xe), msg))
	}
	if len(failed) == 0 {
		return out, attempts, nil
	}
	xe := &ExecutorError{Kind: config.ExecutorParallel, Output: out, Message: strings.Join(failed, "; ")}
	switch {
	case len(acted) > 0:
		xe.Outcome = OutcomeUnknown
		xe.Message += fmt.Sprintf("; branch %s may have taken effect", strings.Join(acted, ", "))
	case refusal != nil:
		return nil, attempts, refusal
	case allUnavailable:
		xe.Outcome = OutcomeUnavailable
	default:
		xe.Outcome = OutcomeFailed
	}
	return nil, attempts, xe
}

// branchWho names the executor of a failed branch.
func branchWho(r branchResult, xe *ExecutorError) string {
	if xe != nil {
		return string(xe.Kind) + " " + xe.Connection
	}
	if len(r.attempts) > 0 {
		return string(r.attempts[0].Kind) + " " + r.attempts[0].Connection
	}
	return "refused"
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return jsonvalue.CloneMap(m)
}

// tapeGroup is the tape entry of one parallel executor, recording or
// replaying its branches' calls by branch name.
type tapeGroup struct {
	t *Tape
	i int // the entry's index in t.calls
}

// group opens the tape entry of the parallel executor x. Recording, it
// runs the tape's hook first (the lease, or its renewal), once for every
// branch; its error stops the move before any branch starts. Replaying,
// it takes the next recorded entry, which must be this executor's.
func (t *Tape) group(ctx context.Context, x config.Executor) (*tapeGroup, error) {
	t.mu.Lock()
	if t.replay {
		defer t.mu.Unlock()
		c, err := t.next(x)
		if err != nil {
			return nil, err
		}
		if c.branches == nil {
			return nil, ErrTapeMismatch
		}
		return &tapeGroup{t: t, i: t.pos - 1}, nil
	}
	t.mu.Unlock()
	if err := t.beforeCall(ctx); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = append(t.calls, tapeCall{exec: x, branches: map[string]*tapeCall{}})
	return &tapeGroup{t: t, i: len(t.calls) - 1}, nil
}

// run makes (or replays) branch name's call of x: recording, call makes
// it and its answer is kept under name; replaying, the answer recorded
// under name is played back, whichever branch finished first when it was
// recorded.
func (g *tapeGroup) run(ctx context.Context, name string, x config.Executor, call func(context.Context) (map[string]any, []attempt, error)) (map[string]any, []attempt, error) {
	t := g.t
	t.mu.Lock()
	if t.replay {
		defer t.mu.Unlock()
		c, ok := t.calls[g.i].branches[name]
		if !ok || !reflect.DeepEqual(c.exec, x) {
			return nil, nil, ErrTapeMismatch
		}
		return jsonvalue.CloneMap(c.out), slices.Clone(c.attempts), c.err
	}
	t.mu.Unlock()
	out, attempts, err := call(ctx)
	t.mu.Lock()
	t.calls[g.i].branches[name] = &tapeCall{exec: x, out: jsonvalue.CloneMap(out), err: err, attempts: slices.Clone(attempts)}
	t.mu.Unlock()
	return out, attempts, err
}

// finish records the parallel executor's final answer (what MayHaveActed
// and Unknown read).
func (g *tapeGroup) finish(err error) {
	t := g.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.replay {
		t.calls[g.i].err = err
	}
}
