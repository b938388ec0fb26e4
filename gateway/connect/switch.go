package connect

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// Switch holds the Manager of the configuration in force, so a
// configuration reload can replace the connections while calls run. The
// engine runs executors through the Switch's runners: each call takes the
// current Manager, counted in flight until it returns. Swap makes another
// Manager current and retires the old one, which is closed (its MCP
// children stopped) once its last call in flight has returned, and then
// forgotten.
type Switch struct {
	cur atomic.Pointer[held]

	mu      sync.Mutex
	retired []*held // swapped out and not closed yet
	closed  bool
}

// held is one Manager and the calls in flight on it.
type held struct {
	s        *Switch
	m        *Manager
	runners  map[config.Kind]workflow.Runner
	mu       sync.Mutex
	inflight int
	retired  bool
	done     chan struct{} // closed once m is closed
	err      error
}

func (s *Switch) newHeld(m *Manager) *held {
	return &held{s: s, m: m, runners: m.Runners(), done: make(chan struct{})}
}

// NewSwitch returns a Switch whose current Manager is m.
func NewSwitch(m *Manager) *Switch {
	s := &Switch{}
	s.cur.Store(s.newHeld(m))
	return s
}

// Manager returns the current Manager.
func (s *Switch) Manager() *Manager { return s.cur.Load().m }

// acquire returns the current Manager's holder, counted in flight.
func (s *Switch) acquire() *held {
	for {
		h := s.cur.Load()
		h.mu.Lock()
		if !h.retired {
			h.inflight++
			h.mu.Unlock()
			return h
		}
		// Swapped between the Load and the Lock: the next Load sees the
		// new current one.
		h.mu.Unlock()
	}
}

// release ends one call on h, closing h's Manager when it was the last
// call of a retired one.
func (h *held) release() {
	h.mu.Lock()
	h.inflight--
	last := h.retired && h.inflight == 0
	h.mu.Unlock()
	if last {
		h.close()
	}
}

// close closes a retired Manager and takes it off the Switch's list.
func (h *held) close() {
	h.err = h.m.Close()
	close(h.done)
	h.s.mu.Lock()
	h.s.retired = slices.DeleteFunc(h.s.retired, func(r *held) bool { return r == h })
	h.s.mu.Unlock()
}

// Swap makes next the current Manager and retires the one it replaces:
// calls already running on it finish there, and it is closed when the
// last of them returns (at once when none runs). After Close, Swap closes
// next instead.
func (s *Switch) Swap(next *Manager) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		next.Close()
		return
	}
	old := s.cur.Swap(s.newHeld(next))
	s.retired = append(s.retired, old)
	s.mu.Unlock()
	old.mu.Lock()
	old.retired = true
	idle := old.inflight == 0
	old.mu.Unlock()
	if idle {
		old.close()
	}
}

// Close closes the current Manager and waits for the retired ones to
// close (each once its calls in flight return; ctx bounds the wait, after
// which they are closed regardless).
func (s *Switch) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	retired := s.retired
	s.retired = nil
	s.mu.Unlock()
	errs := []error{s.cur.Load().m.Close()}
	for _, h := range retired {
		select {
		case <-h.done:
			errs = append(errs, h.err)
		case <-ctx.Done():
			errs = append(errs, h.m.Close()) // Close is safe to repeat
		}
	}
	return errors.Join(errs...)
}

// Runners returns runners of the executor kinds a Manager runs
// (Manager.Runners) that run each call on the Manager current when it
// starts, for workflow.Engine.Runners.
func (s *Switch) Runners() map[config.Kind]workflow.Runner {
	out := make(map[config.Kind]workflow.Runner, len(kinds))
	for k := range kinds {
		out[k] = switchRunner{s, k}
	}
	return out
}

// switchRunner runs one executor kind on the current Manager.
type switchRunner struct {
	s    *Switch
	kind config.Kind
}

// Run implements workflow.Runner.
func (r switchRunner) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	h := r.s.acquire()
	defer h.release()
	return h.runners[r.kind].Run(ctx, x, scope)
}
