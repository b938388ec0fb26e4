package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
	"github.com/praxa/praxa/gateway/store/internal/sqltx"
)

// dialect is PostgreSQL's: $n placeholders, a bound LIMIT and the purpose
// filter through jsonb containment.
var dialect = &sqltx.Dialect{
	Prefix:          "pgstore",
	NoRows:          pgx.ErrNoRows,
	Numbered:        true,
	HasPurpose:      `(?::text = '' OR purposes::jsonb @> jsonb_build_array(?::text))`,
	EventCapability: `(attributes::jsonb ->> 'capability')`,
}

// txn implements store.Tx on one PostgreSQL transaction: the queries are
// sqltx's. In an Update its mission reads lock the row (SELECT ... FOR
// UPDATE; see sqltx.Tx.LockMissions and the package documentation).
type txn struct {
	sqltx.Tx
	q pgx.Tx
}

var _ store.Tx = (*txn)(nil)

// newTxn wraps q; write marks an Update transaction (View's are
// read-only).
func newTxn(q pgx.Tx, write bool) *txn {
	t := &txn{q: q}
	t.Tx = sqltx.Tx{Conn: t, Dialect: dialect, LockMissions: write}
	return t
}

// Exec implements sqltx.Conn.
func (t *txn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.q.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// QueryRow implements sqltx.Conn.
func (t *txn) QueryRow(ctx context.Context, query string, args ...any) sqlrow.Scanner {
	return t.q.QueryRow(ctx, query, args...)
}

// Query implements sqltx.Conn.
func (t *txn) Query(ctx context.Context, query string, args ...any) (sqltx.Rows, error) {
	rows, err := t.q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

// pgRows is pgx's cursor as a sqltx.Rows.
type pgRows struct{ pgx.Rows }

func (r pgRows) Close() error {
	r.Rows.Close()
	return nil
}
