package memstore

import (
	"context"
	"maps"
	"slices"
	"strings"

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

func (t *txn) pin(capability string) (store.CapabilityPin, bool) {
	if p, ok := t.pins[capability]; ok {
		return p, true
	}
	p, ok := t.db.pins[capability]
	return p, ok
}

// applyPins moves the staged pins into the DB.
func (t *txn) applyPins() {
	if len(t.pins) == 0 {
		return
	}
	if t.db.pins == nil {
		t.db.pins = map[string]store.CapabilityPin{}
	}
	maps.Copy(t.db.pins, t.pins)
}

// GetCapabilityPin implements store.ReadTx.
func (t *txn) GetCapabilityPin(ctx context.Context, capability string) (store.CapabilityPin, error) {
	p, ok := t.pin(capability)
	if !ok {
		return store.CapabilityPin{}, store.ErrNotFound
	}
	return copyPin(p), nil
}

// ListCapabilityPins implements store.ReadTx.
func (t *txn) ListCapabilityPins(ctx context.Context) ([]store.CapabilityPin, error) {
	keys := slices.Collect(maps.Keys(t.db.pins))
	for k := range t.pins {
		if _, ok := t.db.pins[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, strings.Compare)
	var out []store.CapabilityPin
	for _, k := range keys {
		p, _ := t.pin(k)
		out = append(out, copyPin(p))
	}
	return out, nil
}

// PutCapabilityPin implements store.Tx.
func (t *txn) PutCapabilityPin(ctx context.Context, p store.CapabilityPin, expectedVersion int64) error {
	t.mustWrite()
	old, exists := t.pin(p.Capability)
	switch {
	case expectedVersion == 0 && exists:
		return store.ErrExists
	case expectedVersion != 0 && !exists:
		return store.ErrNotFound
	case expectedVersion != 0 && old.Version != expectedVersion:
		return store.ErrConflict
	}
	p = copyPin(p)
	p.OfferedAt, p.CreatedAt, p.UpdatedAt = normTime(p.OfferedAt), normTime(p.CreatedAt), normTime(p.UpdatedAt)
	if t.pins == nil {
		t.pins = map[string]store.CapabilityPin{}
	}
	t.pins[p.Capability] = p
	return nil
}
