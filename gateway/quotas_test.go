package gateway

import (
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
)

// TestProxyDefaultDefinition: the store's SQL and memstore leave out of
// the open-missions count the runs of the definition config names
// proxy_default.
func TestProxyDefaultDefinition(t *testing.T) {
	if store.ProxyDefaultDefinition != config.ProxyDefaultWorkflow {
		t.Fatalf("store.ProxyDefaultDefinition %q, config.ProxyDefaultWorkflow %q", store.ProxyDefaultDefinition, config.ProxyDefaultWorkflow)
	}
}
