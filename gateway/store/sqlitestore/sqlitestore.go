// Package sqlitestore is the embedded store driver: one SQLite file (pure Go,
// no cgo) in WAL mode, with every commit fsync'd (synchronous=FULL) so an
// acknowledged mutation survives a power cut.
//
// Durability costs one fsync per commit, so concurrent Updates are grouped:
// a single writer goroutine, on a connection of its own, takes every Update
// waiting at that moment (once the goroutines ready to run have queued
// theirs), runs each in its own savepoint inside one transaction, and
// commits them with one fsync. A function that fails rolls back to its
// savepoint only (a batch of one runs without a savepoint and rolls back
// whole). Reads go to a separate pool of read-only connections and never
// wait for the writer.
//
// Several processes may open the same file; SQLite's locks serialize their
// writers. Schema migrations are embedded and run at Open.
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
	"github.com/praxa/praxa/gateway/store/internal/sqltx"
	"github.com/praxa/praxa/gateway/store/internal/txrun"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options tune a Store. The zero value is the durable default.
type Options struct {
	// MaxBatch bounds how many Updates one commit groups (default 128).
	MaxBatch int
	// Readers is the size of the read-only connection pool (default 4).
	Readers int
	// NoSync turns fsync off (synchronous=NORMAL): commits survive a process
	// crash but not a power cut. Benchmarks use it to show what durability
	// costs; production should not.
	NoSync bool
}

// Store is a store.Store on one SQLite file.
type Store struct {
	writer *sql.DB
	reader *sql.DB
	// wc is the writer goroutine's connection, nil until its first batch
	// and after a failure left its state unknown; only that goroutine
	// uses it.
	wc *conn
	// readers bounds the read transactions open at once (Options.Readers):
	// a View holds a slot of it while it runs.
	readers chan struct{}
	// idleMu guards idle and closed.
	idleMu sync.Mutex
	// idle holds the read connections no View uses, the one used last at
	// the end: a View takes that one (last in, first out). In WAL mode
	// SQLite drops a read connection's whole page cache when another
	// connection committed since its last read, and the audit trail
	// commits all the time; taken in turn (first in, first out), every
	// connection found a commit since its last read more often and read
	// the b-trees' pages again, each connection for itself. Taking the
	// one used last, reads one at a time keep one warm cache: a GET of a
	// mission costs about 10 % less CPU, a GET of a trace about 6 %
	// (BenchmarkStoreGrowth, 10k and 1M stored).
	idle []*conn
	// closed: Close has run; a connection handed back is closed.
	closed bool
	jobs   chan *job
	quit   chan struct{}
	done   chan struct{}
	max    int
	// batches counts the writer's transactions (tests read it).
	batches atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*Store)(nil)

type job struct {
	ctx  context.Context
	fn   func(context.Context, store.Tx) error
	errc chan error
}

// Open opens (creating if needed) the database file at path, runs the
// embedded migrations and starts the writer.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 128
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	sync := "FULL"
	if o.NoSync {
		sync = "NORMAL"
	}
	base := "file:" + (&url.URL{Path: abs}).EscapedPath()
	params := "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_time_format=sqlite"
	// temp_store(memory): a batch runs each job in a savepoint, whose
	// journal of changed pages otherwise spills to a temporary file once
	// it passes 64 KiB, two pwrite calls per page (10 % of a durable
	// write's CPU at 64 in flight). That journal only undoes a failed job
	// inside the open transaction; the WAL alone makes a commit durable.
	writer, err := sql.Open("sqlite", base+"?"+params+"&_txlock=immediate&_pragma=synchronous("+sync+")&_pragma=temp_store(memory)")
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	// The writer goroutine holds the one connection for good (conn).
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	if err := migrate(ctx, writer, migrations); err != nil {
		writer.Close()
		return nil, err
	}
	reader, err := sql.Open("sqlite", base+"?"+params+"&_pragma=query_only(1)")
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	// Each read transaction holds a connection of its own (conn).
	reader.SetMaxOpenConns(o.Readers)
	reader.SetMaxIdleConns(o.Readers)
	reader.SetConnMaxLifetime(0)
	s := &Store{
		readers: make(chan struct{}, o.Readers),
		writer:  writer, reader: reader,
		jobs: make(chan *job, o.MaxBatch),
		quit: make(chan struct{}), done: make(chan struct{}),
		max: o.MaxBatch,
	}
	go s.loop()
	return s, nil
}

// migrate applies the migrations of fsys (the embedded migrations; a test's
// older ones) not yet recorded in schema_migrations, in one transaction.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS) error {
	tx, err := db.BeginTx(ctx, nil) // immediate: one migrating process at a time
	if err != nil {
		return fmt.Errorf("sqlitestore: migrate: %w", err)
	}
	defer tx.Rollback()
	if err := sqltx.Migrate(ctx, migrationTx{tx}, dialect, fsys,
		`CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitestore: migrate: %w", err)
	}
	return nil
}

// migrationTx is sqltx.Execer on the migrating transaction itself: its
// statements run unprepared, so that a file of several statements runs
// whole.
type migrationTx struct{ tx *sql.Tx }

func (m migrationTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := m.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (m migrationTx) QueryRow(ctx context.Context, query string, args ...any) sqlrow.Scanner {
	return m.tx.QueryRowContext(ctx, query, args...)
}

// Update implements store.Store. It queues fn for the writer and waits for
// the commit that includes it.
func (s *Store) Update(ctx context.Context, fn func(context.Context, store.Tx) error) (err error) {
	// A transaction in a traced request is a span of its own.
	ctx, span := tracing.StartStoreUpdate(ctx, "sqlite")
	if span != nil {
		defer func() { tracing.End(span, err, "") }()
	}
	select {
	case <-s.quit:
		return store.ErrClosed
	default:
	}
	j := &job{ctx: ctx, fn: fn, errc: make(chan error, 1)}
	select {
	case s.jobs <- j:
	case <-s.quit:
		return store.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued, the job's outcome is decided by the writer: wait for it
	// even if ctx ends, so the caller never mistakes a commit for a failure.
	select {
	case err := <-j.errc:
		return err
	case <-s.done:
		// The writer stopped; it either answered the job on its way out or
		// never saw it.
		select {
		case err := <-j.errc:
			return err
		default:
			return store.ErrClosed
		}
	}
}

func (s *Store) loop() {
	defer close(s.done)
	batch := make([]*job, 0, s.max)
	for {
		select {
		case j := <-s.jobs:
			batch = append(batch[:0], j)
			// Let the goroutines already runnable run first: when a
			// commit answers its batch, its callers wake together, and
			// the first to queue its next job wakes the writer, which
			// the scheduler runs next, ahead of the others. Without
			// this yield the writer commits that job alone, with an
			// fsync of its own, while the others queue behind it (on one
			// core, three batches in four held a single job); with it,
			// those callers queue their jobs first and share the commit.
			// It delays a batch only by work that was ready to run.
			runtime.Gosched()
		drain:
			for len(batch) < s.max {
				select {
				case j := <-s.jobs:
					batch = append(batch, j)
				default:
					break drain
				}
			}
			s.batches.Add(1)
			s.commit(batch)
		case <-s.quit:
			for {
				select {
				case j := <-s.jobs:
					j.errc <- store.ErrClosed
				default:
					return
				}
			}
		}
	}
}

// commit runs the batch in one transaction, one savepoint per job. A batch
// of one job needs no savepoint: when the job fails, the transaction, which
// holds nothing else, rolls back whole (see commitOne). The transaction
// runs on the writer's connection (conn), where BEGIN IMMEDIATE, COMMIT,
// the savepoints and every statement of the jobs stay prepared.
func (s *Store) commit(batch []*job) {
	errs := make([]error, len(batch))
	fail := func(err error) {
		for _, j := range batch {
			j.errc <- err
		}
	}
	if s.wc == nil {
		wc, err := openConn(context.Background(), s.writer, "BEGIN IMMEDIATE")
		if err != nil {
			fail(err)
			return
		}
		s.wc = wc
	}
	wc := s.wc
	if _, err := wc.begin.ExecContext(context.Background()); err != nil {
		s.dropWriter()
		fail(fmt.Errorf("sqlitestore: begin: %w", err))
		return
	}
	stx := newTxn(wc, false)
	if len(batch) == 1 {
		batch[0].errc <- s.commitOne(batch[0], stx)
		return
	}
	ran := 0
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if err := wc.exec("SAVEPOINT job"); err != nil {
			errs[i] = fmt.Errorf("sqlitestore: savepoint: %w", err)
			continue
		}
		errs[i] = runJob(j, stx)
		if errs[i] != nil {
			if err := wc.exec("ROLLBACK TO job"); err != nil {
				// The transaction is unusable: nothing of the batch commits.
				s.rollback()
				fail(fmt.Errorf("sqlitestore: rollback to savepoint: %w", err))
				return
			}
		} else {
			ran++
		}
		if err := wc.exec("RELEASE job"); err != nil {
			s.rollback()
			fail(fmt.Errorf("sqlitestore: release savepoint: %w", err))
			return
		}
	}
	if ran == 0 {
		if err := s.rollback(); err != nil {
			fail(err)
			return
		}
	} else if err := s.commitTx(); err != nil {
		fail(err)
		return
	}
	for i, j := range batch {
		j.errc <- errs[i]
	}
}

// commitOne runs a batch's only job in the open transaction tx and
// commits it, or rolls the whole transaction back when the job fails: two
// statements fewer than a savepoint and its release.
func (s *Store) commitOne(j *job, tx *txn) error {
	if err := j.ctx.Err(); err != nil {
		return errors.Join(err, s.rollback())
	}
	if err := runJob(j, tx); err != nil {
		if rerr := s.rollback(); rerr != nil {
			// As when a savepoint does not roll back: the failure to
			// undo is the answer.
			return rerr
		}
		return err
	}
	return s.commitTx()
}

// commitTx commits the writer's transaction. When COMMIT fails the
// transaction may still be open (SQLite keeps it open on SQLITE_BUSY):
// it is rolled back, so that nothing of it persists and the next batch
// begins on a clean connection.
func (s *Store) commitTx() error {
	if err := s.wc.exec("COMMIT"); err != nil {
		s.rollback()
		return fmt.Errorf("sqlitestore: commit: %w", err)
	}
	return nil
}

// rollback rolls the writer's transaction back. A connection whose
// ROLLBACK failed is in a state the writer cannot know: it is dropped, and
// the next batch opens another.
func (s *Store) rollback() error {
	if _, err := s.wc.rollback.ExecContext(context.Background()); err != nil {
		s.dropWriter()
		return fmt.Errorf("sqlitestore: rollback: %w", err)
	}
	return nil
}

// dropWriter closes the writer's connection; the next batch opens another.
func (s *Store) dropWriter() {
	if s.wc != nil {
		s.wc.close()
		s.wc = nil
	}
}

// runJob runs j's function in tx.
func runJob(j *job, tx *txn) error {
	return txrun.Update(j.ctx, dialect.Prefix, j.fn, tx)
}

// View implements store.Store.
func (s *Store) View(ctx context.Context, fn func(context.Context, store.ReadTx) error) (err error) {
	select {
	case <-s.quit:
		return store.ErrClosed
	default:
	}
	select {
	case s.readers <- struct{}{}:
	case <-s.quit:
		return store.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	rc := s.takeReader()
	defer func() {
		s.putReader(rc)
		<-s.readers
	}()
	if rc == nil {
		if rc, err = openConn(ctx, s.reader, "BEGIN"); err != nil {
			return err
		}
	}
	// The transaction runs detached from ctx (txn.stmt checks it before
	// each statement): a context that can end costs the driver and
	// database/sql a watcher per statement, and a read's statements are
	// short and bounded.
	bg := context.Background()
	if _, err := rc.begin.ExecContext(bg); err != nil {
		rc.close()
		rc = nil
		return fmt.Errorf("sqlitestore: begin read: %w", err)
	}
	defer func() {
		if _, rerr := rc.rollback.ExecContext(bg); rerr != nil {
			// The connection's state is unknown: drop it; the next read
			// opens another.
			rc.close()
			rc = nil
		}
	}()
	return fn(ctx, newTxn(rc, true))
}

// takeReader takes the idle read connection used last, nil when none is
// open (View opens one).
func (s *Store) takeReader() *conn {
	s.idleMu.Lock()
	defer s.idleMu.Unlock()
	n := len(s.idle)
	if n == 0 {
		return nil
	}
	rc := s.idle[n-1]
	s.idle[n-1] = nil
	s.idle = s.idle[:n-1]
	return rc
}

// putReader hands a read connection back (nil: the View dropped its
// connection), or closes it once the store is closed.
func (s *Store) putReader(rc *conn) {
	if rc == nil {
		return
	}
	s.idleMu.Lock()
	defer s.idleMu.Unlock()
	if s.closed {
		rc.close()
		return
	}
	s.idle = append(s.idle, rc)
}

// AppendEvents implements store.Store.
func (s *Store) AppendEvents(ctx context.Context, events []Event) error {
	return sqltx.AppendEvents(ctx, s, events)
}

// Event is store.Event, named here for brevity.
type Event = store.Event

// SweepIdempotency implements store.Store.
func (s *Store) SweepIdempotency(ctx context.Context, t time.Time) (int, error) {
	n, err := sqltx.Sweep(ctx, s, t)
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: sweep: %w", err)
	}
	return n, nil
}

// RevokedSince implements store.Store.
func (s *Store) RevokedSince(ctx context.Context, t time.Time) ([]store.Revocation, error) {
	return sqltx.RevokedSince(ctx, s, t)
}

// Close stops the writer after the batch in progress and closes the file.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.quit)
		<-s.done
		// The read connections not in use now; one a read still holds
		// closes when that read hands it back (putReader).
		s.idleMu.Lock()
		s.closed = true
		for _, rc := range s.idle {
			rc.close()
		}
		s.idle = nil
		s.idleMu.Unlock()
		// The writer goroutine has returned: its connection is free.
		s.dropWriter()
		s.closeErr = errors.Join(s.reader.Close(), s.writer.Close())
	})
	return s.closeErr
}
