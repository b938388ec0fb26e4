package memstore

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
)

// The pins of imported capabilities, keyed by capability id as in the SQL
// drivers; a put compares the stored version.

func copyPin(p store.CapabilityPin) store.CapabilityPin {
	p.Definition = append([]byte{}, p.Definition...)
	if len(p.OfferedDefinition) == 0 {
		p.OfferedDefinition = nil
	} else {
		p.OfferedDefinition = append([]byte{}, p.OfferedDefinition...)
	}
	return p
}

// GetCapabilityPin implements store.ReadTx.
func (t *txn) GetCapabilityPin(ctx context.Context, capability string) (store.CapabilityPin, error) {
	return getCopy(t.pins, t.db.pins, capability, copyPin)
}

// ListCapabilityPins implements store.ReadTx.
func (t *txn) ListCapabilityPins(ctx context.Context) ([]store.CapabilityPin, error) {
	return listCopies(t.pins, t.db.pins, copyPin), nil
}

// PutCapabilityPin implements store.Tx.
func (t *txn) PutCapabilityPin(ctx context.Context, p store.CapabilityPin, expectedVersion int64) error {
	t.mustWrite()
	p = copyPin(p)
	p.OfferedAt, p.CreatedAt, p.UpdatedAt = normTime(p.OfferedAt), normTime(p.CreatedAt), normTime(p.UpdatedAt)
	return putVersioned(&t.pins, t.db.pins, p.Capability, p, expectedVersion, func(p store.CapabilityPin) int64 { return p.Version })
}
