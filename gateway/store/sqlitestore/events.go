package sqlitestore

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
	"github.com/praxa/praxa/gateway/store/internal/sqltx"
)

// AppendEvents implements store.Tx. It inserts in the chunks sqltx's
// AppendEvents uses (sqltx.EventChunk), but a chunk whose events agree on
// every column but their trace, time, request and attributes (the audit
// trail's batches of one caller's reads) goes in with sharedEventInserts,
// which binds those common columns once for the whole chunk: in the
// pure-Go SQLite every bound argument is two calls through SQLite's API
// mutex (bind, and unbind after the statement) and a text argument a C
// copy besides, and an event binds fifteen. What is stored is the same
// either way; any other chunk goes through sqltx's INSERT.
func (t *txn) AppendEvents(ctx context.Context, events []store.Event) error {
	for len(events) > 0 {
		n := sqltx.EventChunk(len(events))
		chunk := events[:n]
		events = events[n:]
		if n == 1 || !sharesColumns(chunk) {
			if err := t.Tx.AppendEvents(ctx, chunk); err != nil {
				return err
			}
			continue
		}
		e := &chunk[0]
		args := make([]any, 0, sharedColumns+n*ownColumns)
		args = append(args, e.Tenant, e.Type, e.Subject, e.ClientID, e.Operation, e.Tool, e.RunID, e.WorkflowID,
			e.Outcome, e.Code, e.CallTraceID)
		for i := range chunk {
			attrs, err := sqltx.EventAttributes(chunk[i].Attributes)
			if err != nil {
				return fmt.Errorf("sqlitestore: event attributes: %w", err)
			}
			args = append(args, chunk[i].TraceID, sqlrow.Nanos(chunk[i].At), chunk[i].RequestID, attrs)
		}
		if _, err := t.exec(ctx, sharedEventInserts[n], args...); err != nil {
			return fmt.Errorf("sqlitestore: append event: %w", err)
		}
	}
	return nil
}

// sharesColumns reports whether the events agree on every column
// sharedEventInserts binds once.
func sharesColumns(events []store.Event) bool {
	a := &events[0]
	for i := 1; i < len(events); i++ {
		b := &events[i]
		if a.Tenant != b.Tenant || a.Type != b.Type || a.Subject != b.Subject || a.ClientID != b.ClientID ||
			a.Operation != b.Operation || a.Tool != b.Tool || a.RunID != b.RunID || a.WorkflowID != b.WorkflowID ||
			a.Outcome != b.Outcome || a.Code != b.Code || a.CallTraceID != b.CallTraceID {
			return false
		}
	}
	return true
}

// sharedColumns is the number of columns sharedEventInserts binds once
// (?1 to ?11), ownColumns the number each row binds.
const (
	sharedColumns = 11
	ownColumns    = 4
)

// sharedEventInserts holds, for each chunk size of sqltx.EventChunk above
// one, the INSERT of that many rows whose tenant, type, subject,
// client_id, operation, tool, run_id, workflow_id, outcome, code and
// call_trace_id are ?1 to ?11, and whose trace_id, at, request_id and
// attributes are the row's own four parameters after those.
var sharedEventInserts = func() map[int]string {
	m := map[int]string{}
	// The chunk sizes, largest first, down to the single row.
	for n := sqltx.EventChunk(math.MaxInt); n > 1; n = sqltx.EventChunk(n - 1) {
		rows := make([]string, n)
		for i := range rows {
			p := func(k int) string { return "?" + strconv.Itoa(sharedColumns+i*ownColumns+k) }
			rows[i] = "(?1, " + p(1) + ", ?2, " + p(2) + ", ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, " + p(3) + ", " + p(4) + ", ?11)"
		}
		m[n] = `INSERT INTO events
			(tenant, trace_id, type, at, subject, client_id, operation, tool, run_id, workflow_id, outcome, code, request_id, attributes, call_trace_id)
			VALUES ` + strings.Join(rows, ", ")
	}
	return m
}()
