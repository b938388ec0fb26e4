package reload

import (
	"testing"
	"time"
)

// TestRetryDelay: the wait after the n-th failure doubles from base up to
// the cap, and its jitter keeps it between half of that and all of it.
func TestRetryDelay(t *testing.T) {
	base, ceiling := 2*time.Second, 5*time.Minute
	for _, c := range []struct {
		n    int
		full time.Duration
	}{
		{1, 2 * time.Second}, {2, 4 * time.Second}, {3, 8 * time.Second}, {8, 256 * time.Second},
		{9, 5 * time.Minute}, {40, 5 * time.Minute}, {1 << 20, 5 * time.Minute},
	} {
		for range 50 {
			if d := retryDelay(c.n, base, ceiling); d < c.full/2 || d > c.full {
				t.Fatalf("after failure %d: %v, want between %v and %v", c.n, d, c.full/2, c.full)
			}
		}
	}
}
