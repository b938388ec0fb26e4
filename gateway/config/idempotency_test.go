package config

import (
	"strings"
	"testing"
	"time"
)

// TestTombstoneRetention: server.idempotency.tombstoneRetention defaults to
// DefaultTombstoneRetention, or to the retention when that is longer; one
// shorter than the retention (set or by default) is refused at its line
// with the fix.
func TestTombstoneRetention(t *testing.T) {
	for _, tc := range []struct {
		yaml              string
		retention, window time.Duration
	}{
		{"server:\n  addr: 127.0.0.1:9000\n", 24 * time.Hour, DefaultTombstoneRetention},
		{"server:\n  idempotency:\n    tombstoneRetention: 2160h\n", 24 * time.Hour, 2160 * time.Hour},
		{"server:\n  idempotency:\n    retention: 3s\n    tombstoneRetention: 3s\n", 3 * time.Second, 3 * time.Second},
		{"server:\n  idempotency:\n    retention: 1000h\n", 1000 * time.Hour, 1000 * time.Hour},
	} {
		cfg, err := Parse("praxec.yaml", []byte(tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		cfg.Defaults("")
		if got := cfg.Server.Idempotency; time.Duration(got.Retention) != tc.retention || time.Duration(got.TombstoneRetention) != tc.window {
			t.Errorf("%q: retention %v, tombstones %v; want %v, %v", tc.yaml, got.Retention, got.TombstoneRetention, tc.retention, tc.window)
		}
	}
	for _, tc := range []struct{ yaml, want string }{
		{"server:\n  idempotency:\n    tombstoneRetention: 1h\n", "praxec.yaml:3:25: server.idempotency.tombstoneRetention: must be at least server.idempotency.retention (24h)"},
		{"server:\n  idempotency:\n    retention: 10m\n    tombstoneRetention: 5m\n", "set it to 10m or more"},
		{"server:\n  idempotency:\n    tombstoneRetention: 30d\n", "praxec.yaml:3:25: server.idempotency.tombstoneRetention: must be a Go duration"},
	} {
		_, err := Parse("praxec.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
