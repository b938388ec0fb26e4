package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// An Sink receives a copy of every audit event the store commits
// (audit.sink in praxec.yaml): the store stays the record aura_get_trace
// reads, the sink is where an operator ships the events from. Each event
// reaches the sink only once the transaction holding it has committed,
// so a sink never shows a mutation that did not happen, and it is
// redacted exactly as aura_get_trace shows it (op.TraceEventOf): a secret
// never reaches a sink.
//
// Each event is one line of JSON (SinkLine) written with one write
// call, without buffering in the process. On a file opened for appending
// that makes each line atomic with respect to other appenders, and a
// crash of the gateway loses no line it wrote; the file is not synced on
// every write (the store is the durable record, synced on every commit),
// so a crash of the operating system may lose the last lines. Close syncs
// the file.
type Sink struct {
	mu      sync.Mutex
	w       io.Writer
	file    *os.File // nil when w is not a file the sink owns
	log     *slog.Logger
	written atomic.Int64
	failed  atomic.Int64
}

// NewSink returns a sink writing to w (the standard error, say); the
// caller keeps w open for as long as the sink is used.
func NewSink(w io.Writer, log *slog.Logger) *Sink {
	if log == nil {
		log = slog.Default()
	}
	return &Sink{w: w, log: log}
}

// OpenSink opens path for appending (creating it, readable by its
// owner only) and returns a sink writing to it; Close closes it.
func OpenSink(path string, log *slog.Logger) (*Sink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit sink: %w", err)
	}
	s := NewSink(f, log)
	s.file = f
	return s, nil
}

// SinkLine is one line of an audit sink, and of praxa audit export:
// the event as aura_get_trace shows it (same members, same redaction),
// with the tenant, the trace and the client it belongs to. A sink's line
// has no seq (the store assigns it on append, after the sink was handed
// the event); an export's has the stored one, which orders the export.
type SinkLine struct {
	Seq        int64          `json:"seq,omitempty"`
	At         string         `json:"at"`
	Type       string         `json:"type"`
	Outcome    string         `json:"outcome"`
	Code       string         `json:"code,omitempty"`
	Tenant     string         `json:"tenant,omitempty"`
	TraceID    string         `json:"traceId,omitempty"`
	Subject    string         `json:"subject,omitempty"`
	ClientID   string         `json:"clientId,omitempty"`
	Operation  string         `json:"operation,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	RunID      string         `json:"runId,omitempty"`
	WorkflowID string         `json:"workflowId,omitempty"`
	RequestID  string         `json:"requestId,omitempty"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// sinkLine renders ev as a sink shows it.
func sinkLine(ev store.Event) SinkLine {
	t := op.TraceEventOf(ev)
	return SinkLine{At: t.At, Type: t.Type, Outcome: t.Outcome, Code: t.Code, Tenant: ev.Tenant, TraceID: ev.TraceID,
		Subject: t.Subject, ClientID: ev.ClientID, Operation: t.Operation, Tool: t.Tool, RunID: t.RunID, WorkflowID: t.WorkflowID,
		RequestID: t.RequestID, Attributes: t.Attributes}
}

// write writes the committed events, one line each. A failed write is
// logged and counted, never returned: the events are committed already.
func (s *Sink) write(events []store.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range events {
		b, err := json.Marshal(sinkLine(ev))
		if err == nil {
			_, err = s.w.Write(append(b, '\n'))
		}
		if err != nil {
			if n := s.failed.Add(1); n == 1 || n%1000 == 0 {
				s.log.Error("audit sink write failed; the event is in the store", "type", ev.Type, "failed", n, "err", err)
			}
			continue
		}
		s.written.Add(1)
	}
}

// Failed reports how many events the sink could not write.
func (s *Sink) Failed() int64 { return s.failed.Load() }

// counts reports the events written and those that could not be.
func (s *Sink) counts() (delivered, dropped int64) { return s.written.Load(), s.failed.Load() }

// Close syncs and closes the file the sink opened; a sink on a writer it
// does not own has nothing to close.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	f := s.file
	s.file, s.w = nil, io.Discard
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("audit sink: %w", err)
	}
	return nil
}

// WithSink returns st with every audit event it commits also written
// to sink, after the commit: the events a transaction of Update appends
// (every mutation's own events) once Update has returned nil, and those
// of AppendEvents (the Auditor's batches) once it has. A transaction that
// fails, or whose function returns an error, sends nothing. Closing the
// returned store closes st, then sink.
func WithSink(st store.Store, sink *Sink) store.Store {
	return &sinkStore{Store: st, sink: sink, close: sink.Close}
}

// committedSink receives the events a store committed (an Sink, the
// capabilities' Hooks); it must not block for long: the committing
// call waits for it.
type committedSink interface {
	write(events []store.Event)
}

// sinkStore hands the events its store commits to sink, and closes it
// after the store (close nil: the sink's owner closes it).
type sinkStore struct {
	store.Store
	sink  committedSink
	close func() error
}

// Unwrap returns the store the sink wraps (store.BucketsOf looks through
// it for the shared rate buckets).
func (s *sinkStore) Unwrap() store.Store { return s.Store }

func (s *sinkStore) Update(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if is, ok := s.sink.(interface{ idle() bool }); ok && is.idle() {
		// Nothing would take the events (hooks naming no sink): the
		// transaction runs as it is, nothing collected.
		return s.Store.Update(ctx, fn)
	}
	var events []store.Event
	err := s.Store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		// A driver may run fn again (a retried transaction): only the
		// events of the run that commits count.
		events = events[:0]
		return fn(ctx, &sinkTx{Tx: tx, events: &events})
	})
	if err == nil && len(events) > 0 {
		s.sink.write(events)
	}
	return err
}

func (s *sinkStore) AppendEvents(ctx context.Context, events []store.Event) error {
	if err := s.Store.AppendEvents(ctx, events); err != nil {
		return err
	}
	s.sink.write(events)
	return nil
}

func (s *sinkStore) Close() error {
	err := s.Store.Close()
	if s.close == nil {
		return err
	}
	if cerr := s.close(); err == nil {
		err = cerr
	}
	return err
}

// sinkTx collects the events a transaction appends.
type sinkTx struct {
	store.Tx
	events *[]store.Event
}

func (t *sinkTx) AppendEvents(ctx context.Context, events []store.Event) error {
	if err := t.Tx.AppendEvents(ctx, events); err != nil {
		return err
	}
	*t.events = append(*t.events, events...)
	return nil
}
