package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/lightpath"
	"github.com/praxa/praxa/gateway/store"
)

// Hooks hand the committed events of each capability whose audit
// block names sinks (config.CapabilityAudit.Sinks) to those sinks, beside
// audit.sink: a file, the standard error, an HTTP endpoint. The events of
// a capability's calls are those whose capability attribute names it:
// capability.called, and a proxy_default run's transition.fired and
// guard.rejected (package workflow writes it). Each reaches the sinks
// once its transaction committed, redacted as aura_get_trace shows it
// (SinkLine), through a store wrapper (WithHooks) that sees
// every commit: mutations, the Auditor's batches, the light path.
//
// A sink is opened once for every capability that names it (the same
// kind, file, URL and settings). A reload opens the sinks the new
// configuration adds before anything changes (Stage) and closes those it
// no longer names after the swap. The zero value is not usable: use
// NewHooks.
type Hooks struct {
	opts HooksOptions

	// mu serializes Stage and Close, and guards sinks and retiring.
	mu       sync.Mutex
	sinks    map[string]*hookSink // the open sinks, by key
	closed   bool
	retiring sync.WaitGroup
	// routes maps a capability's id to its sinks; write reads it
	// without a lock.
	routes atomic.Pointer[map[string][]*hookSink]
}

// HooksOptions are what a runtime gives the hooks. The zero value is
// usable.
type HooksOptions struct {
	// Logger receives the sinks' failures and drops (nil: slog.Default()).
	Logger *slog.Logger
	// Stderr is where stderr sinks write (nil: os.Stderr).
	Stderr io.Writer
	// Getenv reads the ${NAME} of http sinks' headers (nil: os.Getenv).
	Getenv func(string) string
}

// hookSink is one open sink of the hooks.
type hookSink struct {
	// name says which sink it is in logs and metrics: stderr, the file's
	// path, or the endpoint's URL without user information or query.
	name string
	kind string
	w    interface {
		write([]store.Event)
		counts() (delivered, dropped int64)
		close(ctx context.Context) error
	}
}

// fileSink adapts an Sink (stderr, a file) to a hook's sink.
type fileSink struct{ *Sink }

func (f fileSink) close(context.Context) error { return f.Close() }

// capabilityEventTypes are the events of a capability's calls, an outcome
// unknown after a crash among them (a run of proxy_default's, started or
// moved).
var capabilityEventTypes = []string{lightpath.EventCalled, "transition.fired", "guard.rejected",
	"move.outcome_unknown", "start.outcome_unknown"}

// NewHooks opens the sinks that the capabilities of cfg name.
func NewHooks(cfg *config.Config, opts *HooksOptions) (*Hooks, error) {
	h := &Hooks{sinks: map[string]*hookSink{}}
	if opts != nil {
		h.opts = *opts
	}
	h.opts.Logger = cmp.Or(h.opts.Logger, slog.Default())
	h.opts.Stderr = cmp.Or[io.Writer](h.opts.Stderr, os.Stderr)
	if h.opts.Getenv == nil {
		h.opts.Getenv = os.Getenv
	}
	apply, err := h.Stage(cfg)
	if err != nil {
		return nil, err
	}
	apply()
	return h, nil
}

// hookKey identifies a sink: its spec with a file's path resolved.
func hookKey(spec config.AuditHookSink) string {
	b, _ := json.Marshal(spec)
	return string(b)
}

// Stage opens the sinks cfg names that are not open yet, and returns the
// function that routes by cfg from then on and closes, in the
// background, the sinks cfg no longer names (each within 10 seconds to
// deliver what it holds). A sink that cannot be opened (a file that
// cannot be created, an http sink's header naming an unset variable)
// closes what Stage opened and returns the error: nothing changed.
func (h *Hooks) Stage(cfg *config.Config) (apply func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("the audit hooks are closed")
	}
	routes := map[string][]*hookSink{}
	opened := map[string]*hookSink{}
	keep := map[string]bool{}
	fail := func(err error) (func(), error) {
		for _, s := range opened {
			s.w.close(context.Background())
		}
		return nil, err
	}
	for _, x := range cfg.Exposed() {
		for _, spec := range x.Audit.Sinks {
			if spec.Kind == config.AuditHookFile {
				spec.Path = cfg.Path(spec.Path)
			}
			key := hookKey(spec)
			s, ok := h.sinks[key]
			if !ok {
				if s, ok = opened[key]; !ok {
					if s, err = h.open(spec); err != nil {
						return fail(err)
					}
					opened[key] = s
				}
			}
			keep[key] = true
			if !slices.Contains(routes[x.ID], s) {
				routes[x.ID] = append(routes[x.ID], s)
			}
		}
	}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for key, s := range opened {
			h.sinks[key] = s
		}
		h.routes.Store(&routes)
		for key, s := range h.sinks {
			if keep[key] {
				continue
			}
			delete(h.sinks, key)
			h.retiring.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := s.w.close(ctx); err != nil {
					h.opts.Logger.Warn("closing an audit sink the configuration no longer names", "sink", s.name, "err", err)
				}
			})
		}
	}, nil
}

// open opens the sink spec describes.
func (h *Hooks) open(spec config.AuditHookSink) (*hookSink, error) {
	switch spec.Kind {
	case config.AuditSinkStderr:
		return &hookSink{name: "stderr", kind: spec.Kind, w: fileSink{NewSink(h.opts.Stderr, h.opts.Logger)}}, nil
	case config.AuditHookFile:
		s, err := OpenSink(spec.Path, h.opts.Logger)
		if err != nil {
			return nil, err
		}
		return &hookSink{name: spec.Path, kind: spec.Kind, w: fileSink{s}}, nil
	case config.AuditHookHTTP:
		s, err := openHTTPAuditSink(spec, h.opts.Getenv, h.opts.Logger)
		if err != nil {
			return nil, err
		}
		return &hookSink{name: s.name, kind: spec.Kind, w: s}, nil
	}
	return nil, errors.New("audit sink: unknown kind " + spec.Kind)
}

// idle reports whether no capability has a sink: a transaction then need
// not collect its events for the hooks (one committing while a reload
// adds the first sink may reach it without them).
func (h *Hooks) idle() bool {
	routes := h.routes.Load()
	return routes == nil || len(*routes) == 0
}

// write hands each committed event of a capability with sinks to them.
func (h *Hooks) write(events []store.Event) {
	routes := h.routes.Load()
	if routes == nil || len(*routes) == 0 {
		return
	}
	var per map[*hookSink][]store.Event
	for _, ev := range events {
		c, _ := ev.Attributes["capability"].(string)
		sinks := (*routes)[c]
		if len(sinks) == 0 || !slices.Contains(capabilityEventTypes, ev.Type) {
			continue
		}
		if per == nil {
			per = map[*hookSink][]store.Event{}
		}
		for _, s := range sinks {
			per[s] = append(per[s], ev)
		}
	}
	for s, evs := range per {
		s.w.write(evs)
	}
}

// SinkCounts are the counts of one sink of the hooks.
type SinkCounts struct {
	// Sink names it: stderr, a file's path, an endpoint's URL.
	Sink string
	// Kind is stderr, file or http.
	Kind string
	// Delivered counts the events written or posted, Dropped those lost
	// (a full queue, a batch undelivered, a write that failed).
	Delivered, Dropped int64
}

// Counts reports each open sink's counts, by name and kind (the sinks of
// one name and kind summed), sorted.
func (h *Hooks) Counts() []SinkCounts {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []SinkCounts
	for _, s := range h.sinks {
		d, x := s.w.counts()
		i := slices.IndexFunc(out, func(c SinkCounts) bool { return c.Sink == s.name && c.Kind == s.kind })
		if i < 0 {
			out = append(out, SinkCounts{Sink: s.name, Kind: s.kind})
			i = len(out) - 1
		}
		out[i].Delivered += d
		out[i].Dropped += x
	}
	slices.SortFunc(out, func(a, b SinkCounts) int {
		if a.Sink != b.Sink {
			return cmp.Compare(a.Sink, b.Sink)
		}
		return cmp.Compare(a.Kind, b.Kind)
	})
	return out
}

// Close closes every sink, the http sinks delivering what they hold
// within ctx (past it, what is left is dropped and counted), and waits
// for the sinks a reload retired. Calls after the first do nothing.
func (h *Hooks) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.routes.Store(nil)
	sinks := h.sinks
	h.sinks = map[string]*hookSink{}
	h.mu.Unlock()
	var errs []error
	for _, s := range sinks {
		if err := s.w.close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	h.retiring.Wait()
	return errors.Join(errs...)
}

// WithHooks returns st with every event it commits also offered to
// hooks, after the commit (as WithSink). Closing the returned store
// closes st; hooks are closed by their owner.
func WithHooks(st store.Store, hooks *Hooks) store.Store {
	return &sinkStore{Store: st, sink: hooks}
}
