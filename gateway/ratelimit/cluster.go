package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/gateway/periodic"
	"github.com/praxa/praxa/gateway/store"
)

// Cluster is a limiter whose buckets every replica of one database shares
// (store.RateBuckets): a bucket's budget holds across the replicas
// together.
//
// A replica does not ask the database for every request. It leases a
// slice of a key's budget (at most Slice tokens, taken in one statement)
// and admits that key's requests from the slice in process; when the
// slice runs low it leases the next one in the background, so a key
// within its rate seldom waits for the database. A request finds the
// database only when its replica holds no token of the key: the first
// request of a key, or one that outruns the background lease. When the
// database's bucket is empty the replica remembers until when (the wait
// the database named) and refuses locally until then, so a caller over
// its limit costs no round trip either.
//
// # Error bound
//
// Every admitted request spent a token the database's bucket gave out, so
// over any window of W seconds the replicas together admit at most what a
// single bucket would (Burst + Rate*W) plus what they held, leased but
// unspent, when the window began: at most Slice per replica. With N
// replicas the cluster admits at most Burst + Rate*W + N*Slice, that is
// at most N*Slice above the limit, whatever the window. Leased tokens a
// replica never spends (its callers moved to another replica) are lost
// to the bucket: at most Slice per replica per key, an error downward
// only.
//
// # When the database cannot be reached
//
// A lease that fails (an error, or no answer within StoreTimeout) puts the
// replica in fallback for RetryStore: it spends the tokens it still
// holds, then admits each key from an in-process bucket holding its share
// of the budget (Rate/N and Burst/N, N the replicas alive within the last three
// heartbeats, 6s, as last counted: a replica started less than a heartbeat
// before the database went away may be missing from the count), so the cluster stays within about
// the configured limit instead of admitting without bound. It is logged
// (at the change) and visible in /metrics (praxa_rate_limit_fallback).
// After RetryStore one request tries the database again; the others keep
// to the fallback until it answers.
type Cluster struct {
	buckets store.RateBuckets
	log     *slog.Logger
	opts    ClusterOptions
	id      string

	mu    sync.Mutex
	slots map[string]*slot
	sweep time.Time

	fallback *Local
	// replicas is the last count of live replicas (at least 1).
	replicas atomic.Int64
	// down is when the store failed last, as UnixNano (0: it answers);
	// probing is held by the one request that tries it again.
	down    atomic.Int64
	probing atomic.Bool

	leases, errors, fallbackAdmits atomic.Int64
}

// ClusterOptions tune a Cluster. The zero value is the default.
type ClusterOptions struct {
	// Slice is the most tokens of one key a replica leases at once (0:
	// SliceFor's default, a tenth of a second of the rate, at least 1 and
	// at most a quarter of the burst). It bounds the error: see Cluster.
	Slice int
	// StoreTimeout bounds one lease (default 1s): a request that holds
	// no token waits at most this long for the database before the
	// fallback answers it.
	StoreTimeout time.Duration
	// RetryStore is how long the replica keeps to the fallback after a
	// failed lease before it tries the database again (default 1s).
	RetryStore time.Duration
	// Heartbeat is how often Run says the replica is alive and counts the
	// replicas (default 2s); a replica counts for three heartbeats.
	Heartbeat time.Duration
}

// slot is one key's lease on this replica.
type slot struct {
	mu     sync.Mutex
	tokens int
	// empty is when the database's bucket gains a token again, after a
	// lease that took none: until then the key is refused locally.
	empty time.Time
	// lease is closed when the lease in flight ends (nil: none).
	lease chan struct{}
	seen  time.Time
}

var _ Limiter = (*Cluster)(nil)

// NewCluster returns a limiter on the shared buckets b. Run keeps its
// count of replicas.
func NewCluster(b store.RateBuckets, log *slog.Logger, o ClusterOptions) *Cluster {
	if log == nil {
		log = slog.Default()
	}
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = time.Second
	}
	if o.RetryStore <= 0 {
		o.RetryStore = time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 2 * time.Second
	}
	id := make([]byte, 8)
	rand.Read(id)
	c := &Cluster{buckets: b, log: log, opts: o, id: hex.EncodeToString(id), slots: map[string]*slot{}, fallback: NewLocal()}
	c.replicas.Store(1)
	return c
}

// New returns the limiter for a store: Cluster (its Run started on ctx)
// when the store's replicas share rate buckets, Local otherwise.
func New(ctx context.Context, st store.Store, log *slog.Logger, o ClusterOptions) Limiter {
	b, ok := store.BucketsOf(st)
	if !ok {
		return NewLocal()
	}
	c := NewCluster(b, log, o)
	c.heartbeat(ctx)
	go c.Run(ctx)
	return c
}

// SliceFor is the lease size of a rule under o: o.Slice, else a tenth of
// a second of the rate, at least 1 and at most a quarter of the burst.
func (o ClusterOptions) SliceFor(r Rule) int {
	if o.Slice > 0 {
		return min(o.Slice, r.Burst)
	}
	return max(1, min(int(math.Ceil(r.Rate/10)), r.Burst/4))
}

// Run says every Heartbeat that this replica is alive and counts the
// replicas, until ctx ends.
func (c *Cluster) Run(ctx context.Context) {
	periodic.Run(ctx, c.log, periodic.Job{Name: "rate limit heartbeat", Every: periodic.Fixed(c.opts.Heartbeat),
		Round: func(ctx context.Context) (int, bool, error) { c.heartbeat(ctx); return 0, false, nil }})
}

func (c *Cluster) heartbeat(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StoreTimeout*4)
	defer cancel()
	n, err := c.buckets.RateReplicas(ctx, c.id, 3*c.opts.Heartbeat)
	if err != nil {
		// The count stays what it was: the fallback's share needs the
		// last one known, not none.
		c.log.Debug("rate limit: cannot count the replicas", "err", err)
		return
	}
	c.replicas.Store(int64(max(n, 1)))
}

// Allow implements Limiter.
func (c *Cluster) Allow(ctx context.Context, key string, r Rule, now time.Time) (bool, time.Duration) {
	if r.Off() {
		return true, 0
	}
	sl := c.slot(key, now)
	slice := c.opts.SliceFor(r)
	// A lease that took tokens another request of the key spent before
	// this one could is followed by one more; then the key is refused
	// for now (a race within one replica, not the budget's verdict).
	for range 3 {
		sl.mu.Lock()
		sl.seen = now
		if sl.tokens > 0 {
			sl.tokens--
			ahead := sl.tokens <= slice/2 && sl.lease == nil && !now.Before(sl.empty) && c.down.Load() == 0
			var done chan struct{}
			if ahead {
				done = make(chan struct{})
				sl.lease = done
			}
			sl.mu.Unlock()
			if ahead {
				go c.lease(context.Background(), key, sl, r, slice, now, done)
			}
			return true, 0
		}
		if now.Before(sl.empty) {
			d := sl.empty.Sub(now)
			sl.mu.Unlock()
			return false, d
		}
		if !c.storeUp(now) {
			sl.mu.Unlock()
			return c.fallbackAllow(ctx, key, r, now)
		}
		done := sl.lease
		if done == nil {
			done = make(chan struct{})
			sl.lease = done
			sl.mu.Unlock()
			c.lease(ctx, key, sl, r, slice, now, done)
		} else {
			sl.mu.Unlock()
			select {
			case <-done:
			case <-ctx.Done():
				return false, time.Second
			}
		}
	}
	return false, time.Second
}

// storeUp reports whether a request may lease from the database: it
// answered last time, or RetryStore has passed since it failed and no
// other request is trying it again (this one then does: probing is
// released by its lease).
func (c *Cluster) storeUp(now time.Time) bool {
	down := c.down.Load()
	if down == 0 {
		return true
	}
	if now.UnixNano()-down < int64(c.opts.RetryStore) {
		return false
	}
	return c.probing.CompareAndSwap(false, true)
}

// lease takes up to slice-held tokens of key from the database into sl,
// and closes done. A failure puts the replica in fallback.
func (c *Cluster) lease(ctx context.Context, key string, sl *slot, r Rule, slice int, now time.Time, done chan struct{}) {
	defer close(done)
	sl.mu.Lock()
	want := slice - sl.tokens
	sl.mu.Unlock()
	// The lease serves every request of the key waiting on it: the
	// caller's end does not cut it short.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.StoreTimeout)
	defer cancel()
	var got int
	var wait time.Duration
	var err error
	if want > 0 {
		c.leases.Add(1)
		got, wait, err = c.buckets.TakeTokens(ctx, key, r.Rate, r.Burst, want)
	}
	sl.mu.Lock()
	sl.lease = nil
	if err == nil {
		sl.tokens += got
		if got == 0 && want > 0 {
			sl.empty = now.Add(wait)
		}
	}
	sl.mu.Unlock()
	c.probing.Store(false)
	if err != nil {
		c.errors.Add(1)
		if c.down.Swap(now.UnixNano()) == 0 {
			c.log.Warn("rate limit: the database cannot be reached: each replica now admits its share of every limit in process",
				"replicas", c.replicas.Load(), "retry_in", c.opts.RetryStore.String(), "err", err)
		}
		return
	}
	if c.down.Swap(0) != 0 {
		c.log.Info("rate limit: the database answers again: the limits are cluster-wide again")
	}
}

// fallbackAllow admits key from its in-process share of r.
func (c *Cluster) fallbackAllow(ctx context.Context, key string, r Rule, now time.Time) (bool, time.Duration) {
	n := float64(c.replicas.Load())
	share := Rule{Rate: r.Rate / n, Burst: max(1, int(math.Ceil(float64(r.Burst)/n)))}
	ok, d := c.fallback.Allow(ctx, key, share, now)
	if ok {
		c.fallbackAdmits.Add(1)
	}
	return ok, d
}

// slot returns key's slot, dropping idle ones now and then.
func (c *Cluster) slot(key string, now time.Time) *slot {
	c.mu.Lock()
	defer c.mu.Unlock()
	sl := c.slots[key]
	if sl == nil {
		if len(c.slots) >= maxBuckets || now.Sub(c.sweep) > time.Minute {
			c.evict(now)
		}
		sl = &slot{}
		c.slots[key] = sl
	}
	return sl
}

// evict drops the slots idle for a minute with no lease in flight (their
// unspent tokens are lost to the bucket: an error downward only).
func (c *Cluster) evict(now time.Time) {
	for k, sl := range c.slots {
		sl.mu.Lock()
		idle := now.Sub(sl.seen) > time.Minute && sl.lease == nil
		sl.mu.Unlock()
		if idle {
			delete(c.slots, k)
		}
	}
	c.sweep = now
}

// Stats are a Cluster's counters, for /metrics.
type Stats struct {
	// Leases counts the leases asked of the database; Errors those that
	// failed.
	Leases, Errors int64
	// FallbackAdmits counts the requests admitted by the in-process
	// fallback.
	FallbackAdmits int64
	// Fallback is whether the replica is in fallback now.
	Fallback bool
	// Replicas is the last count of live replicas.
	Replicas int64
}

// Stats returns the counters.
func (c *Cluster) Stats() Stats {
	return Stats{Leases: c.leases.Load(), Errors: c.errors.Load(), FallbackAdmits: c.fallbackAdmits.Load(),
		Fallback: c.down.Load() != 0, Replicas: c.replicas.Load()}
}
