package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// PreviousIdempotencyInsert is how a binary from before the idempotency
// tombstones (pgstore 0018, sqlitestore 0019) records a key, sqltx's
// InsertIdempotency then: without object, forget_at and sweep_at, and over
// a row whose expires_at passed. Each driver's test runs it with its own
// placeholders (? here).
const PreviousIdempotencyInsert = `INSERT INTO idempotency
	(namespace, key, operation, fingerprint, status, header, body, created_at, expires_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (namespace, key) DO UPDATE SET
		operation = excluded.operation, fingerprint = excluded.fingerprint, status = excluded.status,
		header = excluded.header, body = excluded.body, created_at = excluded.created_at, expires_at = excluded.expires_at
	WHERE idempotency.expires_at < excluded.created_at`

// PreviousIdempotencyWriter checks that the keys a binary from before the
// idempotency tombstones records in s's database (a replica not yet
// upgraded, or the previous version after a rollback) read and sweep as the
// keys this version records: a record until it expires, then a tombstone
// for the default window of 30 days from its creation (pgstore 0020,
// sqlitestore 0021), also for a key recorded again over an expired one.
// insert runs PreviousIdempotencyInsert with the given arguments in that
// database.
func PreviousIdempotencyWriter(t *testing.T, s store.Store, insert func(args ...any) error) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	const month = 30 * 24 * time.Hour
	record := func(key string, created, expires time.Time, body string) {
		t.Helper()
		if err := insert("ns", key, "submitIntent", "fp-"+body, 200, "null", []byte(body), created.UnixNano(), expires.UnixNano()); err != nil {
			t.Fatalf("the previous binary's insert of %s: %v", key, err)
		}
	}
	get := func(key string, at time.Time) store.IdempotencyRecord {
		t.Helper()
		var rec store.IdempotencyRecord
		if err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			var err error
			rec, err = tx.GetIdempotency(ctx, "ns", key, at)
			return err
		}); err != nil {
			t.Fatalf("GetIdempotency(%s) at %v: %v", key, at, err)
		}
		return rec
	}
	created := now.Add(-time.Minute)
	record("live", created, now.Add(time.Hour), `{"n":1}`)
	// Recorded long ago, forgotten, then recorded again.
	record("again", now.Add(-2*month), now.Add(-2*month+time.Hour), `{"n":0}`)
	record("again", created, now.Add(time.Hour), `{"n":2}`)
	if _, err := s.SweepIdempotency(ctx, now); err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{"live": `{"n":1}`, "again": `{"n":2}`}
	for key, body := range recorded {
		rec := get(key, now)
		if rec.Expired || rec.Status != 200 || string(rec.Body) != body {
			t.Errorf("%s after a sweep: expired %v, status %d, body %s; want the recorded answer %s", key, rec.Expired, rec.Status, rec.Body, body)
		}
		if want := created.Add(month); rec.TombstoneUntil.UnixNano() != want.UnixNano() {
			t.Errorf("%s: TombstoneUntil %v, want %v (the default window from its creation)", key, rec.TombstoneUntil, want)
		}
	}
	// Past their expiry, swept: tombstones, not forgotten.
	later := now.Add(2 * time.Hour)
	if _, err := s.SweepIdempotency(ctx, later); err != nil {
		t.Fatal(err)
	}
	for key := range recorded {
		if rec := get(key, later); !rec.Expired || rec.Status != 0 {
			t.Errorf("%s past its expiry: expired %v, status %d; want a tombstone", key, rec.Expired, rec.Status)
		}
	}
}
