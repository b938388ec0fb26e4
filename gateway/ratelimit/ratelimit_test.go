package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/store/pgstore"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
)

// openPG opens a pgstore on dsn, closed when the test ends.
func openPG(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestLocal: the in-process buckets admit a burst, then refuse with a
// wait until a token is back; keys are apart; a changed rule applies.
func TestLocal(t *testing.T) {
	l := ratelimit.NewLocal()
	ctx := context.Background()
	t0 := time.Unix(1_700_000_000, 0)
	r := ratelimit.Rule{Rate: 1, Burst: 3}
	steps := []struct {
		key  string
		rule ratelimit.Rule
		at   time.Duration
		ok   bool
	}{
		{"a", r, 0, true}, {"a", r, 0, true}, {"a", r, 0, true},
		{"a", r, 0, false},               // the burst is spent
		{"b", r, 0, true},                // another key
		{"a", r, time.Second, true},      // a token a second
		{"a", r, time.Second, false},     // and only one
		{"a", ratelimit.Rule{}, 0, true}, // Off admits
		{"c", ratelimit.Rule{Rate: -1}, 0, true},
	}
	for i, st := range steps {
		ok, wait := l.Allow(ctx, st.key, st.rule, t0.Add(st.at))
		if ok != st.ok {
			t.Fatalf("step %d: Allow(%s) = %v, want %v", i, st.key, ok, st.ok)
		}
		if !ok && wait <= 0 {
			t.Fatalf("step %d: a refusal with no wait", i)
		}
	}
	// A higher burst for a (a reload) applies to its bucket at once.
	if ok, _ := l.Allow(ctx, "a", ratelimit.Rule{Rate: 1000, Burst: 10}, t0.Add(2*time.Second)); !ok {
		t.Fatal("a raised rule did not apply")
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{0, "1"}, {time.Millisecond, "1"}, {time.Second, "1"}, {1001 * time.Millisecond, "2"}, {90 * time.Second, "90"}} {
		if got := ratelimit.RetryAfter(tc.d); got != tc.want {
			t.Errorf("RetryAfter(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestSliceFor(t *testing.T) {
	for _, tc := range []struct {
		o    ratelimit.ClusterOptions
		r    ratelimit.Rule
		want int
	}{
		{ratelimit.ClusterOptions{}, ratelimit.Rule{Rate: 50, Burst: 100}, 5},
		{ratelimit.ClusterOptions{}, ratelimit.Rule{Rate: 20, Burst: 40}, 2},
		{ratelimit.ClusterOptions{}, ratelimit.Rule{Rate: 1, Burst: 5}, 1},
		{ratelimit.ClusterOptions{}, ratelimit.Rule{Rate: 1000, Burst: 8}, 2}, // a quarter of the burst
		{ratelimit.ClusterOptions{Slice: 7}, ratelimit.Rule{Rate: 50, Burst: 100}, 7},
		{ratelimit.ClusterOptions{Slice: 70}, ratelimit.Rule{Rate: 50, Burst: 10}, 10},
	} {
		if got := tc.o.SliceFor(tc.r); got != tc.want {
			t.Errorf("SliceFor(%+v) under %+v = %d, want %d", tc.r, tc.o, got, tc.want)
		}
	}
}

func TestRuleOf(t *testing.T) {
	if !ratelimit.RuleOf(nil).Off() {
		t.Error("no rate is not Off")
	}
	if r := ratelimit.RuleOf(&config.Rate{RatePerSecond: 2.5}); r != (ratelimit.Rule{Rate: 2.5, Burst: 5}) {
		t.Errorf("RuleOf(2.5/s) = %+v, want a burst of twice the rate", r)
	}
}

// TestNewPicksByStore: SQLite keeps the in-process limiter; PostgreSQL
// gets the cluster-wide one.
func TestNewPicksByStore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lite, err := sqlitestore.Open(ctx, t.TempDir()+"/p.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if _, ok := ratelimit.New(ctx, lite, nil, ratelimit.ClusterOptions{}).(*ratelimit.Local); !ok {
		t.Error("SQLite did not get the in-process limiter")
	}
	pgtest.Skip(t)
	pg := openPG(t, pgtest.Schema(t))
	if _, ok := ratelimit.New(ctx, pg, nil, ratelimit.ClusterOptions{}).(*ratelimit.Cluster); !ok {
		t.Error("PostgreSQL did not get the cluster-wide limiter")
	}
}

// TestClusterAcrossReplicas: two replicas, each its own Cluster on its
// own pool, hammer one key of one PostgreSQL database from several
// goroutines each for a window; together they admit no more than one
// bucket would over that window plus the documented error (a slice per
// replica), and at least the burst (the limit is not refusing
// everything).
func TestClusterAcrossReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	const replicas, workers = 2, 4
	rule := ratelimit.Rule{Rate: 20, Burst: 40}
	var limiters []*ratelimit.Cluster
	for range replicas {
		limiters = append(limiters, ratelimit.NewCluster(openPG(t, dsn), nil, ratelimit.ClusterOptions{}))
	}
	slice := ratelimit.ClusterOptions{}.SliceFor(rule)
	var admitted, refused atomic.Int64
	ctx := context.Background()
	start := time.Now()
	stop := start.Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	for _, l := range limiters {
		for range workers {
			wg.Go(func() {
				for time.Now().Before(stop) {
					if ok, _ := l.Allow(ctx, ratelimit.PrincipalKey("tenant/alice"), rule, time.Now()); ok {
						admitted.Add(1)
					} else {
						refused.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	window := time.Since(start).Seconds()
	bound := float64(rule.Burst) + rule.Rate*window + float64(replicas*slice)
	got := admitted.Load()
	t.Logf("admitted %d, refused %d in %.2fs; one bucket allows %.0f, the bound is %.0f", got, refused.Load(), window,
		float64(rule.Burst)+rule.Rate*window, bound)
	if float64(got) > bound {
		t.Fatalf("two replicas admitted %d in %.2fs: more than the bound %.1f (burst %d + rate %v*window + %d replicas * slice %d)",
			got, window, bound, rule.Burst, rule.Rate, replicas, slice)
	}
	if got < int64(rule.Burst) {
		t.Fatalf("two replicas admitted %d, fewer than the burst %d", got, rule.Burst)
	}
	if refused.Load() == 0 {
		t.Fatal("nothing was refused: the window did not exceed the limit")
	}
	for i, l := range limiters {
		if s := l.Stats(); s.Fallback || s.Errors > 0 {
			t.Errorf("replica %d: %+v, want no fallback", i+1, s)
		}
	}
}

// TestClusterFallback: when the database cannot be reached the replica
// spends what it leased, then admits its share of the budget (a burst of
// Burst/N, N the replicas last counted) in process: bounded, never
// open, and visible in its stats.
func TestClusterFallback(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other := openPG(t, dsn)
	if _, err := other.RateReplicas(ctx, "another-replica", time.Minute); err != nil {
		t.Fatal(err)
	}
	st := openPG(t, dsn)
	l, ok := ratelimit.New(ctx, st, nil, ratelimit.ClusterOptions{Slice: 3, RetryStore: time.Hour}).(*ratelimit.Cluster)
	if !ok {
		t.Fatal("not a Cluster")
	}
	if s := l.Stats(); s.Replicas != 2 {
		t.Fatalf("replicas %d, want 2", s.Replicas)
	}
	rule := ratelimit.Rule{Rate: 1e-6, Burst: 10} // nothing refills within the test
	now := time.Now()
	// One admission leases a slice of 3 and spends one: 2 are held.
	if ok, _ := l.Allow(ctx, "p:x", rule, now); !ok {
		t.Fatal("the first request was refused")
	}
	st.Close() // the database cannot be reached from here on
	n := 0
	for range 100 {
		if ok, _ := l.Allow(ctx, "p:x", rule, now); ok {
			n++
		}
	}
	// The 2 held, then the share: a burst of 10/2 = 5.
	if n != 2+5 {
		t.Fatalf("with the database cut off the replica admitted %d more, want 7 (the 2 it held and its share of 5)", n)
	}
	s := l.Stats()
	if !s.Fallback || s.Errors == 0 || s.FallbackAdmits != 5 {
		t.Fatalf("stats %+v, want fallback, an error and 5 fallback admits", s)
	}
}
