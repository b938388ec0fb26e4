package store

import (
	"context"
	"time"
)

// CapabilityPin is the pin of one capability imported from an upstream MCP
// server (proxy.import): the SHA-256 of the tool definition an operator
// accepted (or the gateway trusted at first import), and the different
// definition the upstream offers since, if any. Capabilities are
// gateway-wide configuration, so pins are not partitioned by tenant: every
// tenant and every replica reads the same pin. Who accepted the pinned
// definition last is recorded beside it.
type CapabilityPin struct {
	// Capability is the capability's id (PREFIX.TOOL); unique.
	Capability string
	// Connection and Tool name the upstream tool the capability imports.
	Connection string
	Tool       string
	// SHA256 is the hex SHA-256 of Definition.
	SHA256 string
	// Definition is the canonical JSON of the pinned tool definition.
	Definition []byte
	// OfferedSHA256 and OfferedDefinition are the different definition
	// the upstream offers since OfferedAt, empty when it offers the
	// pinned one.
	OfferedSHA256     string
	OfferedDefinition []byte
	OfferedAt         time.Time
	// Version counts the writes of the pin, from 1.
	Version int64
	// AcceptedBy names who accepted the pinned definition: the subject of
	// the operator, or "first-import" for the definition trusted when the
	// capability was first imported.
	AcceptedBy string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// PinReadTx reads capability pins.
type PinReadTx interface {
	// GetCapabilityPin returns the pin of the capability, or ErrNotFound.
	GetCapabilityPin(ctx context.Context, capability string) (CapabilityPin, error)
	// ListCapabilityPins returns every pin, by capability id.
	ListCapabilityPins(ctx context.Context) ([]CapabilityPin, error)
}

// PinTx writes capability pins.
type PinTx interface {
	// PutCapabilityPin writes a pin. With expectedVersion 0 it inserts,
	// ErrExists when the capability holds a pin; otherwise it replaces the
	// pin whose stored version is expectedVersion: ErrConflict when it is
	// another, ErrNotFound when there is none.
	PutCapabilityPin(ctx context.Context, p CapabilityPin, expectedVersion int64) error
}
