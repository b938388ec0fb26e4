// Package periodic runs the gateway's background jobs: the sweepers that
// resolve expired leases, expire idle runs, end timed-out waits, forget
// expired idempotency records and delete audit events past their
// retention. Each is one Job, run by one loop written once (Run): a round,
// then a wait until the next, until its context ends; a failed round is
// logged (unless the context ended) and tried again at the next.
//
// Package periodic imports only the standard library; the jobs it runs
// live with their features (package gateway, package assembly).
package periodic

import (
	"context"
	"log/slog"
	"time"
)

// Job is one background job.
type Job struct {
	// Name names the job in its log lines ("lease sweep").
	Name string
	// Every is how long to wait before the next round; it is asked again
	// after each round, so that a configuration reload can change it.
	Every func() time.Duration
	// AtStart runs a round at once, before the first wait.
	AtStart bool
	// Round runs one round and returns how many items it handled and
	// whether more are waiting (the next round then comes after CatchUp
	// instead of Every).
	Round func(ctx context.Context) (n int, more bool, err error)
	// CatchUp is the wait before the next round when a round left more
	// (0: Every).
	CatchUp time.Duration
	// Done, when set, is the message logged at Info when a round handled
	// items, with the count under DoneKey ("deleted").
	Done, DoneKey string
}

// Run runs j until ctx ends.
func Run(ctx context.Context, log *slog.Logger, j Job) {
	next := time.Duration(0)
	if !j.AtStart {
		next = j.Every()
	}
	t := time.NewTimer(next)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, more, err := j.Round(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, j.Name+" failed", "err", err)
		case err == nil && n > 0 && j.Done != "":
			log.InfoContext(ctx, j.Done, j.DoneKey, n)
		}
		next = j.Every()
		if more && j.CatchUp > 0 {
			next = j.CatchUp
		}
		t.Reset(next)
	}
}

// Fixed is an Every of one duration.
func Fixed(d time.Duration) func() time.Duration { return func() time.Duration { return d } }
