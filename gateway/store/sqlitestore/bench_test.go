package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// BenchmarkAppendEvents appends the audit trail's batches: 256 events of
// reads in one transaction, as the Auditor writes them under load (NoSync:
// the statements' cost, not the disk's). One op is one event.
func BenchmarkAppendEvents(b *testing.B) {
	benchAppend(b, 256, store.Event{Tenant: "dev", TraceID: "0123456789abcdef0123456789abcdef", Type: "request.allowed",
		Subject: "dev-agent", ClientID: "dev", Operation: "getMission", Tool: "aura_get_mission",
		Outcome: "allowed", RequestID: "req-0123456789", Attributes: map[string]any{"status": 200}})
}

// BenchmarkAppendEventsGroup appends what the Auditor's group commit
// writes under a few concurrent proxied calls: one transaction of 6
// light-path events (capability.called, one caller). One op is one event.
func BenchmarkAppendEventsGroup(b *testing.B) {
	benchAppend(b, 6, store.Event{Tenant: "dev", TraceID: "0123456789abcdef0123456789abcdef", Type: "capability.called",
		Subject: "dev-agent", ClientID: "dev", Operation: "callDirect", Tool: "up.echo", Outcome: "allowed", RequestID: "req-0123456789",
		Attributes: map[string]any{"capability": "up.echo", "ok": true, "kind": "mcp", "connection": "up"}})
}

// benchAppend appends batches of size copies of e, each at its own time,
// one transaction a batch.
func benchAppend(b *testing.B, size int, e store.Event) {
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "praxa.db"), &sqlitestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batch := make([]store.Event, size)
	at := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		for j := range batch {
			batch[j] = e
			batch[j].At = at.Add(time.Duration(i + j))
		}
		if err := s.AppendEvents(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkView is one store read as GET /v8/missions/{id} and GET
// /v8/traces/{id} run it (Store.View around one statement), on a file
// holding one mission and one trace of three events: what a read costs in
// the driver alone, without HTTP, JSON or audit.
func BenchmarkView(b *testing.B) {
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "praxa.db"), &sqlitestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	at := time.Now()
	const trace = "0123456789abcdef0123456789abcdef"
	m := store.Mission{Tenant: "dev", ID: "wf_bench", RunID: "wf_bench", DefinitionID: "proxy_default", DefinitionVersion: 1,
		State: "running", Version: 2, Status: "active",
		Doc:       []byte(`{"context":{"lastRun":{"capability":"bench.noop","ok":true,"output":{}}},"input":{"capability":"bench.noop"},"evidence":null}`),
		CreatedAt: at, UpdatedAt: at}
	events := make([]store.Event, 3)
	for i := range events {
		events[i] = store.Event{Tenant: "dev", TraceID: trace, Type: "request.allowed", At: at.Add(time.Duration(i)),
			Subject: "dev-agent", ClientID: "dev", Operation: "startMission", Tool: "aura_start_mission", Outcome: "allowed",
			RequestID: "req-0123456789", Attributes: map[string]any{"status": 200}}
	}
	if err := s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertMission(ctx, m); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, events)
	}); err != nil {
		b.Fatal(err)
	}
	b.Run("mission", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := gatewaytest.ProcessCPU()
		for b.Loop() {
			if err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
				_, err := tx.GetMissionByRunID(ctx, "dev", "wf_bench")
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(gatewaytest.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("trace", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := gatewaytest.ProcessCPU()
		for b.Loop() {
			if err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
				evs, err := tx.TraceEvents(ctx, "dev", trace, 1000)
				if err == nil && len(evs) != len(events) {
					err = fmt.Errorf("%d events, want %d", len(evs), len(events))
				}
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(gatewaytest.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}
