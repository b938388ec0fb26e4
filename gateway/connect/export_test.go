package connect

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
