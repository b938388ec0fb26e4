package ratelimit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Local holds one token bucket per key in this process: with several
// replicas each enforces a limit on its own share of the traffic. It is the
// limiter of SQLite's one process, and the fallback of Cluster while the
// database cannot be reached.
type Local struct {
	mu    sync.Mutex
	byKey map[string]*bucket
	sweep time.Time
}

type bucket struct {
	l    *rate.Limiter
	rule Rule
	seen time.Time
}

var _ Limiter = (*Local)(nil)

// maxBuckets bounds memory: beyond it idle buckets are dropped.
const maxBuckets = 100_000

// NewLocal returns an in-process limiter.
func NewLocal() *Local {
	return &Local{byKey: map[string]*bucket{}}
}

// Allow implements Limiter.
func (l *Local) Allow(_ context.Context, key string, r Rule, now time.Time) (bool, time.Duration) {
	if r.Off() {
		return true, 0
	}
	l.mu.Lock()
	b := l.byKey[key]
	if b == nil {
		if len(l.byKey) >= maxBuckets || now.Sub(l.sweep) > time.Minute {
			l.evict(now)
		}
		b = &bucket{l: rate.NewLimiter(rate.Limit(r.Rate), r.Burst), rule: r}
		l.byKey[key] = b
	} else if b.rule != r { // a reload, or Cluster's share of a budget changed
		b.l.SetLimitAt(now, rate.Limit(r.Rate))
		b.l.SetBurstAt(now, r.Burst)
		b.rule = r
	}
	b.seen = now
	res := b.l.ReserveN(now, 1)
	l.mu.Unlock()
	if !res.OK() {
		return false, time.Second
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

// evict drops buckets idle long enough to have refilled completely.
func (l *Local) evict(now time.Time) {
	for k, b := range l.byKey {
		if now.Sub(b.seen) > b.rule.refillTime()+time.Second {
			delete(l.byKey, k)
		}
	}
	l.sweep = now
}
