// Package sqltx is the store.Tx both SQL drivers share: every query and
// every method body lives here once, over a Conn each driver adapts (the
// SQLite driver's goes through its prepared-statement cache, pgstore's
// through a pgx transaction) and a Dialect that says what differs.
//
// The SQL is written once with ? placeholders, which a numbered Dialect
// (PostgreSQL) rewrites to $1, $2, ... once per distinct query. A
// parameter that appears twice in a condition is bound twice.
package sqltx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// Execer runs statements in one open transaction of a driver: all that
// Migrate needs.
type Execer interface {
	// Exec runs a statement and answers how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
	// QueryRow runs a query of at most one row; its error, no rows
	// included, comes from Scan.
	QueryRow(ctx context.Context, query string, args ...any) sqlrow.Scanner
}

// Conn is one open transaction of a driver.
type Conn interface {
	Execer
	// Query runs a query of any number of rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// Rows is a cursor over a query's rows (what *sql.Rows offers).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Dialect is what differs between the drivers' SQL. A driver declares one
// as a package variable and never copies it.
type Dialect struct {
	// Prefix starts every error message: the driver's package name.
	Prefix string
	// NoRows is the driver's error for a single-row query that found
	// nothing; it becomes store.ErrNotFound.
	NoRows error
	// Numbered rewrites ? placeholders to $1, $2, ... (PostgreSQL).
	Numbered bool
	// LiteralLimit renders a LIMIT into the statement text instead of
	// binding it: with a bound LIMIT, SQLite compiles the statement again
	// on every run, and its statement cache keeps one prepared statement
	// per distinct limit.
	LiteralLimit bool
	// HasPurpose is the condition, with two ? placeholders both bound to
	// the purpose, that is true when the purpose is empty or the JSON
	// array in context_records.purposes holds it.
	HasPurpose string
	// EventCapability is the expression of an events row's capability
	// attribute (attributes.capability) as text, NULL when it has none.
	EventCapability string

	mu      sync.RWMutex
	rebound map[string]string

	listContextOnce sync.Once
	listContext     string
}

// bind returns query in the dialect's placeholders, rewritten once per
// distinct query.
func (d *Dialect) bind(query string) string {
	if !d.Numbered {
		return query
	}
	d.mu.RLock()
	q, ok := d.rebound[query]
	d.mu.RUnlock()
	if ok {
		return q
	}
	q = Number(query)
	d.mu.Lock()
	if d.rebound == nil {
		d.rebound = map[string]string{}
	}
	d.rebound[query] = q
	d.mu.Unlock()
	return q
}

// Number rewrites the ? placeholders of query, outside quoted literals and
// identifiers, to $1, $2, ... in order.
func Number(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Tx implements store.Tx (and so store.ReadTx) on a Conn. A driver embeds
// it in its transaction type, with Conn pointing at that type. Like the
// driver transactions, a Tx is for one goroutine at a time.
type Tx struct {
	Conn    Conn
	Dialect *Dialect
	// LockMissions makes mission reads lock the row until the transaction
	// ends (SELECT ... FOR UPDATE): pgstore sets it in an Update, so
	// transactions that read a workflow in order to write serialize on it.
	LockMissions bool
}

var _ store.Tx = (*Tx)(nil)

// forUpdate ends a mission read that locks the row (see LockMissions).
const forUpdate = ` FOR UPDATE`

// unlimited is the limit of a list query without a LIMIT.
const unlimited = math.MinInt

// stmt returns query in the dialect's placeholders, with limit (unless
// unlimited) ending its text, which then ends in "LIMIT ", and the
// arguments, limit included when it is bound. A LiteralLimit dialect
// renders the limit into the text, a negative one as 0.
func (t *Tx) stmt(query string, limit int, args []any) (string, []any) {
	if limit != unlimited {
		if t.Dialect.LiteralLimit {
			query += strconv.Itoa(max(limit, 0))
		} else {
			query += "?"
			args = append(args[:len(args):len(args)], limit)
		}
	}
	return t.Dialect.bind(query), args
}

func (t *Tx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	q, argv := t.stmt(query, unlimited, args)
	return t.Conn.Exec(ctx, q, argv...)
}

func (t *Tx) queryRow(ctx context.Context, query string, args ...any) sqlrow.Scanner {
	q, argv := t.stmt(query, unlimited, args)
	return t.Conn.QueryRow(ctx, q, argv...)
}

// wrap gives err the driver's prefix and what failed.
func (t *Tx) wrap(what string, err error) error {
	return fmt.Errorf("%s: %s: %w", t.Dialect.Prefix, what, err)
}

// rowErr maps a row mapping error: no rows is store.ErrNotFound, anything
// else gets the driver's prefix and what was being read.
func (t *Tx) rowErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, t.Dialect.NoRows) {
		return store.ErrNotFound
	}
	return t.wrap(what, err)
}

// put runs a statement whose row count does not matter.
func (t *Tx) put(ctx context.Context, what, query string, args ...any) error {
	if _, err := t.exec(ctx, query, args...); err != nil {
		return t.wrap(what, err)
	}
	return nil
}

// insert runs an INSERT ... ON CONFLICT DO NOTHING (or an upsert that may
// do nothing): store.ErrExists when it inserted nothing.
func (t *Tx) insert(ctx context.Context, what, query string, args ...any) error {
	n, err := t.exec(ctx, query, args...)
	if err != nil {
		return t.wrap(what, err)
	}
	if n == 0 {
		return store.ErrExists
	}
	return nil
}

// changeOne runs a compare-and-set that changes one row: when it changes
// none, get's error (store.ErrNotFound: no such row) or, when the row is
// there, store.ErrConflict.
func (t *Tx) changeOne(ctx context.Context, what string, get func() error, query string, args ...any) error {
	n, err := t.exec(ctx, query, args...)
	if err != nil {
		return t.wrap(what, err)
	}
	if n == 1 {
		return nil
	}
	if err := get(); err != nil {
		return err
	}
	return store.ErrConflict
}

// list runs query, with limit as stmt adds it, and maps each row with
// scan. what names the query in an error, row what a row that does not map.
func list[T any](ctx context.Context, t *Tx, what, row string, scan func(sqlrow.Scanner) (T, error), query string, limit int, args ...any) ([]T, error) {
	q, argv := t.stmt(query, limit, args)
	rows, err := t.Conn.Query(ctx, q, argv...)
	if err != nil {
		return nil, t.wrap(what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, t.rowErr(row, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap(what, err)
	}
	return out, nil
}
