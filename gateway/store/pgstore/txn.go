package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// txn implements store.Tx on one PostgreSQL transaction.
type txn struct {
	q pgx.Tx
	// write marks an Update transaction (View's are read-only): its reads
	// of a mission row lock the row (SELECT ... FOR UPDATE; see
	// lockMission).
	write bool
}

var _ store.Tx = (*txn)(nil)

// rowErr maps a row mapping error: no rows is store.ErrNotFound, anything
// else gets this driver's prefix and what was being read.
func rowErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	return fmt.Errorf("pgstore: %s: %w", what, err)
}

func (t *txn) GetIdempotency(ctx context.Context, namespace, key string, now time.Time) (store.IdempotencyRecord, error) {
	rec, err := sqlrow.Idempotency(t.q.QueryRow(ctx, `SELECT `+sqlrow.IdempotencyColumns+`
		FROM idempotency WHERE namespace = $1 AND key = $2 AND expires_at >= $3`, namespace, key, now.UnixNano()), namespace, key)
	return rec, rowErr("get idempotency", err)
}

func (t *txn) InsertIdempotency(ctx context.Context, rec store.IdempotencyRecord) error {
	header, err := json.Marshal(rec.Header)
	if err != nil {
		return fmt.Errorf("pgstore: idempotency header: %w", err)
	}
	body := rec.Body
	if body == nil {
		body = []byte{}
	}
	// An expired record gives way; a live one makes this insert a no-op.
	res, err := t.q.Exec(ctx, `INSERT INTO idempotency
		(namespace, key, operation, fingerprint, status, header, body, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (namespace, key) DO UPDATE SET
			operation = excluded.operation, fingerprint = excluded.fingerprint, status = excluded.status,
			header = excluded.header, body = excluded.body, created_at = excluded.created_at, expires_at = excluded.expires_at
		WHERE idempotency.expires_at < excluded.created_at`,
		rec.Namespace, rec.Key, rec.Operation, rec.Fingerprint, rec.Status, string(header), body,
		sqlrow.Nanos(rec.CreatedAt), sqlrow.Nanos(rec.ExpiresAt))
	if err != nil {
		return fmt.Errorf("pgstore: insert idempotency: %w", err)
	}
	if n := res.RowsAffected(); n == 0 {
		return store.ErrExists
	}
	return nil
}

func (t *txn) InsertIntent(ctx context.Context, in store.Intent) error {
	tags, err := json.Marshal(sqlrow.NonNil(in.Tags))
	if err != nil {
		return fmt.Errorf("pgstore: intent tags: %w", err)
	}
	res, err := t.q.Exec(ctx, `INSERT INTO intents (tenant, id, subject, text, tags, trace_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
		in.Tenant, in.ID, in.Subject, in.Text, string(tags), in.TraceID, sqlrow.Nanos(in.CreatedAt))
	if err != nil {
		return fmt.Errorf("pgstore: insert intent: %w", err)
	}
	if n := res.RowsAffected(); n == 0 {
		return store.ErrExists
	}
	return nil
}

func (t *txn) GetIntent(ctx context.Context, tenant, id string) (store.Intent, error) {
	in, err := sqlrow.Intent(t.q.QueryRow(ctx, `SELECT `+sqlrow.IntentColumns+` FROM intents WHERE tenant = $1 AND id = $2`, tenant, id), tenant, id)
	return in, rowErr("get intent", err)
}

func (t *txn) AppendEvents(ctx context.Context, events []store.Event) error {
	for _, e := range events {
		attrs, err := json.Marshal(e.Attributes)
		if err != nil {
			return fmt.Errorf("pgstore: event attributes: %w", err)
		}
		if _, err := t.q.Exec(ctx, `INSERT INTO events
			(tenant, trace_id, type, at, subject, client_id, operation, tool, run_id, workflow_id, outcome, code, request_id, attributes)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			e.Tenant, e.TraceID, e.Type, sqlrow.Nanos(e.At), e.Subject, e.ClientID, e.Operation, e.Tool,
			e.RunID, e.WorkflowID, e.Outcome, e.Code, e.RequestID, string(attrs)); err != nil {
			return fmt.Errorf("pgstore: append event: %w", err)
		}
	}
	return nil
}

func (t *txn) TraceEvents(ctx context.Context, tenant, traceID string, limit int) ([]store.Event, error) {
	rows, err := t.q.Query(ctx, `SELECT `+sqlrow.EventColumns+`
		FROM events WHERE tenant = $1 AND trace_id = $2 ORDER BY at, seq LIMIT $3`, tenant, traceID, limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: trace events: %w", err)
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
		return nil, fmt.Errorf("pgstore: trace events: %w", err)
	}
	return out, nil
}

func (t *txn) Revoke(ctx context.Context, r store.Revocation) error {
	if _, err := t.q.Exec(ctx, `INSERT INTO revocations (`+sqlrow.RevocationColumns+`)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (jti) DO NOTHING`,
		r.JTI, sqlrow.Nanos(r.RevokedAt), sqlrow.Nanos(r.ExpiresAt), r.By, r.Reason); err != nil {
		return fmt.Errorf("pgstore: revoke: %w", err)
	}
	return nil
}

func (t *txn) Revoked(ctx context.Context, jti string) (bool, error) {
	var n int
	if err := t.q.QueryRow(ctx, `SELECT count(*) FROM revocations WHERE jti = $1`, jti).Scan(&n); err != nil {
		return false, fmt.Errorf("pgstore: revoked: %w", err)
	}
	return n > 0, nil
}

func (t *txn) revokedSince(ctx context.Context, since time.Time) ([]store.Revocation, error) {
	rows, err := t.q.Query(ctx, `SELECT `+sqlrow.RevocationColumns+` FROM revocations
		WHERE revoked_at >= $1 ORDER BY revoked_at, jti`, sqlrow.Nanos(since))
	if err != nil {
		return nil, fmt.Errorf("pgstore: revocations: %w", err)
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
