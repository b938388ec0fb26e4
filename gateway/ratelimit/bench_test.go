package ratelimit_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
)

// benchRule admits every request of the benchmarks: what they measure is
// the cost of an admission, not of a refusal.
var benchRule = ratelimit.Rule{Rate: 1e12, Burst: 1_000_000_000}

// BenchmarkLimiterLocal is the cost of one admission by the in-process
// limiter (SQLite's).
func BenchmarkLimiterLocal(b *testing.B) {
	l := ratelimit.NewLocal()
	ctx := context.Background()
	for b.Loop() {
		if ok, _ := l.Allow(ctx, "p:tenant/alice", benchRule, time.Now()); !ok {
			b.Fatal("refused")
		}
	}
}

// BenchmarkLimiterCluster is the cost of one admission by the
// cluster-wide limiter on PostgreSQL (PRAXA_TEST_PG_DSN), by slice size:
// one lease (a round trip, mostly ahead of need) per slice of requests.
// slice=1 leases for every request; slice=100000 is, nearly, the cost
// of an admission from a held slice alone.
func BenchmarkLimiterCluster(b *testing.B) {
	dsn := pgtest.Schema(b)
	st := openPG(b, dsn)
	ctx := context.Background()
	for _, slice := range []int{1, 10, 100, 100_000} {
		b.Run("slice="+strconv.Itoa(slice), func(b *testing.B) {
			l := ratelimit.NewCluster(st, nil, ratelimit.ClusterOptions{Slice: slice})
			key := "p:bench-" + strconv.Itoa(slice)
			for b.Loop() {
				if ok, _ := l.Allow(ctx, key, benchRule, time.Now()); !ok {
					b.Fatal("refused")
				}
			}
			s := l.Stats()
			b.ReportMetric(float64(s.Leases)/float64(b.N), "leases/op")
			if s.Errors > 0 {
				b.Fatalf("%d leases failed", s.Errors)
			}
		})
	}
}
