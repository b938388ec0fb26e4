package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/redact"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// The secrets the sink test's events carry under sensitive names; none
// may reach the sink.
const (
	sinkSecret1 = "sk-live-7f3a9c1e55"
	sinkSecret2 = "hunter2-pw-0042"
)

// sinkFixture is an Auditor on a real SQLite file whose store sends every
// committed audit event to sink.
func sinkFixture(t *testing.T, sink *Sink) (*Auditor, store.Store) {
	t.Helper()
	ctx := context.Background()
	raw, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "praxa.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	st := WithSink(raw, sink)
	a := NewAuditor(st, nil)
	t.Cleanup(func() {
		a.Close(context.Background())
		st.Close()
	})
	return a, st
}

// sinkTraffic makes the audit events the sink test expects, all in trace:
// a mutation (a revocation, its event written in its own transaction), a
// read's event through the Auditor's batches, and a mutation whose event
// carries secrets; and one transaction that fails, whose event must never
// reach the sink.
func sinkTraffic(t *testing.T, a *Auditor, st store.Store, trace string) {
	t.Helper()
	ctx := context.Background()
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{{Type: "token.revoked", At: time.Now(), Tenant: "acme", Subject: "alice", ClientID: "cli",
			RequestID: "req-1", TraceID: trace, Outcome: "allowed", Attributes: map[string]any{"jti": "jti-1", "reason": "test"}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Record(store.Event{Type: "trace.read", At: time.Now(), Tenant: "acme", TraceID: trace, Subject: "alice", Outcome: "allowed",
		Attributes: map[string]any{"authorization": "Bearer " + sinkSecret1}})
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	err = st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{{Type: "connection.called", At: time.Now(), Tenant: "acme", TraceID: trace, Outcome: "allowed",
			Attributes: map[string]any{"apiKey": sinkSecret1, "upstream": map[string]any{"password": sinkSecret2, "host": "api.example.com"}}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused after appending")
	err = st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.AppendEvents(ctx, []store.Event{{Type: "never.committed", At: time.Now(), Tenant: "acme", TraceID: trace, Outcome: "allowed"}}); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("the failing transaction returned %v", err)
	}
}

// TestAuditSinkFile: a file sink receives every committed event of the
// trace, mutations and reads, once each, as aura_get_trace shows it (the
// same redaction) with the tenant and trace; the secrets do not appear in
// the file, the event of a transaction that failed does not either, and
// the file is appended to, not truncated, when the sink is opened again.
func TestAuditSinkFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"earlier.line"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sink, err := OpenSink(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, st := sinkFixture(t, sink)
	sinkTraffic(t, s, st, sinkTrace)
	stored := traceEvents(t, st.(*sinkStore).Store)
	if err := st.Close(); err != nil { // closes the sink: synced
		t.Fatal(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{sinkSecret1, sinkSecret2} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the sink file holds the secret %q:\n%s", secret, data)
		}
	}
	lines := map[string]SinkLine{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	first := true
	for sc.Scan() {
		if first {
			if sc.Text() != `{"type":"earlier.line"}` {
				t.Fatalf("the file was not appended to: first line %s", sc.Text())
			}
			first = false
			continue
		}
		var l SinkLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if _, dup := lines[l.Type]; dup {
			t.Errorf("event %s written twice", l.Type)
		}
		lines[l.Type] = l
	}
	want := []string{"token.revoked", "trace.read", "connection.called"}
	if len(lines) != len(want) {
		t.Errorf("sink lines %v, want %v", keys(lines), want)
	}

	// Each line is the event as aura_get_trace shows it.
	for _, ev := range stored {
		l, ok := lines[ev.Type]
		if !ok {
			t.Errorf("the store holds %s, the sink does not", ev.Type)
			continue
		}
		tr := op.TraceEventOf(ev)
		if l.At != tr.At || l.Outcome != tr.Outcome || l.Subject != tr.Subject || l.RequestID != tr.RequestID ||
			l.Tenant != "acme" || l.TraceID != sinkTrace || !reflect.DeepEqual(jsonRound(t, l.Attributes), jsonRound(t, tr.Attributes)) {
			t.Errorf("%s: sink line %+v, trace shows %+v", ev.Type, l, tr)
		}
	}
	if got := lines["connection.called"].Attributes; got["apiKey"] != redact.Redacted || got["upstream"].(map[string]any)["password"] != redact.Redacted ||
		got["upstream"].(map[string]any)["host"] != "api.example.com" {
		t.Errorf("connection.called attributes %v, want apiKey and upstream.password redacted, host kept", got)
	}
}

// sinkTrace is the trace the sink tests' events belong to.
const sinkTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

// traceEvents reads back from st the events of sinkTrace, in their order.
func traceEvents(t *testing.T, st store.Store) []store.Event {
	t.Helper()
	var out []store.Event
	err := st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		out, err = tx.TraceEvents(ctx, "acme", sinkTrace, 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func jsonRound(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// committedWriter is a sink's writer that checks, for every line it is
// given, that the store already holds the event: the sink writes only
// after the commit.
type committedWriter struct {
	t     *testing.T
	st    func() store.Store
	mu    sync.Mutex
	lines []string
}

func (w *committedWriter) Write(b []byte) (int, error) {
	var l SinkLine
	if err := json.Unmarshal(b, &l); err != nil {
		w.t.Errorf("sink line %q: %v", b, err)
		return len(b), nil
	}
	var events []store.Event
	err := w.st().View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		events, err = tx.TraceEvents(ctx, l.Tenant, l.TraceID, 100)
		return err
	})
	if err != nil {
		w.t.Errorf("reading the store while the sink writes %s: %v", l.Type, err)
	}
	found := false
	for _, ev := range events {
		found = found || ev.Type == l.Type
	}
	if !found {
		w.t.Errorf("the sink wrote %s before the store held it", l.Type)
	}
	w.mu.Lock()
	w.lines = append(w.lines, l.Type)
	w.mu.Unlock()
	return len(b), nil
}

// TestAuditSinkAfterCommit: when the sink writes an event, the store
// already holds it, for a mutation's own transaction and for the
// Auditor's batches alike; an event whose transaction failed never
// reaches the sink.
func TestAuditSinkAfterCommit(t *testing.T) {
	var raw store.Store
	w := &committedWriter{t: t, st: func() store.Store { return raw }}
	s, st := sinkFixture(t, NewSink(w, nil))
	raw = st.(*sinkStore).Store
	sinkTraffic(t, s, st, sinkTrace)
	w.mu.Lock()
	defer w.mu.Unlock()
	if want := []string{"token.revoked", "trace.read", "connection.called"}; !reflect.DeepEqual(w.lines, want) {
		t.Errorf("sink lines %v, want %v", w.lines, want)
	}
}
