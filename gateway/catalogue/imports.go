package catalogue

import (
	"slices"
	"time"
)

// Import states (ImportState.State).
const (
	// ImportOK: the connection's tools were listed; its capabilities are
	// served.
	ImportOK = "ok"
	// ImportRetrying: the connection's tools could not be listed; none of
	// its capabilities is served, and the gateway tries again at
	// NextAttemptAt.
	ImportRetrying = "retrying"
)

// ImportState is the import state of one proxy.import connection, as
// /readyz and discovery (the connection's item) show it.
type ImportState struct {
	// Connection is the connection's name.
	Connection string `json:"connection"`
	// State is ImportOK or ImportRetrying.
	State string `json:"state"`
	// Attempts counts the listings that failed so far, the one at start
	// (or at the reload that introduced the connection) included.
	Attempts int `json:"attempts,omitempty"`
	// LastError is the last failure.
	LastError string `json:"lastError,omitempty"`
	// NextAttemptAt is when the gateway tries again.
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`
}

// SetImportStates publishes the import states of the proxy.import
// connections of the running configuration, by connection name (a
// Reloader's import retry does).
func (c *Catalogue) SetImportStates(states []ImportState) {
	c.imports.Store(&states)
}

// ImportStates returns the import state of every proxy.import connection
// of the running configuration, by connection name; none before a
// Reloader published them (/readyz).
func (c *Catalogue) ImportStates() []ImportState {
	p := c.imports.Load()
	if p == nil {
		return nil
	}
	return slices.Clone(*p)
}

// importState returns the import state of the connection name, nil when
// none is known.
func (c *Catalogue) importState(name string) *ImportState {
	p := c.imports.Load()
	if p == nil {
		return nil
	}
	for i := range *p {
		if (*p)[i].Connection == name {
			st := (*p)[i]
			return &st
		}
	}
	return nil
}
