package reload

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/pins"
)

// This file retries, in the background, the proxy.import connections whose
// tools could not be listed (a cold `npx` fetch longer than the open
// timeout, an upstream that is not up yet): the gateway starts without
// their capabilities, and they appear once the upstream answers, through
// the reload path (connections, workflows, discovery, the MCP server's
// direct tools and its tools/list_changed), on the configuration the
// gateway runs on, never a file changed on disk meanwhile.

// Defaults of Reloader.ImportRetryBase and ImportRetryMax.
const (
	DefaultImportRetryBase = 2 * time.Second
	DefaultImportRetryMax  = 5 * time.Minute
)

// ViaImportRetry is a reload the import retry made: a proxy.import
// connection that had failed answered, and its capabilities were added
// (Trigger.Via).
const ViaImportRetry = "import-retry"

// importRetry is the retry state of one connection whose import failed.
type importRetry struct {
	attempts int
	lastErr  string
	next     time.Time
}

// retryDelay is the wait before the attempt that follows the n-th failure
// (n >= 1): base doubled per failure, capped at max, with equal jitter
// (half of it fixed, half random) so that gateways started together do not
// retry in step.
func retryDelay(n int, base, ceiling time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	half := d / 2
	return half + rand.N(half+1)
}

func (r *Reloader) retryBounds() (time.Duration, time.Duration) {
	base, ceiling := r.ImportRetryBase, r.ImportRetryMax
	if base <= 0 {
		base = DefaultImportRetryBase
	}
	if ceiling <= 0 {
		ceiling = DefaultImportRetryMax
	}
	return base, max(ceiling, base)
}

// syncImportsLocked brings the retry state in line with the running Manager's
// import failures (a connection that now lists is forgotten, a new failure
// is scheduled, one that failed again counts one more attempt) and publishes the import states. Call with stateMu held.
func (r *Reloader) syncImportsLocked() {
	now := time.Now()
	base, ceiling := r.retryBounds()
	failed := r.Switch.Manager().ImportFailures()
	if r.retry == nil {
		r.retry = map[string]*importRetry{}
	}
	for name := range r.retry {
		if _, ok := failed[name]; !ok {
			delete(r.retry, name)
		}
	}
	for name, why := range failed {
		st, ok := r.retry[name]
		if !ok {
			r.retry[name] = &importRetry{attempts: 1, lastErr: why, next: now.Add(retryDelay(1, base, ceiling))}
			continue
		}
		// Listed again by a reload (the retry's own, or the operator's),
		// and failed again: one more attempt.
		st.attempts++
		st.lastErr = why
		st.next = now.Add(retryDelay(st.attempts, base, ceiling))
	}
	r.publishLocked()
}

// failedLocked records one more failed attempt of the connection name.
func (r *Reloader) failedLocked(name, why string) {
	st, ok := r.retry[name]
	if !ok {
		return
	}
	base, ceiling := r.retryBounds()
	st.attempts++
	st.lastErr = why
	st.next = time.Now().Add(retryDelay(st.attempts, base, ceiling))
	r.publishLocked()
}

// publishLocked publishes the import state of every proxy.import
// connection of the running configuration.
func (r *Reloader) publishLocked() {
	var names []string
	if r.Running != nil {
		for _, imp := range r.Running.Proxy.Import {
			if !slices.Contains(names, imp.Connection) {
				names = append(names, imp.Connection)
			}
		}
	}
	sort.Strings(names)
	out := make([]catalogue.ImportState, 0, len(names))
	for _, name := range names {
		st := catalogue.ImportState{Connection: name, State: catalogue.ImportOK}
		if rt, ok := r.retry[name]; ok {
			next := rt.next.UTC()
			st.State, st.Attempts, st.LastError, st.NextAttemptAt = catalogue.ImportRetrying, rt.attempts, rt.lastErr, &next
		}
		out = append(out, st)
	}
	r.Service.Catalogue().SetImportStates(out)
}

// retrying names the connections whose import is being retried.
func (r *Reloader) retrying() []string {
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	names := make([]string, 0, len(r.retry))
	for name := range r.retry {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// RetryImports retries, until ctx ends or the Reloader is closed, the
// proxy.import connections of the running configuration whose tools could
// not be listed, lists the imported tools again when an upstream says its
// tool list changed or a quarantined capability is accepted (the
// service's ToolListChanges, through the reload path: audited as a reload
// via ViaToolsChanged, pins checked again), and publishes the import state of every proxy.import
// connection (catalogue.Catalogue.ImportStates). Each attempt lists the failed
// connection's tools on the running connections; once that works, the
// running configuration (Running) is imported again through the reload
// path (audited as a reload via ViaImportRetry), which adds the
// connection's capabilities everywhere at once. The waits between attempts
// grow from ImportRetryBase to ImportRetryMax, with jitter. A reload by
// the operator starts the retry state afresh from its connections.
// Running must be set; call RetryImports once, on a goroutine of its own.
func (r *Reloader) RetryImports(ctx context.Context) {
	r.stateMu.Lock()
	if r.kick == nil {
		r.kick = make(chan struct{}, 1)
	}
	kick := r.kick
	r.syncImportsLocked()
	r.stateMu.Unlock()
	for {
		r.stateMu.Lock()
		name, next := "", time.Time{}
		for n, st := range r.retry {
			if name == "" || st.next.Before(next) || (st.next.Equal(next) && n < name) {
				name, next = n, st.next
			}
		}
		r.stateMu.Unlock()
		var wait <-chan time.Time
		var t *time.Timer
		if name != "" {
			t = time.NewTimer(time.Until(next))
			wait = t.C
		}
		stop := func() {
			if t != nil {
				t.Stop()
			}
		}
		select {
		case <-ctx.Done():
			stop()
			return
		case <-kick:
			stop()
			continue
		case <-r.Service.Pins().Changes().C():
			// An upstream's tool list changed, or a quarantined
			// capability was accepted: import the tools again, which
			// checks their pins, when what the upstreams list differs
			// from what runs (or always after an acceptance).
			stop()
			if !r.Service.Pins().Changes().TakeAccepted() && !r.importsChanged(ctx) {
				continue
			}
			if _, err := r.reimport(ctx, ViaToolsChanged); errors.Is(err, ErrClosed) {
				return
			} else if err != nil {
				r.log().Warn("proxy.import: the tools could not be imported again after a change; the running ones stay", "err", err)
			}
			continue
		case <-wait:
		}
		err := r.Switch.Manager().ProbeImport(ctx, name)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			_, err = r.reimport(ctx, ViaImportRetry)
			if errors.Is(err, ErrClosed) {
				return
			}
			if err == nil {
				// The reload synced the state; the connection may still
				// have failed in the new setup's own listing.
				continue
			}
		}
		r.log().Warn("proxy.import: the connection still cannot be listed; retrying later", "connection", name, "err", err)
		r.stateMu.Lock()
		r.failedLocked(name, err.Error())
		r.stateMu.Unlock()
	}
}

// importsChanged lists the tools of the running configuration's
// proxy.import connections on the sessions they hold and reports whether
// the capabilities they make differ from those that run (an id, or a
// definition): a tools/list_changed that changes nothing (a server that
// registers tools as a session opens says so on every session) imports
// nothing. A listing that fails changes nothing either: the running
// capabilities stay, and the next notification or reload tries again.
func (r *Reloader) importsChanged(ctx context.Context) bool {
	r.stateMu.Lock()
	running := r.Running
	r.stateMu.Unlock()
	if running == nil || len(running.Proxy.Import) == 0 {
		return false
	}
	lctx, cancel := context.WithTimeout(ctx, connect.ImportTimeout)
	caps, problems := r.Switch.Manager().Import(lctx, running.Proxy.Import)
	cancel()
	if len(problems) > 0 {
		r.log().Warn("proxy.import: a connection's tools changed, but listing them again found problems", "problems", problems)
	}
	next := running.Clone()
	next.SetImported(caps)
	return !slices.Equal(importedDigests(running), importedDigests(next))
}

// importedDigests lists the imported capabilities of cfg as id and
// definition hash, in order.
func importedDigests(cfg *config.Config) []string {
	var out []string
	for _, c := range cfg.Exposed() {
		if c.Upstream == nil {
			continue
		}
		_, sum, _ := pins.DefinitionHash(c.Upstream.Definition)
		out = append(out, c.ID+"\x00"+sum)
	}
	return out
}

// reimport imports the running configuration again through the reload
// path, audited as a reload via via.
func (r *Reloader) reimport(ctx context.Context, via string) (*Result, error) {
	return r.run(ctx, Trigger{Via: via}, func(context.Context) (*config.Config, []byte, bool, error) {
		if r.Running == nil {
			return nil, nil, false, errors.New("no running configuration to import again")
		}
		return r.Running.Clone(), r.runningData, true, nil
	})
}
