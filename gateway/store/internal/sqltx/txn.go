package sqltx

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/praxa/praxa/gateway/plainjson"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// GetIdempotency implements store.ReadTx.
func (t *Tx) GetIdempotency(ctx context.Context, namespace, key string, now time.Time) (store.IdempotencyRecord, error) {
	rec, err := sqlrow.Idempotency(t.queryRow(ctx, `SELECT `+sqlrow.IdempotencyColumns+`
		FROM idempotency WHERE namespace = ? AND key = ? AND forget_at >= ?`, namespace, key, now.UnixNano()), namespace, key)
	if err != nil {
		return rec, t.rowErr("get idempotency", err)
	}
	return sqlrow.Tombstone(rec, now), nil
}

// InsertIdempotency implements store.Tx.
func (t *Tx) InsertIdempotency(ctx context.Context, rec store.IdempotencyRecord) error {
	header, err := json.Marshal(rec.Header)
	if err != nil {
		return t.wrap("idempotency header", err)
	}
	// A record forgotten (past its tombstone) gives way; a live one or a
	// tombstone makes this insert a no-op.
	return t.insert(ctx, "insert idempotency", `INSERT INTO idempotency
		(namespace, key, operation, fingerprint, status, header, body, created_at, expires_at, object, forget_at, sweep_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET
			operation = excluded.operation, fingerprint = excluded.fingerprint, status = excluded.status,
			header = excluded.header, body = excluded.body, created_at = excluded.created_at, expires_at = excluded.expires_at,
			object = excluded.object, forget_at = excluded.forget_at, sweep_at = excluded.sweep_at
		WHERE idempotency.forget_at < excluded.created_at`,
		rec.Namespace, rec.Key, rec.Operation, rec.Fingerprint, rec.Status, string(header), sqlrow.NonNilBytes(rec.Body),
		sqlrow.Nanos(rec.CreatedAt), sqlrow.Nanos(rec.ExpiresAt), rec.Object, sqlrow.ForgetAt(rec), sqlrow.Nanos(rec.ExpiresAt))
}

// InsertIntent implements store.Tx.
func (t *Tx) InsertIntent(ctx context.Context, in store.Intent) error {
	tags, err := json.Marshal(sqlrow.NonNil(in.Tags))
	if err != nil {
		return t.wrap("intent tags", err)
	}
	return t.insert(ctx, "insert intent", `INSERT INTO intents (tenant, id, subject, text, tags, trace_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		in.Tenant, in.ID, in.Subject, in.Text, string(tags), in.TraceID, sqlrow.Nanos(in.CreatedAt))
}

// GetIntent implements store.ReadTx.
func (t *Tx) GetIntent(ctx context.Context, tenant, id string) (store.Intent, error) {
	in, err := sqlrow.Intent(t.queryRow(ctx, `SELECT `+sqlrow.IntentColumns+` FROM intents WHERE tenant = ? AND id = ?`, tenant, id), tenant, id)
	return in, t.rowErr("get intent", err)
}

// AppendEvents implements store.Tx. Events go in with one INSERT of many
// rows where there are many (the audit trail's batches): a statement costs
// more to run than a row to insert. Rows are inserted in the order of their
// VALUES, so seq keeps the order of events.
func (t *Tx) AppendEvents(ctx context.Context, events []store.Event) error {
	for len(events) > 0 {
		n := EventChunk(len(events))
		args := make([]any, 0, n*eventColumns)
		for _, e := range events[:n] {
			attrs, err := EventAttributes(e.Attributes)
			if err != nil {
				return t.wrap("event attributes", err)
			}
			args = append(args, e.Tenant, e.TraceID, e.Type, sqlrow.Nanos(e.At), e.Subject, e.ClientID, e.Operation, e.Tool,
				e.RunID, e.WorkflowID, e.Outcome, e.Code, e.RequestID, attrs, e.CallTraceID)
		}
		if err := t.put(ctx, "append event", eventInserts[n], args...); err != nil {
			return err
		}
		events = events[n:]
	}
	return nil
}

// EventAttributes is an event's attributes as the attributes column stores
// them: their JSON, as text.
func EventAttributes(attrs map[string]any) (string, error) {
	b, err := plainjson.Marshal(attrs) // json.Marshal's bytes
	return string(b), err
}

// eventColumns is the number of columns AppendEvents writes.
const eventColumns = 15

// eventChunks are the numbers of rows one INSERT of AppendEvents carries,
// largest first; 1 ends the list. Few sizes keep few statements prepared.
var eventChunks = []int{32, 8, 4, 2, 1}

// EventChunk is how many of n events AppendEvents inserts with its next
// statement: the largest of eventChunks no greater than n.
func EventChunk(n int) int {
	for _, size := range eventChunks {
		if n >= size {
			return size
		}
	}
	return 1
}

// eventInserts holds the INSERT of each size of eventChunks.
var eventInserts = func() map[int]string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", eventColumns), ", ") + ")"
	m := map[int]string{}
	for _, n := range eventChunks {
		m[n] = `INSERT INTO events
			(tenant, trace_id, type, at, subject, client_id, operation, tool, run_id, workflow_id, outcome, code, request_id, attributes, call_trace_id)
			VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	}
	return m
}()

// TraceEvents implements store.ReadTx: the events whose trace_id is the
// trace (index events_trace) and those whose call_trace_id is (the partial
// index events_call_trace, which the second branch's non-empty condition
// lets both databases use); UNION drops an event both branches find.
func (t *Tx) TraceEvents(ctx context.Context, tenant, traceID string, limit int) ([]store.Event, error) {
	return list(ctx, t, "trace events", "trace events", func(row sqlrow.Scanner) (store.Event, error) {
		return sqlrow.Event(row, tenant)
	}, `SELECT `+sqlrow.EventColumns+` FROM events WHERE tenant = ? AND trace_id = ?
		UNION
		SELECT `+sqlrow.EventColumns+` FROM events WHERE tenant = ? AND call_trace_id = ? AND call_trace_id <> ''
		ORDER BY at, seq LIMIT `, limit, tenant, traceID, tenant, traceID)
}

// Revoke implements store.Tx.
func (t *Tx) Revoke(ctx context.Context, r store.Revocation) error {
	return t.put(ctx, "revoke", `INSERT INTO revocations (`+sqlrow.RevocationColumns+`)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (jti) DO NOTHING`,
		r.JTI, sqlrow.Nanos(r.RevokedAt), sqlrow.Nanos(r.ExpiresAt), r.By, r.Reason)
}

// Revoked implements store.ReadTx.
func (t *Tx) Revoked(ctx context.Context, jti string) (bool, error) {
	var n int
	if err := t.queryRow(ctx, `SELECT count(*) FROM revocations WHERE jti = ?`, jti).Scan(&n); err != nil {
		return false, t.wrap("revoked", err)
	}
	return n > 0, nil
}

// RevokedSince lists the revocations at or after since, for the drivers'
// store.Store.RevokedSince.
func (t *Tx) RevokedSince(ctx context.Context, since time.Time) ([]store.Revocation, error) {
	return list(ctx, t, "revocations", "revocations", sqlrow.Revocation, `SELECT `+sqlrow.RevocationColumns+` FROM revocations
		WHERE revoked_at >= ? ORDER BY revoked_at, jti`, unlimited, sqlrow.Nanos(since))
}

// SweepExpired turns the idempotency records that expired before at into
// their tombstones (the answer dropped: status 0, no header, an empty
// body), deletes the rows forgotten before at (forget_at: the end of the
// tombstone, or the expiry of a record without one) and the resolved start
// leases kept as long as their key's record (StartLease.ExpiresAt) that
// expired with them, and answers how many rows changed or went: the work
// of store.Store's SweepIdempotency, which each driver runs in a
// transaction of its own. Both idempotency statements read the range of
// idempotency_sweep before at: sweep_at is expires_at until the answer is
// dropped, then forget_at, so a sweep touches only the rows due.
func (t *Tx) SweepExpired(ctx context.Context, at time.Time) (int, error) {
	now := at.UnixNano()
	stripped, err := t.exec(ctx, `UPDATE idempotency SET status = 0, header = 'null', body = ?, sweep_at = forget_at
		WHERE sweep_at < ? AND status <> 0 AND forget_at >= ?`, []byte{}, now, now)
	if err != nil {
		return 0, t.wrap("sweep idempotency records into tombstones", err)
	}
	n, err := t.exec(ctx, `DELETE FROM idempotency WHERE sweep_at < ?`, now)
	if err != nil {
		return 0, t.wrap("sweep idempotency records", err)
	}
	m, err := t.exec(ctx, `DELETE FROM start_leases WHERE expires_at > 0 AND expires_at < ? AND status <> 0`, now)
	if err != nil {
		return 0, t.wrap("sweep start leases", err)
	}
	return int(stripped + n + m), nil
}

// ExportEvents implements store.ReadTx: the events between f.AfterSeq
// and f.BeforeSeq that match the filter, by seq (the primary key; newest
// first with f.Newest), of one tenant or all.
func (t *Tx) ExportEvents(ctx context.Context, f store.EventFilter, limit int) ([]store.Event, error) {
	where, args := []string{"seq > ?"}, []any{f.AfterSeq}
	if f.BeforeSeq > 0 {
		where, args = append(where, "seq < ?"), append(args, f.BeforeSeq)
	}
	if f.Tenant != "" {
		where, args = append(where, "tenant = ?"), append(args, f.Tenant)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "at >= ?"), append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "at < ?"), append(args, f.Until.UnixNano())
	}
	if len(f.Types) > 0 {
		where = append(where, "type IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(f.Types)), ", ")+")")
		for _, typ := range f.Types {
			args = append(args, typ)
		}
	}
	if f.TraceID != "" {
		where, args = append(where, "(trace_id = ? OR call_trace_id = ?)"), append(args, f.TraceID, f.TraceID)
	}
	if f.RunID != "" {
		where, args = append(where, "run_id = ?"), append(args, f.RunID)
	}
	if f.Subject != "" {
		where, args = append(where, "subject = ?"), append(args, f.Subject)
	}
	if f.Outcome != "" {
		where, args = append(where, "outcome = ?"), append(args, f.Outcome)
	}
	if f.Capability != "" {
		where, args = append(where, "(tool = ? OR "+t.Dialect.EventCapability+" = ?)"), append(args, f.Capability, f.Capability)
	}
	order := "seq"
	if f.Newest {
		order = "seq DESC"
	}
	return list(ctx, t, "export events", "export events", sqlrow.TenantEvent,
		`SELECT tenant, `+sqlrow.EventColumns+` FROM events WHERE `+strings.Join(where, " AND ")+` ORDER BY `+order+` LIMIT `, limit, args...)
}

// DeleteEventsBefore implements store.Tx: the oldest events (by seq)
// recorded before before, limit at most, through the index events_at.
func (t *Tx) DeleteEventsBefore(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := t.exec(ctx, `DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE at < ? ORDER BY seq LIMIT `+
		strconv.Itoa(max(limit, 0))+`)`, before.UnixNano())
	if err != nil {
		return 0, t.wrap("delete events", err)
	}
	return int(n), nil
}
