package sqltx

import (
	"context"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file holds the pins of imported capabilities (SQLite migration
// 0015, PostgreSQL 0014): one row per capability, written with
// compare-and-set on its version.

// GetCapabilityPin implements store.ReadTx.
func (t *Tx) GetCapabilityPin(ctx context.Context, capability string) (store.CapabilityPin, error) {
	v, err := sqlrow.CapabilityPin(t.queryRow(ctx, `SELECT `+sqlrow.PinColumns+` FROM capability_pins WHERE capability = ?`, capability))
	return v, t.rowErr("capability pin", err)
}

// ListCapabilityPins implements store.ReadTx.
func (t *Tx) ListCapabilityPins(ctx context.Context) ([]store.CapabilityPin, error) {
	return list(ctx, t, "list capability pins", "capability pin", sqlrow.CapabilityPin,
		`SELECT `+sqlrow.PinColumns+` FROM capability_pins ORDER BY capability`, unlimited)
}

// PutCapabilityPin implements store.Tx.
func (t *Tx) PutCapabilityPin(ctx context.Context, p store.CapabilityPin, expectedVersion int64) error {
	if expectedVersion == 0 {
		return t.insert(ctx, "insert capability pin", `INSERT INTO capability_pins (`+sqlrow.PinColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			p.Capability, p.Connection, p.Tool, p.SHA256, sqlrow.NonNilBytes(p.Definition), p.OfferedSHA256, sqlrow.NonNilBytes(p.OfferedDefinition),
			sqlrow.Nanos(p.OfferedAt), p.Version, p.AcceptedBy, sqlrow.Nanos(p.CreatedAt), sqlrow.Nanos(p.UpdatedAt))
	}
	return t.changeOne(ctx, "update capability pin", func() error {
		_, err := t.GetCapabilityPin(ctx, p.Capability)
		return err
	}, `UPDATE capability_pins SET connection = ?, tool = ?, sha256 = ?, definition = ?, offered_sha256 = ?, offered_definition = ?,
		offered_at = ?, version = ?, accepted_by = ?, created_at = ?, updated_at = ? WHERE capability = ? AND version = ?`,
		p.Connection, p.Tool, p.SHA256, sqlrow.NonNilBytes(p.Definition), p.OfferedSHA256, sqlrow.NonNilBytes(p.OfferedDefinition),
		sqlrow.Nanos(p.OfferedAt), p.Version, p.AcceptedBy, sqlrow.Nanos(p.CreatedAt), sqlrow.Nanos(p.UpdatedAt), p.Capability, expectedVersion)
}
