package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/storetest"
)

// TestMigrateIntentsByID applies the migrations before 0011 to a file,
// stores intents in the old table (keyed by tenant and id, with a unique
// index on id), then opens the store: migration 0011 keys the table by id
// alone, every intent is still there, and an id stays unique across
// tenants.
func TestMigrateIntentsByID(t *testing.T) {
	ctx := context.Background()
	path, db := migratedBefore(ctx, t, "0011")
	old := []store.Intent{
		{Tenant: "a", ID: "int_one", Subject: "alice", Text: "first", Tags: []string{"x"}, TraceID: "tr_1", CreatedAt: time.Unix(1, 0).UTC()},
		{Tenant: "b", ID: "int_two", Subject: "bob", Text: "second", Tags: []string{}, TraceID: "tr_2", CreatedAt: time.Unix(2, 0).UTC()},
	}
	for _, in := range old {
		tags := `["x"]`
		if len(in.Tags) == 0 {
			tags = `[]`
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO intents (tenant, id, subject, text, tags, trace_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			in.Tenant, in.ID, in.Subject, in.Text, tags, in.TraceID, in.CreatedAt.UnixNano()); err != nil {
			t.Fatal(err)
		}
	}
	s := openMigrated(ctx, t, path, db)
	indexes := indexNames(ctx, t, s, "intents")
	// One B-tree: the table's own, keyed by id (a WITHOUT ROWID table's
	// primary key is the table, no index beside it).
	if len(indexes) != 0 {
		t.Errorf("indexes on intents after 0011 = %q, want none", indexes)
	}
	err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		for _, want := range old {
			got, err := tx.GetIntent(ctx, want.Tenant, want.ID)
			if err != nil {
				return err
			}
			if got.Subject != want.Subject || got.Text != want.Text || !slices.Equal(got.Tags, want.Tags) ||
				got.TraceID != want.TraceID || !got.CreatedAt.Equal(want.CreatedAt) {
				t.Errorf("GetIntent(%s, %s) = %+v, want %+v", want.Tenant, want.ID, got, want)
			}
		}
		if _, err := tx.GetIntent(ctx, "b", "int_one"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetIntent of another tenant's intent: %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIntent(ctx, store.Intent{Tenant: "b", ID: "int_one", CreatedAt: time.Unix(3, 0)})
	})
	if !errors.Is(err, store.ErrExists) {
		t.Errorf("InsertIntent of an id another tenant holds: %v, want ErrExists", err)
	}
}

// TestMigrateEventsSeq applies the migrations before 0017 to a file,
// appends events to the table whose seq was AUTOINCREMENT, then opens the
// store: migration 0017 rebuilds the table without AUTOINCREMENT (no row
// of sqlite_sequence is read or written by an append), with the events,
// their seq and the three indexes kept, and the next append takes the
// next seq.
func TestMigrateEventsSeq(t *testing.T) {
	ctx := context.Background()
	path, db := migratedBefore(ctx, t, "0017")
	for i, ev := range []struct{ trace, workflow, callTrace string }{{"tr_1", "", ""}, {"tr_1", "wf_1", ""}, {"tr_2", "", "tr_1"}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO events (tenant, trace_id, type, at, subject, client_id, operation, tool,
			run_id, workflow_id, outcome, code, request_id, attributes, call_trace_id)
			VALUES ('a', ?, 'x', ?, '', '', '', '', '', ?, 'allowed', '', '', '{}', ?)`, ev.trace, int64(i+1), ev.workflow, ev.callTrace); err != nil {
			t.Fatal(err)
		}
	}
	s := openMigrated(ctx, t, path, db)
	var table string
	if err := s.reader.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'events'`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToUpper(table), "AUTOINCREMENT") {
		t.Errorf("events after 0017: %s; want no AUTOINCREMENT", table)
	}
	indexes := indexNames(ctx, t, s, "events")
	// 0017 rebuilt the three; 0018 added events_at (the audit retention).
	if want := []string{"events_at", "events_call_trace", "events_trace", "events_workflow"}; !slices.Equal(indexes, want) {
		t.Errorf("indexes on events after 0018 = %q, want %q", indexes, want)
	}
	if err := s.AppendEvents(ctx, []store.Event{{Tenant: "a", TraceID: "tr_1", Type: "y", At: time.Unix(0, 4), Outcome: "allowed"}}); err != nil {
		t.Fatal(err)
	}
	err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.TraceEvents(ctx, "a", "tr_1", 10)
		if err != nil {
			return err
		}
		var seqs []int64
		for _, e := range got {
			seqs = append(seqs, e.Seq)
		}
		// tr_1's own two, the one naming it as its call trace, the new one.
		if want := []int64{1, 2, 3, 4}; !slices.Equal(seqs, want) {
			t.Errorf("seq of tr_1's events after 0017 = %v, want %v", seqs, want)
		}
		wf, err := tx.MissionEvents(ctx, "a", "wf_1", 10)
		if err != nil {
			return err
		}
		if len(wf) != 1 || wf[0].Seq != 2 {
			t.Errorf("events of wf_1 after 0017 = %+v, want the one of seq 2", wf)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_sequence WHERE name = 'events'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("sqlite_sequence keeps %d rows for events after 0017", n)
	}
}

// TestMigrateIdempotencyTombstones applies the migrations before 0018 to
// a file, stores an idempotency record in the old table, then opens the
// store: the record keeps its answer until it expires, is a tombstone for
// the default window (30 days from its creation) after, and the sweep's
// two statements each read a range of idempotency_sweep.
func TestMigrateIdempotencyTombstones(t *testing.T) {
	ctx := context.Background()
	path, db := migratedBefore(ctx, t, "0018")
	created := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	expires := created.Add(24 * time.Hour)
	if _, err := db.ExecContext(ctx, `INSERT INTO idempotency (namespace, key, operation, fingerprint, status, header, body, created_at, expires_at)
		VALUES ('ns', 'key-before-0018-001', 'createMission', 'fp', 201, 'null', CAST('{"runId":"r1"}' AS BLOB), ?, ?)`, created.UnixNano(), expires.UnixNano()); err != nil {
		t.Fatal(err)
	}
	s := openMigrated(ctx, t, path, db)
	window := created.Add(30 * 24 * time.Hour)
	read := func(at time.Time) (store.IdempotencyRecord, error) {
		var rec store.IdempotencyRecord
		err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			var err error
			rec, err = tx.GetIdempotency(ctx, "ns", "key-before-0018-001", at)
			return err
		})
		return rec, err
	}
	if rec, err := read(created); err != nil || rec.Expired || rec.Status != 201 || !rec.TombstoneUntil.Equal(window) {
		t.Errorf("before its expiry: %+v, %v; want the record, its tombstone until %v", rec, err, window)
	}
	if rec, err := read(expires.Add(time.Hour)); err != nil || !rec.Expired || rec.Fingerprint != "fp" {
		t.Errorf("after its expiry: %+v, %v; want its tombstone", rec, err)
	}
	if _, err := read(window.Add(time.Second)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after the window: %v, want ErrNotFound", err)
	}
	for _, tc := range []struct{ stmt, index string }{
		{`UPDATE idempotency SET status = 0, header = 'null', body = x'', sweep_at = forget_at WHERE sweep_at < 1 AND status <> 0 AND forget_at >= 1`, "idempotency_sweep"},
		{`DELETE FROM idempotency WHERE sweep_at < 1`, "idempotency_sweep"},
	} {
		if plan := queryPlan(ctx, t, s, tc.stmt); !strings.Contains(plan, tc.index) || strings.Contains(plan, "SCAN idempotency") {
			t.Errorf("%s:\n%s\nwant a range of %s", tc.stmt, plan, tc.index)
		}
	}
}

// openMigrated closes db, which migratedBefore opened on path, and opens
// the store on path: the migrations left run.
func openMigrated(ctx context.Context, t *testing.T, path string, db *sql.DB) *Store {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return openAt(t, path, nil)
}

// indexNames lists the indexes of table in s's schema, by name.
func indexNames(ctx context.Context, t *testing.T, s *Store, table string) []string {
	t.Helper()
	rows, err := s.reader.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? ORDER BY name`, table)
	if err != nil {
		t.Fatal(err)
	}
	var indexes []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return indexes
}

// queryPlan is SQLite's plan of query, one line a step.
func queryPlan(ctx context.Context, t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.reader.QueryContext(ctx, `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// migratedBefore applies the migrations older than version to a new file,
// as Open does (migrate), and returns the file's path and an open handle
// on it: the store as a gateway of that age left it, for a test to fill
// with rows of the old shape before Open applies the rest.
func migratedBefore(ctx context.Context, t *testing.T, version string) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "praxa.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	older := fstest.MapFS{}
	for _, name := range names {
		if strings.TrimSuffix(filepath.Base(name), ".sql") >= version {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		older[name] = &fstest.MapFile{Data: body}
	}
	if err := migrate(ctx, db, older); err != nil {
		t.Fatal(err)
	}
	return path, db
}

// TestIdempotencyOfPreviousWriters: the keys a binary from before
// migration 0019 records on this file (the previous version after a
// rollback) read and sweep as this version's (0021).
func TestIdempotencyOfPreviousWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "praxa.db")
	s := openAt(t, path, nil)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.PreviousIdempotencyWriter(t, s, func(args ...any) error {
		_, err := db.ExecContext(ctx, storetest.PreviousIdempotencyInsert, args...)
		return err
	})
}
