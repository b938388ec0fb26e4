package gateway

import (
	"context"
	"sync"

	"github.com/praxa/praxa/contracts"
)

// A move that may call outside the gateway (an operation with prepare:
// start, submit, signal, create) runs to its end even when its request
// does not wait for it: the request's deadline passes, or its client goes
// away. Stopping it there would cut an executor off mid-call and turn a
// call that may have acted into a retryable 503; a client that trusts that
// and retries with a new key could act twice. Instead the move goes on
// under its lease and its own timeouts (each executor's timeout, all of
// them held to the lease TTL at load), records its outcome as it would
// have, and the request answers 504 outcome-unknown with the ways to read
// the outcome back; its cause (MoveRunning, inflight.go) names the run and
// the move, for an edge that answers otherwise (an MCP task). Close waits
// for such moves.

// detached tracks the moves that outlived their request.
type detached struct {
	wg sync.WaitGroup
}

// outlive runs the move run with a context that keeps ctx's values but
// not its deadline or cancellation, and returns its answer, or, when ctx
// ends first, the outcome-unknown answer of a move still running.
func (ms *missions) outlive(ctx context.Context, e *env, run func(context.Context) *Result) *Result {
	done := make(chan *Result, 1)
	ms.detached.wg.Add(1)
	go func() {
		defer ms.detached.wg.Done()
		done <- run(context.WithoutCancel(ctx))
	}()
	select {
	case res := <-done:
		return res
	case <-ctx.Done():
		ce := stillRunning(e)
		ce.Cause = ms.runningMove(ctx, e) // inflight.go
		return &Result{Err: ce}
	}
}

// stillRunning is the answer of a move its request stopped waiting for.
func stillRunning(e *env) *contracts.Error {
	ce := &contracts.Error{Code: contracts.CodeOutcomeUnknown,
		Message: "the request's deadline passed while the move was still running; it goes on, and its outcome is not known yet",
		Hint:    "Do not send it again with a new key: retry the same request with the same key (it answers in-progress until the move ends, then its outcome), or read the workflow back."}
	switch {
	case stringArg(e.Args, "workflowId") != "":
		ce.Links = []contracts.Link{{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": stringArg(e.Args, "workflowId")}}}
	case stringArg(e.Args, "runId") != "" && e.Tool.Name != contracts.ToolPraxecCommand:
		ce.Links = []contracts.Link{{Rel: "get", Title: "Read the mission", Method: contracts.ToolGetMission, Args: map[string]any{"runId": stringArg(e.Args, "runId")}}}
	}
	return ce
}

// waitDetached waits until the moves that outlived their requests end, or
// ctx does.
func (ms *missions) waitDetached(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		ms.detached.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
