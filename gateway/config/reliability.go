package config

import "time"

// The bounds and defaults of reliability (see Reliability). The workflow
// engine applies them; the configuration checks use them to compute the
// longest a capability's call may take, which must fit in the lease TTL
// (LeaseTTL).
const (
	// MaxRetries bounds reliability.retries.
	MaxRetries = 10
	// MaxFallbacks bounds reliability.fallback.executors.
	MaxFallbacks = 4
	// DefaultRESTRetries is how many times a rest executor is retried when
	// reliability.retries is unset, all attempts within its one timeout.
	DefaultRESTRetries = 2
	// DefaultBackoffMs is the wait before the first retry when
	// reliability.backoffMs is unset, in milliseconds.
	DefaultBackoffMs = 100
	// MaxBackoffMs bounds reliability.backoffMs.
	MaxBackoffMs = 10000
	// MaxBackoff bounds one wait between two retries (before jitter).
	MaxBackoff = 30 * time.Second
	// MaxRetryAfter bounds the Retry-After of a REST or llm answer that is
	// honoured.
	MaxRetryAfter = 5 * time.Second
	// DefaultExecutorTimeout bounds one call of an executor that calls a
	// connection (Kind.NeedsConnection) when neither it nor its
	// capability sets a timeoutMs.
	DefaultExecutorTimeout = 60 * time.Second
)

// ExecutorTimeout is how long one call of x may take: its timeoutMs, else
// DefaultExecutorTimeout.
func ExecutorTimeout(x Executor) time.Duration {
	if x.TimeoutMs > 0 {
		return time.Duration(x.TimeoutMs) * time.Millisecond
	}
	return DefaultExecutorTimeout
}

// RetriesFor returns how many retries an executor of kind gets under r (a
// nil r included) and whether they share the executor's one timeout (the
// built-in retries of a rest executor) rather than each attempt having
// its own.
func (r *Reliability) RetriesFor(kind Kind) (retries int, shared bool) {
	if r != nil && r.Retries != nil {
		return *r.Retries, false
	}
	if n := kind.info().retries; n > 0 {
		return n, true
	}
	return 0, false
}

// Backoff is the wait before retry n (1 for the first), jitter and
// Retry-After aside: backoffMs doubled n-1 times, at most MaxBackoff.
func (r *Reliability) Backoff(n int) time.Duration {
	base := time.Duration(DefaultBackoffMs) * time.Millisecond
	if r != nil && r.BackoffMs > 0 {
		base = time.Duration(r.BackoffMs) * time.Millisecond
	}
	d := base
	for i := 1; i < n && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// Executors returns the executors a call tries, in order: primary, then
// the fallback executors; each that sets no timeoutMs takes r's.
func (r *Reliability) Executors(primary Executor) []Executor {
	out := []Executor{primary}
	if r == nil {
		return out
	}
	if r.Fallback != nil {
		out = append(out, r.Fallback.Executors...)
	}
	for i := range out {
		if out[i].TimeoutMs == 0 {
			out[i].TimeoutMs = r.TimeoutMs
		}
	}
	return out
}

// WorstCase is the longest a call of primary under r may take: every
// executor tried (primary, then each fallback) and every attempt of each
// running out its timeout, with the longest wait between two attempts
// (a quarter of jitter, or a REST Retry-After). Built-in retries that share
// one timeout count that timeout once.
func (r *Reliability) WorstCase(primary Executor) time.Duration {
	var total time.Duration
	for _, x := range r.Executors(primary) {
		t := ExecutorTimeout(x)
		retries, shared := r.RetriesFor(x.Kind)
		if shared {
			total += t
			continue
		}
		total += time.Duration(retries+1) * t
		for n := 1; n <= retries; n++ {
			wait := r.Backoff(n) + r.Backoff(n)/4
			if x.Kind.info().retryAfter {
				wait = max(wait, MaxRetryAfter)
			}
			total += wait
		}
	}
	return total
}
