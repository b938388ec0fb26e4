package sqlitestore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// TestMigrateEventsCallTrace applies the migrations before 0012 to a file,
// stores events as they were recorded then (the caller's trace only as the
// engine events' callTraceId attribute), then opens the store: migration
// 0012 finds them by that trace, within their tenant, and TraceEvents
// reads a caller's trace through the partial index events_call_trace.
func TestMigrateEventsCallTrace(t *testing.T) {
	ctx := context.Background()
	path, db := migratedBefore(ctx, t, "0012")
	for i, row := range []struct{ tenant, trace, typ, attrs string }{
		{"a", "req-1", "workflow.started", `{"callTraceId":"mine","definitionId":"d"}`},
		{"a", "req-1", "request.allowed", `null`},
		{"a", "req-2", "transition.fired", `{"callTraceId":"other"}`},
		{"b", "req-3", "workflow.started", `{"callTraceId":"mine"}`},
		{"a", "req-4", "odd", `{"callTraceId":7}`},
	} {
		if _, err := db.ExecContext(ctx, `INSERT INTO events (tenant, trace_id, type, at, subject, client_id, operation, tool, run_id, workflow_id, outcome, code, request_id, attributes)
			VALUES (?, ?, ?, ?, 'alice', '', '', '', '', '', 'allowed', '', '', ?)`, row.tenant, row.trace, row.typ, time.Unix(int64(i+1), 0).UnixNano(), row.attrs); err != nil {
			t.Fatal(err)
		}
	}
	s := openMigrated(ctx, t, path, db)
	err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		for _, tc := range []struct {
			tenant, trace string
			want          []string
		}{
			{"a", "mine", []string{"workflow.started"}},
			{"a", "req-1", []string{"workflow.started", "request.allowed"}},
			{"a", "other", []string{"transition.fired"}},
			{"b", "mine", []string{"workflow.started"}},
			{"a", "7", nil},
		} {
			got, err := tx.TraceEvents(ctx, tc.tenant, tc.trace, 100)
			if err != nil {
				return err
			}
			var types []string
			for _, e := range got {
				types = append(types, e.Type)
			}
			if !slices.Equal(types, tc.want) {
				t.Errorf("TraceEvents(%s, %s) = %v, want %v", tc.tenant, tc.trace, types, tc.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	joined := queryPlan(ctx, t, s, `SELECT seq FROM events WHERE tenant = ? AND trace_id = ?
		UNION SELECT seq FROM events WHERE tenant = ? AND call_trace_id = ? AND call_trace_id <> '' ORDER BY seq`, "a", "mine", "a", "mine")
	if !strings.Contains(joined, "USING COVERING INDEX events_call_trace") && !strings.Contains(joined, "USING INDEX events_call_trace") ||
		!strings.Contains(joined, "events_trace") || strings.Contains(joined, "SCAN events") {
		t.Errorf("a trace read does not use both indexes:\n%s", joined)
	}
}
