package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// BenchmarkAppendEvents appends the audit trail's batches: 256 events of
// reads in one transaction, as the Auditor writes them under load (NoSync:
// the statements' cost, not the disk's). One op is one event.
func BenchmarkAppendEvents(b *testing.B) {
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "praxa.db"), &sqlitestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batch := make([]store.Event, 256)
	at := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		for j := range batch {
			batch[j] = store.Event{Tenant: "dev", TraceID: "0123456789abcdef0123456789abcdef", Type: "request.allowed",
				At: at.Add(time.Duration(i + j)), Subject: "dev-agent", ClientID: "dev", Operation: "getMission", Tool: "aura_get_mission",
				Outcome: "allowed", RequestID: "req-0123456789", Attributes: map[string]any{"status": 200}}
		}
		if err := s.AppendEvents(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}
