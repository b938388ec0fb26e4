package sqlitestore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// TestViewReadConnections checks the read path's own connections
// (conn): a View is one transaction, whose reads see the store as of
// its first read even when a commit lands between two of them; a read
// whose caller has gone stops before its next statement; and a connection
// comes back from either in a state the next read can use.
func TestViewReadConnections(t *testing.T) {
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "praxa.db"), &sqlitestore.Options{Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	event := func(n int) store.Event {
		return store.Event{Tenant: "t1", TraceID: "trace-1", Type: "request.allowed", At: time.Unix(int64(n), 0), Outcome: "allowed"}
	}
	count := func(ctx context.Context, tx store.ReadTx) (int, error) {
		evs, err := tx.TraceEvents(ctx, "t1", "trace-1", 100)
		return len(evs), err
	}
	if err := s.AppendEvents(ctx, []store.Event{event(1)}); err != nil {
		t.Fatal(err)
	}

	// One snapshot per View, however many statements it runs.
	err = s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		before, err := count(ctx, tx)
		if err != nil {
			return err
		}
		if err := s.AppendEvents(ctx, []store.Event{event(2)}); err != nil {
			return err
		}
		after, err := count(ctx, tx)
		if err != nil {
			return err
		}
		if before != 1 || after != 1 {
			t.Errorf("one View read %d then %d events; want 1 both times (its snapshot)", before, after)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A cancelled caller: the next statement does not run.
	cctx, cancel := context.WithCancel(ctx)
	err = s.View(cctx, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := count(ctx, tx); err != nil {
			return err
		}
		cancel()
		_, err := count(ctx, tx)
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("View after its caller went: %v; want context.Canceled", err)
	}

	// The one read connection serves the next View, which sees both events.
	err = s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		n, err := count(ctx, tx)
		if err == nil && n != 2 {
			t.Errorf("a new View read %d events; want 2", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
