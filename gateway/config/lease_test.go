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
