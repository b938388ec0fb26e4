package pgstore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

var _ store.RateBuckets = (*Store)(nil)

// ratePoolConns is the size of the rate limits' own pool: a lease is one
// short statement, so two connections serve a replica's leases, and they
// never wait for a transaction's connection.
const ratePoolConns = 2

// refilled is the level of bucket b refilled to the database's now ($2
// the rate, $3 the burst): what it held plus what the time since its last
// take adds, capped at the burst. A transaction that started before the
// row's last take (now() earlier than updated_at) adds nothing.
const refilled = `least($3::int::float8, b.tokens + greatest(0, extract(epoch FROM now() - b.updated_at)::float8) * $2::float8)`

// takeSQL takes up to $4 whole tokens from the bucket of $1 in one
// statement: a missing bucket is inserted full minus the take; an existing
// one is refilled (refilled) and taken from under its row lock, which a
// concurrent take of the same key waits for (every expression of the SET
// reads the row as it was before this take).
var takeSQL = strings.NewReplacer("REFILLED", refilled).Replace(`
INSERT INTO rate_buckets AS b (key, tokens, granted, updated_at, full_at)
VALUES ($1, $3::int::float8 - least($4::int, $3::int), least($4::int, $3::int), now(),
	now() + make_interval(secs => least($4::int, $3::int) / $2::float8))
ON CONFLICT (key) DO UPDATE SET
	granted = least($4::int, floor(REFILLED))::int,
	tokens = REFILLED - least($4::int, floor(REFILLED)),
	updated_at = greatest(b.updated_at, now()),
	full_at = greatest(b.updated_at, now()) + make_interval(secs => ($3::int::float8 - (REFILLED - least($4::int, floor(REFILLED)))) / $2::float8)
RETURNING granted, tokens`)

// TakeTokens implements store.RateBuckets: one statement, one round trip,
// outside any transaction of Update, on the rate limits' own pool.
func (s *Store) TakeTokens(ctx context.Context, key string, rate float64, burst, want int) (int, time.Duration, error) {
	if s.closed.Load() {
		return 0, 0, store.ErrClosed
	}
	if rate <= 0 || math.IsInf(rate, 0) || math.IsNaN(rate) || burst < 1 || want < 1 {
		return 0, 0, fmt.Errorf("pgstore: take tokens: rate %v, burst %d and want %d must be positive", rate, burst, want)
	}
	var granted int
	var left float64
	if err := s.rate.QueryRow(ctx, takeSQL, key, rate, burst, want).Scan(&granted, &left); err != nil {
		return 0, 0, s.fail("take tokens", err)
	}
	if granted > 0 {
		return granted, 0, nil
	}
	wait := time.Duration((1 - left) / rate * float64(time.Second))
	return 0, max(wait, time.Millisecond), nil
}

// staleReplicas is how long a replica's heartbeat, and a bucket full
// again, are kept before RateReplicas deletes them.
const staleReplicas = time.Hour

// RateReplicas implements store.RateBuckets. It also deletes the buckets
// full for a minute (a missing bucket is full) and the replicas silent for
// an hour, so both tables stay as small as the traffic of the moment.
func (s *Store) RateReplicas(ctx context.Context, id string, window time.Duration) (int, error) {
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	if _, err := s.rate.Exec(ctx, `INSERT INTO rate_replicas (id, seen_at) VALUES ($1, now())
		ON CONFLICT (id) DO UPDATE SET seen_at = now()`, id); err != nil {
		return 0, s.fail("rate replicas", err)
	}
	var n int
	if err := s.rate.QueryRow(ctx, `SELECT count(*) FROM rate_replicas WHERE seen_at > now() - make_interval(secs => $1::float8)`,
		window.Seconds()).Scan(&n); err != nil {
		return 0, s.fail("rate replicas", err)
	}
	_, err := s.rate.Exec(ctx, `DELETE FROM rate_buckets WHERE full_at < now() - interval '1 minute'`)
	if err == nil {
		_, err = s.rate.Exec(ctx, `DELETE FROM rate_replicas WHERE seen_at < now() - make_interval(secs => $1::float8)`, staleReplicas.Seconds())
	}
	if err != nil {
		return 0, s.fail("rate replicas: sweep", err)
	}
	return max(n, 1), nil
}
