package connect

import (
	"testing"
	"time"
)

// Outcome is the Outcome of err's *workflow.ExecutorError ("" without one).
var Outcome = outcome

// PIDNamespaces reports whether children get PID namespaces here.
var PIDNamespaces = pidNamespaces

// Closed reports whether m was closed.
func (m *Manager) Closed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Retired returns how many Managers s has swapped out and not closed yet.
func (s *Switch) Retired() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.retired)
}

// SetCallerSessionBound sets how many per-caller sessions the mcp
// connection name keeps.
func (m *Manager) SetCallerSessionBound(name string, n int) {
	p := m.mcp[name].callers
	p.mu.Lock()
	defer p.mu.Unlock()
	p.max = n
}

// SweepCallerSessions closes the per-caller sessions of the mcp connection
// name idle at now for CallerSessionIdle or longer, and returns how many.
func (m *Manager) SweepCallerSessions(name string, now time.Time) int {
	return m.mcp[name].callers.sweep(now)
}

// AcquirePrivate makes a private directory as a confined call in flight
// holds one, and returns it with its release.
func AcquirePrivate(t *testing.T) (dir string, release func()) {
	t.Helper()
	_, dir, err := private.acquire()
	if err != nil {
		t.Fatal(err)
	}
	return dir, func() {
		if err := private.release(dir); err != nil {
			t.Error(err)
		}
	}
}
