package config

import (
	"reflect"
	"testing"
)

// TestDocRateLimitSnippet: the snippet of the Rate limits section of
// docs/operators.md loads as it is printed, its limits where the gateway
// reads them.
func TestDocRateLimitSnippet(t *testing.T) {
	cfg, err := Parse("docs/operators.md", docSnippet(t, "operators.md", "## Rate limits\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.Server.Limits; l.RatePerSecond != 50 || l.Burst != 100 || l.Tenant == nil || *l.Tenant != (Rate{RatePerSecond: 200, Burst: 400}) {
		t.Errorf("server.limits %+v", l)
	}
	var limits []CapabilityLimit
	for _, x := range cfg.Exposed() {
		limits = append(limits, x.Limits...)
	}
	if want := []CapabilityLimit{{Capability: "orders.quote", Rate: Rate{RatePerSecond: 10, Burst: 20}}}; !reflect.DeepEqual(limits, want) {
		t.Errorf("capability limits %+v, want %+v", limits, want)
	}
}

// TestCapabilityLimitsThroughWraps: a capability's limits hold however it
// is reached: an exposure of it, and a capability that wraps it (whose
// own limits come after).
func TestCapabilityLimitsThroughWraps(t *testing.T) {
	cfg, err := Parse("limits.yaml", []byte(`capabilities:
  base:
    limits: {ratePerSecond: 1}
  guarded:
    wraps: base
    limits: {ratePerSecond: 5, burst: 7}
  free: {}
proxy:
  expose:
    - capability: base
      as: base.alias
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]CapabilityLimit{}
	for _, x := range cfg.Exposed() {
		got[x.ID] = x.Limits
	}
	want := map[string][]CapabilityLimit{
		"base.alias": {{Capability: "base", Rate: Rate{RatePerSecond: 1}}},
		"guarded":    {{Capability: "base", Rate: Rate{RatePerSecond: 1}}, {Capability: "guarded", Rate: Rate{RatePerSecond: 5, Burst: 7}}},
		"free":       nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("limits by exposed capability %+v, want %+v", got, want)
	}
	if b := (&Rate{RatePerSecond: 1}).BurstOrDefault(); b != 2 {
		t.Errorf("default burst of 1/s: %d, want 2", b)
	}
	if b := (&Rate{RatePerSecond: 0.01}).BurstOrDefault(); b != 1 {
		t.Errorf("default burst of 0.01/s: %d, want 1", b)
	}
	for _, bad := range []string{
		"capabilities:\n  x:\n    limits: {burst: 3}\n",
		"capabilities:\n  x:\n    limits: {ratePerSecond: 0}\n",
		"server:\n  limits:\n    tenant: {ratePerSecond: 1, burst: 0}\n",
		"server:\n  limits:\n    clusterSlice: 0\n",
	} {
		if _, err := Parse("bad.yaml", []byte(bad)); err == nil {
			t.Errorf("%q loads", bad)
		}
	}
}
