package config

import (
	"strings"
	"testing"
)

// TestQuotas: server.quotas sets the limits every tenant gets; an override
// replaces the limits it gives (0: unlimited) and keeps the others; absent
// limits are unlimited; anything but a non-negative integer, or an unknown
// member, is refused naming the field.
func TestQuotas(t *testing.T) {
	cfg, err := Parse("praxec.yaml", []byte(`server:
  quotas:
    openMissions: 10
    pendingApprovals: 5
    tenants:
      big:
        openMissions: 100
        memoryRecords: 1000
      free:
        pendingApprovals: 0
`))
	if err != nil {
		t.Fatal(err)
	}
	q := &cfg.Server.Quotas
	for _, tc := range []struct {
		tenant string
		want   QuotaLimits
	}{
		{"acme", QuotaLimits{OpenMissions: 10, PendingApprovals: 5}},
		{"big", QuotaLimits{OpenMissions: 100, PendingApprovals: 5, MemoryRecords: 1000}},
		{"free", QuotaLimits{OpenMissions: 10}},
	} {
		if got := q.For(tc.tenant); got != tc.want {
			t.Errorf("For(%q) = %+v, want %+v", tc.tenant, got, tc.want)
		}
	}
	if !q.Any() {
		t.Error("Any() = false with limits set")
	}
	cfg, err = Parse("praxec.yaml", []byte("server:\n  addr: 127.0.0.1:9000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Quotas.Any() || cfg.Server.Quotas.For("acme") != (QuotaLimits{}) {
		t.Errorf("unset quotas limit something: %+v", cfg.Server.Quotas)
	}
	for _, bad := range []string{"openMissions: -1", "goals: 1.5", "openMissions: many", "tenants: {acme: {missions: 3}}", "sessions: 3"} {
		_, err := Parse("praxec.yaml", []byte("server:\n  quotas: {"+bad+"}\n"))
		if err == nil || !strings.Contains(err.Error(), "quotas") {
			t.Errorf("quotas {%s}: %v, want an error naming quotas", bad, err)
		}
	}
}
