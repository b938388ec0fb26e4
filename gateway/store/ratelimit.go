package store

import (
	"context"
	"time"
)

// RateBuckets are token buckets shared by every replica of one store: the
// cluster-wide rate limits (package ratelimit) lease slices of their
// budget from them. A driver whose replicas share the database
// (pgstore) implements it; SQLite's one process keeps its buckets in
// memory and does not.
//
// A bucket holds at most burst tokens and gains rate tokens a second, on
// the database's clock, so that replicas whose clocks disagree still share
// one budget. A bucket that does not exist yet is full.
type RateBuckets interface {
	// TakeTokens refills the bucket of key to now and takes up to want
	// tokens from it, in one atomic step: it returns how many it took
	// (between 0 and want; only whole tokens are taken) and, when it took
	// none, how long until one token is there. rate and burst are the
	// bucket's: a change applies from this call on, its level capped at
	// the new burst.
	TakeTokens(ctx context.Context, key string, rate float64, burst, want int) (granted int, wait time.Duration, err error)
	// RateReplicas records that replica id is alive now and counts the
	// replicas that said so within window (id included): the share of a
	// budget one replica falls back to when the store is unreachable.
	RateReplicas(ctx context.Context, id string, window time.Duration) (int, error)
}

// Unwrapper is a Store that wraps another (the audit sink's): BucketsOf
// looks through it.
type Unwrapper interface {
	Unwrap() Store
}

// BucketsOf returns the shared token buckets of st, or of the store it
// wraps, and false when its driver has none.
func BucketsOf(st Store) (RateBuckets, bool) {
	for st != nil {
		if b, ok := st.(RateBuckets); ok {
			return b, true
		}
		u, ok := st.(Unwrapper)
		if !ok {
			break
		}
		st = u.Unwrap()
	}
	return nil, false
}
