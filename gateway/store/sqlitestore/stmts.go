package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// stmt finds query's statement prepared on the transaction's connection.
// A read checks first, before each statement, that its caller still wants
// it (see Store.View); the writer's jobs run to their outcome (see
// Store.commit).
func (t *txn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if t.read {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return t.c.stmt(query)
}

// exec runs a prepared statement in the transaction.
func (t *txn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(context.Background(), args...)
}

// queryRow runs a prepared single-row query in the transaction.
func (t *txn) queryRow(ctx context.Context, query string, args ...any) sqlrow.Scanner {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(context.Background(), args...)
}

// query runs a prepared query in the transaction.
func (t *txn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(context.Background(), args...)
}

// errRow is a row whose query could not run: Scan reports why.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// conn is one connection taken for good from its pool and held by one
// transaction at a time: each of the read pool's connections by a View,
// the writer's only connection by the writer goroutine. Every statement it
// has run stays prepared on it, BEGIN and the statement that ends a
// transaction among them, so a transaction parses no SQL once its
// connection has served the same statements before (in the pure-Go SQLite,
// parsing BEGIN and ROLLBACK costs as much as a point read), and
// database/sql keeps no transaction, watcher goroutine or per-transaction
// copy of each statement for it. Statements run detached from any context
// (see txn.stmt).
type conn struct {
	c *sql.Conn
	// begin starts a transaction: BEGIN for a read, BEGIN IMMEDIATE for
	// the writer, which takes the write lock at once rather than at its
	// first write.
	begin    *sql.Stmt
	rollback *sql.Stmt
	stmts    map[string]*sql.Stmt
}

// openConn takes a connection of db for good, with begin (the statement
// that starts its transactions) and ROLLBACK prepared on it.
func openConn(ctx context.Context, db *sql.DB, begin string) (*conn, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open a connection: %w", err)
	}
	rc := &conn{c: c, stmts: map[string]*sql.Stmt{}}
	if rc.begin, err = rc.stmt(begin); err == nil {
		rc.rollback, err = rc.stmt("ROLLBACK")
	}
	if err != nil {
		rc.close()
		return nil, err
	}
	return rc, nil
}

// stmt prepares query on the connection, once.
func (rc *conn) stmt(query string) (*sql.Stmt, error) {
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

// exec runs query, a statement without arguments whose result does not
// matter (BEGIN, COMMIT, SAVEPOINT...), prepared on the connection.
func (rc *conn) exec(query string) error {
	st, err := rc.stmt(query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(context.Background())
	return err
}

// close closes the statements and hands the connection back to its pool
// marked as bad, so that the pool closes it rather than keep a connection
// whose state may be unknown.
func (rc *conn) close() {
	for q, st := range rc.stmts {
		st.Close()
		delete(rc.stmts, q)
	}
	rc.c.Raw(func(any) error { return driver.ErrBadConn })
	rc.c.Close()
}
