package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/redact"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
)

// TestExportAndSweepAudit: Export writes the sink's lines (redacted
// alike) with their seq, filtered, across pages and within a limit;
// Sweep deletes everything recorded before its time, in batches, and
// nothing after; a zero retention sweeps nothing.
func TestExportAndSweepAudit(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recent := old.Add(100 * 24 * time.Hour)
	var events []store.Event
	for i := range auditSweepBatch + 5 {
		events = append(events, store.Event{Tenant: "acme", TraceID: fmt.Sprintf("t%d", i), Type: "old.read", At: old.Add(time.Duration(i) * time.Second), Outcome: "allowed"})
	}
	events = append(events,
		store.Event{Tenant: "acme", TraceID: "tr", Type: "recent.call", At: recent, Outcome: "allowed", Subject: "alice", ClientID: "cli",
			Attributes: map[string]any{"apiToken": "s3cret", "count": 2}},
		store.Event{Tenant: "other", TraceID: "tr2", Type: "recent.call", At: recent, Outcome: "refused", Code: "FORBIDDEN"})
	if err := st.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}

	lines := func(f store.EventFilter, limit int) []SinkLine {
		t.Helper()
		var buf bytes.Buffer
		n, err := Export(ctx, st, f, limit, &buf)
		if err != nil {
			t.Fatal(err)
		}
		var out []SinkLine
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			var l SinkLine
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			out = append(out, l)
		}
		if n != len(out) {
			t.Errorf("Export reported %d events, wrote %d lines", n, len(out))
		}
		return out
	}
	if all := lines(store.EventFilter{}, 0); len(all) != len(events) || all[0].Seq == 0 || all[len(all)-1].Seq <= all[0].Seq {
		t.Errorf("export of everything: %d lines (want %d), seqs %d..%d", len(all), len(events), all[0].Seq, all[len(all)-1].Seq)
	}
	if some := lines(store.EventFilter{}, 7); len(some) != 7 {
		t.Errorf("limit 7: %d lines", len(some))
	}
	got := lines(store.EventFilter{Tenant: "acme", Types: []string{"recent.call"}}, 0)
	if len(got) != 1 {
		t.Fatalf("acme's recent.call: %+v", got)
	}
	want := sinkLine(events[len(events)-2])
	want.Seq = got[0].Seq
	if gb, _ := json.Marshal(got[0]); string(gb) != string(must(json.Marshal(want))) {
		t.Errorf("exported line %s, want the sink's %s", gb, must(json.Marshal(want)))
	}
	if got[0].Attributes["apiToken"] != redact.Redacted || got[0].Tenant != "acme" || got[0].ClientID != "cli" {
		t.Errorf("exported line not redacted or not whole: %+v", got[0])
	}

	n, err := Sweep(ctx, st, recent)
	if err != nil || n != auditSweepBatch+5 {
		t.Errorf("Sweep: %d, %v; want %d (more than one batch)", n, err, auditSweepBatch+5)
	}
	if left := lines(store.EventFilter{}, 0); len(left) != 2 || left[0].Type != "recent.call" {
		t.Errorf("after the sweep: %+v", left)
	}
	if _, ok := RetentionJob(st, 0); ok {
		t.Error("a zero retention has a job: it keeps every event")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
