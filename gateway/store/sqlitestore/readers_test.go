package sqlitestore

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/praxa/praxa/gateway/store"
)

// TestViewTakesConnectionUsedLast: once several read connections are
// open, each View one at a time runs on the connection used last (whose
// page cache SQLite most likely kept), not on the one idle longest; and
// Close closes the idle connections.
func TestViewTakesConnectionUsedLast(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "praxa.db"), &Options{Readers: 3})
	// Three Views at once open three connections; they end in turn.
	var wg sync.WaitGroup
	var order []*conn
	var mu sync.Mutex
	started, release := make(chan struct{}), make([]chan struct{}, 3)
	for i := range release {
		release[i] = make(chan struct{})
		wg.Go(func() {
			err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
				started <- struct{}{}
				<-release[i]
				mu.Lock()
				order = append(order, tx.(*txn).c)
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	for range release {
		<-started
	}
	for i := range release {
		close(release[i])
		// The View hands its connection back before the next ends.
		for s.idleCount() != i+1 {
			runtime.Gosched()
		}
	}
	wg.Wait()
	if len(order) != 3 || order[0] == order[1] || order[1] == order[2] || order[0] == order[2] {
		t.Fatalf("three Views at once ran on %v, want three connections", order)
	}
	last := order[2]
	for i := range 4 {
		err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			if c := tx.(*txn).c; c != last {
				t.Errorf("View %d ran on %p, want the connection used last, %p (idle first: %p)", i, c, last, order[0])
			}
			_, err := tx.GetMission(ctx, "t1", "wf_none")
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.idleCount(); n != 3 {
		t.Errorf("%d idle connections, want 3", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.idleCount(); n != 0 {
		t.Errorf("%d idle connections after Close, want 0", n)
	}
}

// idleCount is how many read connections are idle.
func (s *Store) idleCount() int {
	s.idleMu.Lock()
	defer s.idleMu.Unlock()
	return len(s.idle)
}
