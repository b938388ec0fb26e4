package sqlitestore

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/praxa/praxa/gateway/store"
)

// TestPageCacheSlots checks that the page-cache memory set aside at start
// is what a store's connections cache their pages in: after a write and a
// read, SQLite counts slots in use.
func TestPageCacheSlots(t *testing.T) {
	if pageCacheErr != nil {
		t.Fatal(pageCacheErr)
	}
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "praxa.db"), nil)
	if err := s.AppendEvents(ctx, []store.Event{{Tenant: "t1", TraceID: "trace-1", Type: "request.allowed", At: time.Unix(1, 0), Outcome: "allowed"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		_, err := tx.TraceEvents(ctx, "t1", "trace-1", 10)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if used := pageCacheStatus(t, sqlite3.SQLITE_STATUS_PAGECACHE_USED); used == 0 {
		t.Fatal("no page-cache slot in use after a write and a read: the pages came from the heap")
	}
}

// pageCacheStatus is SQLite's current value of the status counter op.
func pageCacheStatus(t *testing.T, op int32) int32 {
	t.Helper()
	tls := libc.NewTLS()
	defer tls.Close()
	cur := libc.Xcalloc(tls, 2, 8)
	defer libc.Xfree(tls, cur)
	if rc := sqlite3.Xsqlite3_status(tls, op, cur, cur+8, 0); rc != sqlite3.SQLITE_OK {
		t.Fatalf("sqlite3_status(%d): code %d", op, rc)
	}
	return int32(binary.NativeEndian.Uint32(libc.GoBytes(cur, 4)))
}
