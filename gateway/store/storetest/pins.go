package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

func capabilityPin(capability, sum string, version int64) store.CapabilityPin {
	return store.CapabilityPin{Capability: capability, Connection: "up", Tool: "echo", SHA256: sum,
		Definition: []byte(`{"name":"echo"}`), Version: version, AcceptedBy: "first-import", CreatedAt: epoch, UpdatedAt: epoch}
}

// testCapabilityPins: pins are one gateway-wide keyspace, listed by
// capability, insert-only at version 0, replaced by compare-and-set (of
// concurrent replaces from one version exactly one wins), durable across
// a reopen with every field, and copied on the way in and out.
func testCapabilityPins(t *testing.T, o Opener) {
	s := o.Open(t)
	wantNone(t, s, "no pins", store.ReadTx.GetCapabilityPin, "up.echo", store.ReadTx.ListCapabilityPins)
	first := capabilityPin("up.echo", "aa", 1)
	def := first.Definition
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutCapabilityPin(ctx, first, 0); err != nil {
			return err
		}
		def[0] = 'X' // the store keeps its own copy
		if got, err := tx.GetCapabilityPin(ctx, "up.echo"); err != nil || got.SHA256 != "aa" || got.OfferedDefinition != nil {
			return fmt.Errorf("read own write: %+v, %v", got, err)
		}
		return tx.PutCapabilityPin(ctx, capabilityPin("a.first", "bb", 1), 0)
	})
	wantRefused(t, s, "second insert", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.PutCapabilityPin(ctx, capabilityPin("up.echo", "cc", 1), 0)
	})
	wantRefused(t, s, "replacing a missing pin", store.ErrNotFound, func(ctx context.Context, tx store.Tx) error {
		return tx.PutCapabilityPin(ctx, capabilityPin("missing", "cc", 2), 1)
	})
	offered := capabilityPin("up.echo", "aa", 2)
	offered.OfferedSHA256, offered.OfferedDefinition = "dd", []byte(`{"name":"echo","description":"new"}`)
	offered.OfferedAt, offered.UpdatedAt = epoch.Add(time.Minute), epoch.Add(time.Minute)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutCapabilityPin(ctx, offered, 1) })
	wantRefused(t, s, "stale replace", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.PutCapabilityPin(ctx, capabilityPin("up.echo", "ee", 2), 1)
	})
	raceOnce(t, s, 6, store.ErrConflict, func(ctx context.Context, tx store.Tx, i int) error {
		return tx.PutCapabilityPin(ctx, capabilityPin("up.echo", fmt.Sprintf("racer%d", i), 3), 2)
	})
	// Put the offered pin back at version 4, for the reopen.
	offered.Version = 4
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutCapabilityPin(ctx, offered, 3) })
	s = reopen(t, o, s)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetCapabilityPin(ctx, "up.echo")
		if err != nil {
			t.Fatalf("after reopen: %v", err)
		}
		if got.Connection != "up" || got.Tool != "echo" || got.SHA256 != "aa" || string(got.Definition) != `{"name":"echo"}` ||
			got.OfferedSHA256 != "dd" || string(got.OfferedDefinition) != `{"name":"echo","description":"new"}` ||
			!got.OfferedAt.Equal(epoch.Add(time.Minute)) || got.Version != 4 || got.AcceptedBy != "first-import" ||
			!got.CreatedAt.Equal(epoch) || !got.UpdatedAt.Equal(epoch.Add(time.Minute)) {
			t.Errorf("GetCapabilityPin = %+v", got)
		}
		got.OfferedDefinition[0] = 'X'
		again, _ := tx.GetCapabilityPin(ctx, "up.echo")
		if again.OfferedDefinition[0] != '{' {
			t.Error("the stored definition changed through a returned slice")
		}
		list, err := tx.ListCapabilityPins(ctx)
		if err != nil || len(list) != 2 || list[0].Capability != "a.first" || list[1].Capability != "up.echo" || list[0].OfferedDefinition != nil {
			t.Errorf("ListCapabilityPins = %+v, %v", list, err)
		}
		return nil
	})
}
