package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"

	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// stmtCache prepares each statement once per pool. database/sql then keeps
// it prepared on every connection that has run it, so a statement's SQL is
// parsed once per connection rather than on every call (in the pure-Go
// SQLite, parsing costs more than most of the queries themselves).
//
// Preparing takes a free connection of the pool while the caller's
// transaction holds another: each pool has one connection more than the
// transactions it allows at once, and the cache prepares one statement at
// a time, so preparing never waits on a connection a transaction holds.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: prepare: %w", err)
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		st.Close()
		delete(c.m, q)
	}
}

// stmtCtx is the context a statement runs with: none for a detached
// transaction (see txn.detached).
func (t *txn) stmtCtx(ctx context.Context) context.Context {
	if t.detached {
		return context.Background()
	}
	return ctx
}

// stmt finds query's prepared statement: on the read connection for a read
// transaction, else in the pool's cache, bound to the transaction.
func (t *txn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if t.rc != nil {
		// A read runs detached (see Store.View): it only checks, before
		// each statement, that its caller still wants it.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return t.rc.stmt(query)
	}
	ctx = t.stmtCtx(ctx)
	st, err := t.stmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return t.q.StmtContext(ctx, st), nil
}

// exec runs a cached statement in the transaction.
func (t *txn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(t.stmtCtx(ctx), args...)
}

// queryRow runs a cached single-row query in the transaction.
func (t *txn) queryRow(ctx context.Context, query string, args ...any) sqlrow.Scanner {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(t.stmtCtx(ctx), args...)
}

// query runs a cached query in the transaction.
func (t *txn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(t.stmtCtx(ctx), args...)
}

// errRow is a row whose query could not run: Scan reports why.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// readConn is one connection of the read pool, held by one View at a
// time, with every statement it has run prepared on it, BEGIN and ROLLBACK
// among them: a read transaction parses no SQL once its connection has
// served the same queries before (in the pure-Go SQLite, parsing BEGIN and
// ROLLBACK cost as much as the read itself), and database/sql keeps no
// transaction, watcher goroutine or per-transaction statement for it.
type readConn struct {
	c               *sql.Conn
	begin, rollback *sql.Stmt
	stmts           map[string]*sql.Stmt
}

// openReadConn takes a connection of the reader pool for good.
func openReadConn(ctx context.Context, db *sql.DB) (*readConn, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open a read connection: %w", err)
	}
	rc := &readConn{c: c, stmts: map[string]*sql.Stmt{}}
	if rc.begin, err = rc.stmt("BEGIN"); err == nil {
		rc.rollback, err = rc.stmt("ROLLBACK")
	}
	if err != nil {
		rc.close()
		return nil, err
	}
	return rc, nil
}

// stmt prepares query on the connection, once.
func (rc *readConn) stmt(query string) (*sql.Stmt, error) {
	if st, ok := rc.stmts[query]; ok {
		return st, nil
	}
	st, err := rc.c.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: prepare: %w", err)
	}
	rc.stmts[query] = st
	return st, nil
}

// close closes the statements and hands the connection back to the pool,
// which closes it (the pool is closed, or has more idle connections than it
// keeps).
func (rc *readConn) close() {
	for q, st := range rc.stmts {
		st.Close()
		delete(rc.stmts, q)
	}
	rc.c.Raw(func(any) error { return driver.ErrBadConn })
	rc.c.Close()
}
