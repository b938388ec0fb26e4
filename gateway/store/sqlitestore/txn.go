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
	Prefix:       "sqlitestore",
	NoRows:       sql.ErrNoRows,
	LiteralLimit: true,
	HasPurpose:   `(? = '' OR EXISTS (SELECT 1 FROM json_each(context_records.purposes) WHERE json_each.value = ?))`,
}

// txn implements store.Tx on one SQLite transaction: the queries are
// sqltx's, run through the pool's statement cache (stmts.go).
type txn struct {
	sqltx.Tx
	q     *sql.Tx
	stmts *stmtCache
	// rc is the read connection of a read transaction (Store.View), which
	// runs its statements instead of q and stmts.
	rc *readConn
	// detached runs the statements without the caller's context: the
	// writer's batch (see Store.commit). Once the writer has started a
	// job, it decides the job's outcome (Update waits for it even when
	// the caller's context ends), so nothing would use a cancellation;
	// and a context that can end makes the driver start a goroutine per
	// statement to interrupt it, five per mutation, each one more
	// runnable goroutine on a core the writer already saturates.
	detached bool
}

var _ store.Tx = (*txn)(nil)

func newTxn(q *sql.Tx, stmts *stmtCache) *txn {
	t := &txn{q: q, stmts: stmts}
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
