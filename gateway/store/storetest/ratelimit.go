package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// buckets returns the driver's shared rate buckets, skipping the test on
// a driver without them (SQLite keeps its rate limits in process).
func buckets(t *testing.T, s store.Store) store.RateBuckets {
	t.Helper()
	b, ok := store.BucketsOf(s)
	if !ok {
		t.Skip("the driver has no shared rate buckets (store.RateBuckets): its rate limits are in process")
	}
	return b
}

// slowRate refills one token in about 11 days: within a test the buckets
// gain nothing, so what they hold is exact.
const slowRate = 1e-6

// testRateBuckets: a new bucket is full; a take takes what it asks up to
// what the bucket holds, whole tokens only, and once it is empty takes
// nothing and says how long until a token; buckets of other keys are
// apart; a lower burst caps the level; a fast rate refills.
func testRateBuckets(t *testing.T, o Opener) {
	s := o.Open(t)
	b := buckets(t, s)
	ctx := context.Background()
	take := func(key string, rate float64, burst, want int) (int, time.Duration) {
		t.Helper()
		got, wait, err := b.TakeTokens(ctx, key, rate, burst, want)
		if err != nil {
			t.Fatalf("TakeTokens(%s, %v, %d, %d): %v", key, rate, burst, want, err)
		}
		return got, wait
	}
	steps := []struct {
		key         string
		rate        float64
		burst, want int
		got         int
		waits       bool
	}{
		{"p:a", slowRate, 5, 3, 3, false},  // a new bucket is full
		{"p:a", slowRate, 5, 3, 2, false},  // what is left
		{"p:a", slowRate, 5, 1, 0, true},   // empty: a wait
		{"p:b", slowRate, 5, 9, 5, false},  // another key, full; no more than the burst
		{"t:c", slowRate, 10, 4, 4, false}, // 6 left
		{"t:c", slowRate, 3, 5, 3, false},  // the burst lowered to 3 caps the 6
		{"t:c", slowRate, 3, 1, 0, true},
	}
	for i, st := range steps {
		got, wait := take(st.key, st.rate, st.burst, st.want)
		if got != st.got || (wait > 0) != st.waits {
			t.Fatalf("step %d: take %d of %s: got %d wait %v, want %d (a wait: %v)", i, st.want, st.key, got, wait, st.got, st.waits)
		}
		if st.waits && wait < time.Hour {
			t.Fatalf("step %d: wait %v for a token refilled in days", i, wait)
		}
	}
	// A fast rate refills the empty bucket at once.
	if got, _ := take("p:a", 1e9, 5, 2); got != 2 {
		t.Fatalf("a rate of 1e9 tokens a second refilled %d of 2", got)
	}
	for _, bad := range []struct {
		rate        float64
		burst, want int
	}{{0, 5, 1}, {-1, 5, 1}, {1, 0, 1}, {1, 5, 0}} {
		if _, _, err := b.TakeTokens(ctx, "p:x", bad.rate, bad.burst, bad.want); err == nil {
			t.Errorf("TakeTokens(rate %v, burst %d, want %d) took nothing wrong", bad.rate, bad.burst, bad.want)
		}
	}
}

// testRateBucketsRace: takes racing on one key, from two handles on the
// database (two replicas), take exactly the burst between them.
func testRateBucketsRace(t *testing.T, o Opener) {
	b1 := buckets(t, o.Open(t))
	b2 := buckets(t, o.Open(t))
	const burst, workers, tries = 40, 8, 10
	var took atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		b := b1
		if w%2 == 1 {
			b = b2
		}
		wg.Go(func() {
			for range tries {
				got, _, err := b.TakeTokens(context.Background(), "p:race", slowRate, burst, 1+w%3)
				if err != nil {
					t.Error(err)
					return
				}
				took.Add(int64(got))
			}
		})
	}
	wg.Wait()
	if got := took.Load(); got != burst {
		t.Fatalf("racing takes took %d tokens of a bucket of %d", got, burst)
	}
}

// testRateReplicas: each replica's heartbeat counts once, and a count
// includes the caller.
func testRateReplicas(t *testing.T, o Opener) {
	s := o.Open(t)
	b := buckets(t, s)
	ctx := context.Background()
	for i, st := range []struct {
		id   string
		want int
	}{{"r1", 1}, {"r1", 1}, {"r2", 2}, {"r1", 2}, {"r3", 3}} {
		n, err := b.RateReplicas(ctx, st.id, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if n != st.want {
			t.Fatalf("step %d: heartbeat of %s counts %d replicas, want %d", i, st.id, n, st.want)
		}
	}
}
