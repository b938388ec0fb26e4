package gatewaytest

import (
	"sync"
	"testing"
	"time"
)

// Eventually calls cond every 10 ms until it reports true, and fails the
// test, naming what, when it has not within timeout. It is the one way the
// tests wait for something the gateway does in the background or after an
// answer left (a metric counted once its handler returned, a sweep, a
// child process): a wait for time itself takes an injected clock instead.
func Eventually(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("%s did not happen within %v", what, timeout)
	}
}

// Poll calls cond every 10 ms until it reports true or timeout has passed,
// and reports whether it did: Eventually for a caller that says more when
// it did not (the state it saw last, a child process's output), or that
// polls off the test's goroutine.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// Race calls fn(0) to fn(n-1) on goroutines of their own, released at
// once, and returns their results in order once every call has returned:
// n requests racing for one idempotency key, lease or approval.
func Race[T any](n int, fn func(i int) T) []T {
	out := make([]T, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			out[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return out
}
