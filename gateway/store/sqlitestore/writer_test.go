package sqlitestore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/internal/testkit"
)

var errBoom = errors.New("boom")

// TestBatchOfManyIsolatesFailures queues jobs behind a job that holds the
// writer, so that they commit as one batch of many (each in its savepoint),
// and checks that every failing job left nothing and every other job
// committed. TestBatchOfOne checks the batch of one (no savepoint).
func TestBatchOfManyIsolatesFailures(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "praxa.db"), nil)

	hold, held := make(chan struct{}), make(chan struct{})
	blocker := make(chan error, 1)
	go func() {
		blocker <- s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
			close(held)
			<-hold
			return nil
		})
	}()
	<-held
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
				if err := tx.InsertIntent(ctx, store.Intent{ID: fmt.Sprintf("int_%d", i), Tenant: "a", CreatedAt: time.Unix(1, 0)}); err != nil {
					return err
				}
				if i%3 == 1 {
					return errBoom
				}
				if i%3 == 2 {
					panic("boom")
				}
				return nil
			})
		}()
	}
	// Every job is queued before the writer is free: the next batch holds
	// them all.
	for len(s.jobs) < n {
		time.Sleep(time.Millisecond) // polls the queue (gatewaytest.Poll: an import cycle from package sqlitestore)
	}
	close(hold)
	if err := <-blocker; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if (i%3 == 0) != (err == nil) || (i%3 == 1 && !errors.Is(err, errBoom)) {
			t.Errorf("Update %d = %v", i, err)
		}
	}
	err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		for i := range n {
			_, err := tx.GetIntent(ctx, "a", fmt.Sprintf("int_%d", i))
			if (i%3 == 0) != (err == nil) {
				t.Errorf("intent %d after the batch: %v", i, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBatchOfOne runs jobs one at a time, so each is a batch of its own,
// run without a savepoint: a failing or panicking one leaves nothing, and
// the transaction it rolled back does not hold the next one.
func TestBatchOfOne(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "praxa.db"), &Options{MaxBatch: 1})
	insert := func(id string, then func() error) error {
		return s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := tx.InsertIntent(ctx, store.Intent{ID: id, Tenant: "a", CreatedAt: time.Unix(1, 0)}); err != nil {
				return err
			}
			if err := tx.AppendEvents(ctx, []store.Event{{Tenant: "a", TraceID: id, Type: "x", At: time.Unix(1, 0)}}); err != nil {
				return err
			}
			return then()
		})
	}
	ok := func() error { return nil }
	if err := insert("int_failed", func() error { return errBoom }); !errors.Is(err, errBoom) {
		t.Errorf("failing Update = %v, want the function's error", err)
	}
	if err := insert("int_panicked", func() error { panic("boom") }); err == nil {
		t.Error("panicking Update = nil")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Update(cancelled, func(ctx context.Context, tx store.Tx) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Update with an ended context = %v", err)
	}
	if err := insert("int_kept", ok); err != nil {
		t.Fatalf("Update after the failures = %v", err)
	}
	// The same id again: refused, and the first one stays.
	if err := insert("int_kept", ok); !errors.Is(err, store.ErrExists) {
		t.Errorf("second insert of an id = %v, want ErrExists", err)
	}
	err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		for id, want := range map[string]bool{"int_failed": false, "int_panicked": false, "int_kept": true} {
			_, err := tx.GetIntent(ctx, "a", id)
			if want != (err == nil) {
				t.Errorf("intent %s: %v", id, err)
			}
			ev, err := tx.TraceEvents(ctx, "a", id, 10)
			if err != nil {
				return err
			}
			if n := len(ev); want != (n == 1) || n > 1 {
				t.Errorf("events of %s: %d", id, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCallersShareCommits runs callers that each queue their next Update as
// soon as the previous one commits, on one P (as go test -cpu 1 runs
// BenchmarkSubmitIntent; there the scheduler runs a goroutine just woken
// next, ahead of the others ready to run), and checks that their Updates share
// commits: the writer lets the callers its last commit woke queue their
// jobs before it takes a batch, rather than commit the first one alone
// while the rest queue behind its fsync.
func TestCallersShareCommits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "praxa.db"), nil)
	const callers, rounds = 32, 20
	work := make([]byte, 64<<10)
	errs := testkit.Parallel(callers, func(c int) error {
		for r := range rounds {
			// The work of a request around its Update (in praxa
			// serve, some 70 µs of HTTP, JSON and schema).
			sum := sha256.Sum256(work)
			err := s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.InsertIntent(ctx, store.Intent{ID: fmt.Sprintf("int_%d_%d_%x", c, r, sum[:4]), Tenant: "a", CreatedAt: time.Unix(1, 0)})
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	for _, err := range errs {
		t.Fatal(err)
	}
	// Each round of the callers can share one commit (a few straggle into
	// the next). Without the writer's yield, the first job of each round
	// committed alone: 40 commits and more, and at times one a job (640).
	if n := s.batches.Load(); n > rounds*3/2 {
		t.Errorf("%d Updates took %d commits (%.1f Updates a commit); want at most %d", callers*rounds, n, float64(callers*rounds)/float64(n), rounds*3/2)
	}
}

// TestWriterAfterFailedCommit makes the writer's COMMIT fail (a deferred
// foreign key left unsatisfied) and checks that the failure is the
// Update's answer, that nothing of the transaction persists, and that the
// writer's connection, on which the transaction was left open, serves the
// next Update.
func TestWriterAfterFailedCommit(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "praxa.db"), nil)
	exec := func(query string) func(context.Context, store.Tx) error {
		return func(ctx context.Context, tx store.Tx) error {
			_, err := tx.(*txn).Exec(ctx, query)
			return err
		}
	}
	if err := s.Update(ctx, exec(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
		CREATE TABLE child (parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)`)); err != nil {
		t.Fatal(err)
	}
	err := s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertIntent(ctx, store.Intent{ID: "int_lost", Tenant: "a", CreatedAt: time.Unix(1, 0)}); err != nil {
			return err
		}
		return exec(`INSERT INTO child (parent) VALUES (1)`)(ctx, tx)
	})
	if err == nil || !strings.Contains(err.Error(), "commit") {
		t.Fatalf("Update whose COMMIT fails = %v, want the commit's error", err)
	}
	if err := s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIntent(ctx, store.Intent{ID: "int_kept", Tenant: "a", CreatedAt: time.Unix(1, 0)})
	}); err != nil {
		t.Fatalf("Update after the failed commit = %v", err)
	}
	err = s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		for id, want := range map[string]bool{"int_lost": false, "int_kept": true} {
			if _, err := tx.GetIntent(ctx, "a", id); want != (err == nil) {
				t.Errorf("intent %s: %v", id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
