package connect

// PIDNamespaces reports whether children get PID namespaces here.
var PIDNamespaces = pidNamespaces

// Closed reports whether m was closed.
func (m *Manager) Closed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}
