package gateway

import (
	"testing"
	"time"
)

func TestLeaseSweepInterval(t *testing.T) {
	for ttl, want := range map[time.Duration]time.Duration{
		100 * time.Millisecond: time.Second,
		8 * time.Second:        2 * time.Second,
		DefaultLeaseTTL:        time.Minute,
		time.Hour:              time.Minute,
	} {
		if got := LeaseSweepInterval(ttl); got != want {
			t.Errorf("LeaseSweepInterval(%v) = %v, want %v", ttl, got, want)
		}
	}
}
