package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
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

// exec runs a cached statement in the transaction.
func (t *txn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = t.stmtCtx(ctx)
	st, err := t.stmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return t.q.StmtContext(ctx, st).ExecContext(ctx, args...)
}

// queryRow runs a cached single-row query in the transaction.
func (t *txn) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = t.stmtCtx(ctx)
	st, err := t.stmts.get(ctx, query)
	if err != nil {
		// Let the query report the failure the usual way, through Scan.
		return t.q.QueryRowContext(ctx, query, args...)
	}
	return t.q.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

// query runs a cached query in the transaction.
func (t *txn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = t.stmtCtx(ctx)
	st, err := t.stmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return t.q.StmtContext(ctx, st).QueryContext(ctx, args...)
}
