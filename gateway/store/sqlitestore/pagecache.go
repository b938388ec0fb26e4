package sqlitestore

import (
	"encoding/binary"
	"fmt"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// pageCacheSlots is how many database pages the process's SQLite page
// caches keep in memory set aside once at start (SQLITE_CONFIG_PAGECACHE):
// enough for one store's connections at SQLite's default cache_size (2000
// KiB, about 470 pages of 4 KiB each, for the writer and four readers).
// Caches beyond it (several stores in one process) take their pages from
// the heap as before.
//
// Without it every cached page is a heap allocation of its own, and
// modernc's allocator maps each allocation of a page's size separately and
// returns it with madvise when freed. WAL mode empties a reader's whole
// cache whenever another connection committed, which the audit writer
// does every few hundred reads, so a read of a random mission among a
// million paid page faults, frees and madvise calls on every page it
// fetched: half of its CPU (BENCHMARKS.md, run 7).
const pageCacheSlots = 2560

// pageCachePageSize is the database page size the slots are sized for:
// SQLite's default, which the stores keep. Pages of a larger size come
// from the heap.
const pageCachePageSize = 4096

// pageCacheErr is why the page-cache memory could not be set aside (nil
// when it was); the stores then run with SQLite's default page cache.
var pageCacheErr = configurePageCache(pageCacheSlots)

// configurePageCache sets aside n page slots for SQLite's page caches. It
// must run before SQLite initializes, that is before the process opens its
// first connection: package initialization is the one place that holds.
func configurePageCache(n int) error {
	tls := libc.NewTLS()
	defer tls.Close()
	va := libc.NewVaListN(3)
	if va == 0 {
		return fmt.Errorf("sqlitestore: page cache: out of memory")
	}
	defer libc.Xfree(tls, va)
	// The bytes SQLite keeps beside each page in a slot.
	hdr := libc.Xmalloc(tls, 8)
	if hdr == 0 {
		return fmt.Errorf("sqlitestore: page cache: out of memory")
	}
	defer libc.Xfree(tls, hdr)
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PCACHE_HDRSZ, libc.VaList(va, hdr)); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlitestore: page cache: SQLITE_CONFIG_PCACHE_HDRSZ: code %d", rc)
	}
	size := (pageCachePageSize + int(binary.NativeEndian.Uint32(libc.GoBytes(hdr, 4))) + 7) &^ 7
	// Kept for the life of the process, as SQLite requires.
	buf := libc.Xmalloc(tls, types.Size_t(size*n))
	if buf == 0 {
		return fmt.Errorf("sqlitestore: page cache: out of memory for %d pages", n)
	}
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PAGECACHE, libc.VaList(va, buf, int32(size), int32(n))); rc != sqlite3.SQLITE_OK {
		libc.Xfree(tls, buf)
		return fmt.Errorf("sqlitestore: page cache: SQLITE_CONFIG_PAGECACHE: code %d (SQLite was already initialized)", rc)
	}
	return nil
}
