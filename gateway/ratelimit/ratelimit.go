// Package ratelimit holds the gateway's rate limits: token buckets per key
// (a principal, a tenant, a capability), in process (Local: SQLite's one
// process) or shared by every replica of one PostgreSQL database
// (Cluster), which leases slices of each bucket's budget from the database
// so that most requests are admitted without a round trip to it.
package ratelimit

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/praxa/praxa/gateway/config"
)

// Limiter admits or refuses one request of a key under a rule.
type Limiter interface {
	// Allow reports whether one request of key may proceed now under r
	// and, when not, after how long it may retry. A rule that is Off
	// admits everything.
	Allow(ctx context.Context, key string, r Rule, now time.Time) (ok bool, retryAfter time.Duration)
}

// Rule is one token bucket: Rate tokens a second, at most Burst.
type Rule struct {
	Rate  float64
	Burst int
}

// Off reports whether the rule limits nothing (a rate of 0 or less, or no
// burst).
func (r Rule) Off() bool { return r.Rate <= 0 || r.Burst < 1 || math.IsNaN(r.Rate) }

// refillTime is how long an empty bucket takes to fill.
func (r Rule) refillTime() time.Duration {
	return time.Duration(float64(r.Burst) / r.Rate * float64(time.Second))
}

// RuleOf returns the rule of a configured rate (Off when it is nil or its
// rate is not positive).
func RuleOf(rt *config.Rate) Rule {
	if rt == nil {
		return Rule{}
	}
	return Rule{Rate: rt.RatePerSecond, Burst: rt.BurstOrDefault()}
}

// RetryAfter is the Retry-After value of a refusal that may retry after
// d: whole seconds, at least 1.
func RetryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// The key prefixes keep the buckets of a principal, a tenant and a
// capability apart, in one process and in the database.
const (
	principalPrefix  = "p:"
	tenantPrefix     = "t:"
	capabilityPrefix = "c:"
)

// PrincipalKey is the bucket key of a principal (its namespace).
func PrincipalKey(namespace string) string { return principalPrefix + namespace }

// TenantKey is the bucket key of a tenant.
func TenantKey(tenant string) string { return tenantPrefix + tenant }

// CapabilityKey is the bucket key of a capability, every tenant's calls
// together.
func CapabilityKey(id string) string { return capabilityPrefix + id }
