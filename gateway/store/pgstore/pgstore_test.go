package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/pgstore"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
	"github.com/praxa/praxa/gateway/store/storetest"
)

const dsnEnv = pgtest.Env

func freshSchema(t testing.TB) string { return pgtest.Schema(t) }

func open(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	pgtest.Skip(t)
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		dsn := freshSchema(t)
		return storetest.Opener{Open: func(t *testing.T) store.Store { return open(t, dsn) }}
	})
}

// TestConcurrentMigrations opens several stores on one empty schema at
// once, as replicas starting together do: each must open, and the
// migrations must run once.
func TestConcurrentMigrations(t *testing.T) {
	dsn := freshSchema(t)
	const n = 6
	errs := make(chan error, n)
	for range n {
		go func() {
			s, err := pgstore.Open(context.Background(), dsn, nil)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Open: %v", err)
		}
	}
	conn := pgtest.Conn(t, dsn)
	var applied, files int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir("migrations")
	files = len(entries)
	if applied != files {
		t.Errorf("schema_migrations holds %d rows, want %d", applied, files)
	}
}

func TestIsDSN(t *testing.T) {
	for s, want := range map[string]bool{
		"postgres://u@h/db": true, "postgresql://h/db": true, "data/praxa.db": false, "": false, "/var/lib/praxa": false,
	} {
		if got := pgstore.IsDSN(s); got != want {
			t.Errorf("IsDSN(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestMain says, even without -v, when the PostgreSQL tests are skipped.
func TestMain(m *testing.M) {
	if os.Getenv(dsnEnv) == "" {
		fmt.Fprintf(os.Stderr, "pgstore: %s is not set; the PostgreSQL driver tests are skipped\n", dsnEnv)
	}
	os.Exit(m.Run())
}
