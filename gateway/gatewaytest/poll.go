package gatewaytest

import (
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
