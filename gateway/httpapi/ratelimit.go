package httpapi

import (
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter holds one token bucket per principal. Buckets live in this
// process: with several replicas each enforces the limit on its own share
// of the traffic.
type limiter struct {
	rate  rate.Limit
	burst int
	mu    sync.Mutex
	byKey map[string]*bucket
	sweep time.Time
}

type bucket struct {
	l    *rate.Limiter
	seen time.Time
}

// maxBuckets bounds memory: beyond it idle buckets are dropped.
const maxBuckets = 100_000

func newLimiter(perSecond float64, burst int) *limiter {
	if perSecond < 0 {
		return nil
	}
	return &limiter{rate: rate.Limit(perSecond), burst: burst, byKey: map[string]*bucket{}}
}

// allow reports whether key may proceed now and, if not, after how many
// seconds it may retry.
func (l *limiter) allow(key string, now time.Time) (bool, string) {
	if l == nil {
		return true, ""
	}
	l.mu.Lock()
	b := l.byKey[key]
	if b == nil {
		if len(l.byKey) >= maxBuckets || now.Sub(l.sweep) > time.Minute {
			l.evict(now)
		}
		b = &bucket{l: rate.NewLimiter(l.rate, l.burst)}
		l.byKey[key] = b
	}
	b.seen = now
	r := b.l.ReserveN(now, 1)
	l.mu.Unlock()
	if !r.OK() {
		return false, "1"
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, strconv.Itoa(int(math.Ceil(d.Seconds())))
	}
	return true, ""
}

// evict drops buckets idle long enough to have refilled completely.
func (l *limiter) evict(now time.Time) {
	idle := time.Duration(float64(l.burst)/float64(l.rate)*float64(time.Second)) + time.Second
	for k, b := range l.byKey {
		if now.Sub(b.seen) > idle {
			delete(l.byKey, k)
		}
	}
	l.sweep = now
}
