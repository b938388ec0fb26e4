package config

import (
	"strings"
	"testing"
	"time"
)

// TestLeaseTTL: server.leaseTTL is a duration; unset (or zero) answers
// DefaultLeaseTTL; anything but a duration string is refused.
func TestLeaseTTL(t *testing.T) {
	cfg, err := Parse("praxec.yaml", []byte("server:\n  leaseTTL: 90s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.LeaseTTL(); got != 90*time.Second {
		t.Errorf("LeaseTTL() = %v, want 90s", got)
	}
	cfg, err = Parse("praxec.yaml", []byte("server:\n  addr: 127.0.0.1:9000\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Defaults("")
	if got := cfg.LeaseTTL(); got != DefaultLeaseTTL {
		t.Errorf("unset: LeaseTTL() = %v, want %v", got, DefaultLeaseTTL)
	}
	if got := (*Config)(nil).LeaseTTL(); got != DefaultLeaseTTL {
		t.Errorf("nil: LeaseTTL() = %v", got)
	}
	for _, bad := range []string{"300", "5 minutes", "-1m", "[1m]"} {
		_, err := Parse("praxec.yaml", []byte("server:\n  leaseTTL: "+bad+"\n"))
		if err == nil || !strings.Contains(err.Error(), "leaseTTL") {
			t.Errorf("leaseTTL %s: %v, want an error naming leaseTTL", bad, err)
		}
	}
}

// TestRunRetention: proxy.runRetention is a duration; unset answers
// DefaultRunRetention, 0s turns expiry off; anything but a duration in
// range is refused with the file, line and field.
func TestRunRetention(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want time.Duration
	}{
		{"proxy:\n  runRetention: 90m\n", 90 * time.Minute},
		{"proxy:\n  runRetention: 0s\n", 0},
		{"proxy:\n  expose: []\n", DefaultRunRetention},
		{"server:\n  addr: 127.0.0.1:9000\n", DefaultRunRetention},
	} {
		cfg, err := Parse("praxec.yaml", []byte(tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		cfg.Defaults("")
		if got := cfg.RunRetention(); got != tc.want {
			t.Errorf("%q: RunRetention() = %v, want %v", tc.yaml, got, tc.want)
		}
	}
	if got := (*Config)(nil).RunRetention(); got != DefaultRunRetention {
		t.Errorf("nil: RunRetention() = %v", got)
	}
	for _, bad := range []string{"24", "1 day", "-1h", "off", "[1h]", "3000000h"} {
		_, err := Parse("praxec.yaml", []byte("proxy:\n  runRetention: "+bad+"\n"))
		if err == nil || !strings.Contains(err.Error(), "praxec.yaml:2:") || !strings.Contains(err.Error(), "runRetention") {
			t.Errorf("runRetention %s: %v, want an error at praxec.yaml:2 naming runRetention", bad, err)
		}
	}
}
