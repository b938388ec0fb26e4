package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/praxa/praxa/gateway/periodic"
	"github.com/praxa/praxa/gateway/store"
)

// exportPage is how many events Export reads in one transaction.
const exportPage = 1000

// Export writes the store's audit events that match f to w as JSON
// lines (SinkLine with its seq: what a sink writes, redacted the
// same way), in append order, at most limit of them (0: all), reading a
// page of events a transaction. It returns how many it wrote. Events
// appended while it runs are included when they come after the page being
// read; praxa audit export --until bounds the export to a past instant.
func Export(ctx context.Context, st store.Store, f store.EventFilter, limit int, w io.Writer) (int, error) {
	n := 0
	for limit == 0 || n < limit {
		page := exportPage
		if limit > 0 {
			page = min(page, limit-n)
		}
		var events []store.Event
		if err := st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			var err error
			events, err = tx.ExportEvents(ctx, f, page)
			return err
		}); err != nil {
			return n, fmt.Errorf("audit export: %w", err)
		}
		for _, ev := range events {
			line := sinkLine(ev)
			line.Seq = ev.Seq
			b, err := json.Marshal(line)
			if err != nil {
				return n, fmt.Errorf("audit export: event %d: %w", ev.Seq, err)
			}
			if _, err := w.Write(append(b, '\n')); err != nil {
				return n, fmt.Errorf("audit export: %w", err)
			}
			n++
		}
		if len(events) < page {
			break
		}
		f.AfterSeq = events[len(events)-1].Seq
	}
	return n, nil
}

// auditSweepBatch is how many events one retention transaction deletes at
// most, so that the sweep never holds the writer long.
const auditSweepBatch = 1000

// Sweep deletes every audit event recorded before before, in
// batches of auditSweepBatch a transaction, and returns how many went.
func Sweep(ctx context.Context, st store.Store, before time.Time) (int, error) {
	total := 0
	for {
		var n int
		if err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			n, err = tx.DeleteEventsBefore(ctx, before, auditSweepBatch)
			return err
		}); err != nil {
			return total, fmt.Errorf("audit retention: %w", err)
		}
		total += n
		if n < auditSweepBatch {
			return total, nil
		}
	}
}

// auditSweepEvery is how often the audit retention job sweeps.
const auditSweepEvery = 10 * time.Minute

// RetentionJob applies audit.retention: at start and every
// auditSweepEvery, it deletes the events older than retention. A zero
// retention keeps every event: there is no job (false).
func RetentionJob(st store.Store, retention time.Duration) (periodic.Job, bool) {
	if retention <= 0 {
		return periodic.Job{}, false
	}
	return periodic.Job{Name: "audit retention sweep", Every: periodic.Fixed(auditSweepEvery), AtStart: true,
		Done: "audit events past the retention deleted", DoneKey: "deleted",
		Round: func(ctx context.Context) (int, bool, error) {
			n, err := Sweep(ctx, st, time.Now().Add(-retention))
			return n, false, err
		}}, true
}
