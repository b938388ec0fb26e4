// Package pgtest gives tests a fresh PostgreSQL schema on the database
// PRAXA_TEST_PG_DSN names, and skips them, saying so, without it. It is
// test support only.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Env names the variable holding the test database's DSN.
const Env = "PRAXA_TEST_PG_DSN"

// Skip skips the test when Env is not set.
func Skip(t testing.TB) {
	t.Helper()
	if os.Getenv(Env) == "" {
		t.Skipf("%s is not set: the PostgreSQL tests are skipped (e.g. %s=postgres://praxa:praxa@127.0.0.1:5432/praxa?sslmode=disable; .ci/postgres.sh sets one up)", Env, Env)
	}
}

// Schema creates an empty schema on the test database, drops it when the
// test ends, and returns a DSN whose search_path is that schema: every
// store opened with it shares the schema, and nothing else does.
func Schema(t testing.TB) string {
	t.Helper()
	Skip(t)
	dsn := os.Getenv(Env)
	b := make([]byte, 8)
	rand.Read(b)
	schema := "praxa_test_" + hex.EncodeToString(b)
	exec := func(sql string) error {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("pgtest: create schema on %s: %v", Env, err)
	}
	t.Cleanup(func() {
		if err := exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest: %s is not a URL", Env)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Conn connects to the database dsn names (a DSN of Schema: its schema)
// for a test that reads the tables the stores write, and closes the
// connection when the test ends.
func Conn(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
