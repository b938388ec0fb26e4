package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// txn implements store.Tx on one SQLite transaction.
type txn struct {
	q     *sql.Tx
	stmts *stmtCache
}

var _ store.Tx = (*txn)(nil)

// rowErr maps a row mapping error: no rows is store.ErrNotFound, anything
// else gets this driver's prefix and what was being read.
func rowErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return fmt.Errorf("sqlitestore: %s: %w", what, err)
}

func (t *txn) GetIdempotency(ctx context.Context, namespace, key string, now time.Time) (store.IdempotencyRecord, error) {
	rec, err := sqlrow.Idempotency(t.queryRow(ctx, `SELECT `+sqlrow.IdempotencyColumns+`
		FROM idempotency WHERE namespace = ? AND key = ? AND expires_at >= ?`, namespace, key, now.UnixNano()), namespace, key)
	return rec, rowErr("get idempotency", err)
}

func (t *txn) InsertIdempotency(ctx context.Context, rec store.IdempotencyRecord) error {
	header, err := json.Marshal(rec.Header)
	if err != nil {
		return fmt.Errorf("sqlitestore: idempotency header: %w", err)
	}
	body := rec.Body
	if body == nil {
		body = []byte{}
	}
	// An expired record gives way; a live one makes this insert a no-op.
	res, err := t.exec(ctx, `INSERT INTO idempotency
		(namespace, key, operation, fingerprint, status, header, body, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET
			operation = excluded.operation, fingerprint = excluded.fingerprint, status = excluded.status,
			header = excluded.header, body = excluded.body, created_at = excluded.created_at, expires_at = excluded.expires_at
		WHERE idempotency.expires_at < excluded.created_at`,
		rec.Namespace, rec.Key, rec.Operation, rec.Fingerprint, rec.Status, string(header), body,
		sqlrow.Nanos(rec.CreatedAt), sqlrow.Nanos(rec.ExpiresAt))
	if err != nil {
		return fmt.Errorf("sqlitestore: insert idempotency: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlitestore: insert idempotency: %w", err)
	} else if n == 0 {
		return store.ErrExists
	}
	return nil
}

func (t *txn) InsertIntent(ctx context.Context, in store.Intent) error {
	tags, err := json.Marshal(sqlrow.NonNil(in.Tags))
	if err != nil {
		return fmt.Errorf("sqlitestore: intent tags: %w", err)
	}
	res, err := t.exec(ctx, `INSERT INTO intents (tenant, id, subject, text, tags, trace_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		in.Tenant, in.ID, in.Subject, in.Text, string(tags), in.TraceID, sqlrow.Nanos(in.CreatedAt))
	if err != nil {
		return fmt.Errorf("sqlitestore: insert intent: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlitestore: insert intent: %w", err)
	} else if n == 0 {
		return store.ErrExists
	}
	return nil
}

func (t *txn) GetIntent(ctx context.Context, tenant, id string) (store.Intent, error) {
	in, err := sqlrow.Intent(t.queryRow(ctx, `SELECT `+sqlrow.IntentColumns+` FROM intents WHERE tenant = ? AND id = ?`, tenant, id), tenant, id)
	return in, rowErr("get intent", err)
}

func (t *txn) AppendEvents(ctx context.Context, events []store.Event) error {
	for _, e := range events {
		attrs, err := json.Marshal(e.Attributes)
		if err != nil {
			return fmt.Errorf("sqlitestore: event attributes: %w", err)
		}
		if _, err := t.exec(ctx, `INSERT INTO events
			(tenant, trace_id, type, at, subject, client_id, operation, tool, run_id, workflow_id, outcome, code, request_id, attributes)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.Tenant, e.TraceID, e.Type, sqlrow.Nanos(e.At), e.Subject, e.ClientID, e.Operation, e.Tool,
			e.RunID, e.WorkflowID, e.Outcome, e.Code, e.RequestID, string(attrs)); err != nil {
			return fmt.Errorf("sqlitestore: append event: %w", err)
		}
	}
	return nil
}

func (t *txn) TraceEvents(ctx context.Context, tenant, traceID string, limit int) ([]store.Event, error) {
	rows, err := t.query(ctx, `SELECT `+sqlrow.EventColumns+`
		FROM events WHERE tenant = ? AND trace_id = ? ORDER BY at, seq LIMIT `+limitSQL(limit), tenant, traceID)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: trace events: %w", err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		e, err := sqlrow.Event(rows, tenant, traceID)
		if err != nil {
			return nil, rowErr("trace events", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: trace events: %w", err)
	}
	return out, nil
}

func (t *txn) Revoke(ctx context.Context, r store.Revocation) error {
	if _, err := t.exec(ctx, `INSERT INTO revocations (`+sqlrow.RevocationColumns+`)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (jti) DO NOTHING`,
		r.JTI, sqlrow.Nanos(r.RevokedAt), sqlrow.Nanos(r.ExpiresAt), r.By, r.Reason); err != nil {
		return fmt.Errorf("sqlitestore: revoke: %w", err)
	}
	return nil
}

func (t *txn) Revoked(ctx context.Context, jti string) (bool, error) {
	var n int
	if err := t.queryRow(ctx, `SELECT count(*) FROM revocations WHERE jti = ?`, jti).Scan(&n); err != nil {
		return false, fmt.Errorf("sqlitestore: revoked: %w", err)
	}
	return n > 0, nil
}

func (t *txn) revokedSince(ctx context.Context, since time.Time) ([]store.Revocation, error) {
	rows, err := t.query(ctx, `SELECT `+sqlrow.RevocationColumns+` FROM revocations
		WHERE revoked_at >= ? ORDER BY revoked_at, jti`, sqlrow.Nanos(since))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: revocations: %w", err)
	}
	defer rows.Close()
	var out []store.Revocation
	for rows.Next() {
		r, err := sqlrow.Revocation(rows)
		if err != nil {
			return nil, rowErr("revocations", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// limitSQL renders a LIMIT value into the statement text: with a bound
// parameter SQLite compiles the statement a second time on every run, and
// the statement cache keeps one prepared statement per distinct limit.
func limitSQL(n int) string {
	if n < 0 {
		n = 0
	}
	return strconv.Itoa(n)
}
