package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
	"github.com/praxa/praxa/gateway/store/internal/sqltx"
)

// dialect is SQLite's: ? placeholders, a LIMIT in the statement text (see
// sqltx.Dialect.LiteralLimit) and the purpose filter through json_each.
var dialect = &sqltx.Dialect{
	Prefix:          "sqlitestore",
	NoRows:          sql.ErrNoRows,
	LiteralLimit:    true,
	HasPurpose:      `(? = '' OR EXISTS (SELECT 1 FROM json_each(context_records.purposes) WHERE json_each.value = ?))`,
	EventCapability: `json_extract(attributes, '$.capability')`,
}

// txn implements store.Tx on one SQLite transaction: the queries are
// sqltx's, run as statements prepared on the transaction's connection
// (conn, stmts.go).
type txn struct {
	sqltx.Tx
	c *conn
	// read marks a read transaction (Store.View), which checks its
	// caller's context before each statement. The writer's jobs do not:
	// once the writer has started a job it decides the job's outcome
	// (Update waits for it even when the caller's context ends). Neither
	// passes the context to the driver, which would start a goroutine per
	// statement to interrupt it, each one more runnable goroutine on a
	// core the writer already saturates.
	read bool
}

var _ store.Tx = (*txn)(nil)

func newTxn(c *conn, read bool) *txn {
	t := &txn{c: c, read: read}
	t.Tx = sqltx.Tx{Conn: t, Dialect: dialect}
	return t
}

// Exec implements sqltx.Conn.
func (t *txn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// QueryRow implements sqltx.Conn.
func (t *txn) QueryRow(ctx context.Context, query string, args ...any) sqlrow.Scanner {
	return t.queryRow(ctx, query, args...)
}

// Query implements sqltx.Conn.
func (t *txn) Query(ctx context.Context, query string, args ...any) (sqltx.Rows, error) {
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}
