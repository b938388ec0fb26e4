// Package pgstore is the store driver for several gateway replicas: one
// PostgreSQL database (pgx v5) that every replica opens with the same DSN.
//
// Each Update is one READ COMMITTED transaction of its own, committed before
// Update returns; PostgreSQL's commit is durable (with synchronous_commit on,
// its default), so no commits are grouped here. Uniqueness is the
// database's: every insert that must not overwrite is an INSERT ... ON
// CONFLICT DO NOTHING whose row count tells whether it inserted, so an
// insert racing another transaction's insert of the same key waits for that
// transaction and then inserts nothing (ErrExists), and every
// compare-and-set is an UPDATE ... WHERE version = $n, which waits for a
// concurrent writer of the row and then matches nothing (ErrConflict).
// View runs in a REPEATABLE READ, read-only transaction: one snapshot.
//
// Under READ COMMITTED a read and a later write of one transaction may
// straddle another's commit. The gateway reads a workflow (its mission row)
// before every write that depends on it (a move's compare-and-set, the
// lease check of a move, taking or resolving a move lease), so inside an
// Update a mission read locks the row (SELECT ... FOR UPDATE): every
// transaction that reads a workflow in order to write serializes on its
// row, and once the lock is granted the read returns the latest committed
// row, so what the transaction checks after it is not changed under it by
// a transaction on the same workflow.
//
// The schema is created by embedded migrations at Open, in one transaction
// that holds a database-wide advisory lock, so replicas starting together
// migrate once. The tables live in the connection's search_path: a DSN may
// pick a schema with the search_path parameter
// (postgres://.../praxa?search_path=praxa).
package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqltx"
	"github.com/praxa/praxa/gateway/store/internal/txrun"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock keys the advisory lock held while migrating (any constant
// shared by every replica would do; this one spells "praxa").
const migrationLock int64 = 0x7072617861

// Options tune a Store. The zero value is the default.
type Options struct {
	// MaxConns bounds the connection pool (default: pgxpool's, the larger
	// of 4 and the number of CPUs; a DSN's pool_max_conns also sets it).
	MaxConns int32
}

// Store is a store.Store on one PostgreSQL database.
type Store struct {
	pool *pgxpool.Pool
	// rate is the rate limits' own small pool (ratelimit.go): a lease
	// never queues behind the transactions of pool.
	rate *pgxpool.Pool

	closed    atomic.Bool
	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// IsDSN reports whether s names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a SQLite file.
func IsDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database the DSN names, runs the embedded
// migrations and returns the Store.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parse error may quote the DSN, password included: say less.
		return nil, errors.New("pgstore: the DSN does not parse as a PostgreSQL connection string")
	}
	if opts != nil && opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	// It connects on first use: a command that takes no tokens opens
	// no connection for it.
	rcfg := cfg.Copy()
	rcfg.MaxConns, rcfg.MinConns = ratePoolConns, 0
	rate, err := pgxpool.NewWithConfig(ctx, rcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	return &Store{pool: pool, rate: rate}, nil
}

// migrate applies the embedded migrations not yet recorded in
// schema_migrations, all in one transaction under the advisory lock.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("pgstore: migrate: lock: %w", err)
	}
	if err := sqltx.Migrate(ctx, newTxn(tx, true), dialect, migrations,
		`CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	return nil
}

// Update implements store.Store: fn runs in one READ COMMITTED transaction,
// committed when it returns nil and rolled back when it returns an error or
// panics (the panic is returned as an error).
func (s *Store) Update(ctx context.Context, fn func(context.Context, store.Tx) error) (err error) {
	// A transaction in a traced request is a span of its own.
	ctx, span := tracing.StartStoreUpdate(ctx, "postgresql")
	if span != nil {
		defer func() { tracing.End(span, err, "") }()
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return s.fail("begin", err)
	}
	if err := txrun.Update(ctx, dialect.Prefix, fn, newTxn(tx, true)); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	// Once fn has run, the commit is not abandoned halfway because ctx
	// ends: the caller must never mistake a commit for a failure.
	if err := tx.Commit(context.WithoutCancel(ctx)); err != nil {
		return s.fail("commit", err)
	}
	return nil
}

// fail wraps a driver error, answering ErrClosed once the store is closed.
func (s *Store) fail(what string, err error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return fmt.Errorf("pgstore: %s: %w", what, err)
}

// View implements store.Store: fn reads one snapshot (a REPEATABLE READ,
// read-only transaction).
func (s *Store) View(ctx context.Context, fn func(context.Context, store.ReadTx) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.fail("begin read", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return fn(ctx, newTxn(tx, false))
}

// AppendEvents implements store.Store.
func (s *Store) AppendEvents(ctx context.Context, events []store.Event) error {
	return sqltx.AppendEvents(ctx, s, events)
}

// SweepIdempotency implements store.Store.
func (s *Store) SweepIdempotency(ctx context.Context, t time.Time) (int, error) {
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	n, err := sqltx.Sweep(ctx, s, t)
	if err != nil {
		return 0, s.fail("sweep", err)
	}
	return n, nil
}

// RevokedSince implements store.Store.
func (s *Store) RevokedSince(ctx context.Context, t time.Time) ([]store.Revocation, error) {
	return sqltx.RevokedSince(ctx, s, t)
}

// Close refuses new transactions, waits for those in progress and closes
// the pool.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.pool.Close()
		s.rate.Close()
	})
	return nil
}
