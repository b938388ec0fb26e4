package gateway

import (
	"context"
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
)

// TestProxyDefaultDefinition: the store's SQL and memstore leave out of
// the open-missions count the runs of the definition config names
// proxy_default.
func TestProxyDefaultDefinition(t *testing.T) {
	if store.ProxyDefaultDefinition != config.ProxyDefaultWorkflow {
		t.Fatalf("store.ProxyDefaultDefinition %q, config.ProxyDefaultWorkflow %q", store.ProxyDefaultDefinition, config.ProxyDefaultWorkflow)
	}
}

// TestQuotasReload: a reload replaces the quotas in force; a tenant's
// override applies over the default.
func TestQuotasReload(t *testing.T) {
	s := New(memstore.New(), &Options{Quotas: config.Quotas{OpenMissions: 2}})
	t.Cleanup(func() { s.Close(context.Background()) })
	if got := s.quotas.limit("acme", store.QuotaOpenMissions); got != 2 {
		t.Fatalf("limit before the reload = %d, want 2", got)
	}
	five := 5
	s.Reload(context.Background(), Runtime{Quotas: config.Quotas{OpenMissions: 3, Tenants: map[string]config.QuotaOverride{"big": {OpenMissions: &five}}}})
	for tenant, want := range map[string]int{"acme": 3, "big": 5} {
		if got := s.quotas.limit(tenant, store.QuotaOpenMissions); got != want {
			t.Errorf("limit of %s after the reload = %d, want %d", tenant, got, want)
		}
	}
	if got := s.quotas.limit("acme", store.QuotaGoals); got != 0 {
		t.Errorf("goals limit = %d, want 0 (unlimited)", got)
	}
}
