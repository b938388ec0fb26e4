package periodic

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestRun: a job runs at start when asked, then every interval (asked
// again after each round), sooner when a round left more, logs a failed
// round and the count of a round that handled items, and stops with its
// context.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var rounds []time.Duration
		start := time.Now()
		every := time.Minute
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, log, Job{Name: "test sweep", AtStart: true, CatchUp: time.Second, Done: "swept", DoneKey: "n",
				Every: func() time.Duration { mu.Lock(); defer mu.Unlock(); return every },
				Round: func(context.Context) (int, bool, error) {
					mu.Lock()
					defer mu.Unlock()
					rounds = append(rounds, time.Since(start))
					switch len(rounds) {
					case 1:
						return 3, true, nil // more: the next comes after CatchUp
					case 2:
						every = 2 * time.Minute // a reload changed the interval
						return 0, false, errors.New("store closed")
					}
					return 0, false, nil
				}})
		}()
		time.Sleep(6 * time.Minute) // synctest's fake clock: six minutes pass at once, no real wait
		synctest.Wait()
		cancel()
		<-done
		want := []time.Duration{0, time.Second, time.Second + 2*time.Minute, time.Second + 4*time.Minute}
		mu.Lock()
		defer mu.Unlock()
		if len(rounds) != len(want) {
			t.Fatalf("rounds at %v, want %v", rounds, want)
		}
		for i := range want {
			if rounds[i] != want[i] {
				t.Errorf("round %d at %v, want %v", i, rounds[i], want[i])
			}
		}
		if s := logs.String(); !strings.Contains(s, `msg=swept n=3`) || !strings.Contains(s, `msg="test sweep failed" err="store closed"`) {
			t.Errorf("logs:\n%s", s)
		}
	})
}
