package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestPolicyDeniesDestructiveManifestCapability: a capability a manifest
// declares destructiveHint is destructive for policy.denyDestructive as one
// proxy.expose declares so, though its executor (a REST GET) alone is not:
// the denied tenant's direct call is refused before the upstream, another
// tenant's reaches it once.
func TestPolicyDeniesDestructiveManifestCapability(t *testing.T) {
	up, srv := newHitCounter(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "praxec.yaml"), fmt.Sprintf(`connections:
  api: { kind: rest, baseUrl: %q }
manifests: [tools.json]
`, srv.URL))
	writeFile(t, filepath.Join(dir, "tools.json"), `{"version": 1, "capabilities": [
  {"name": "api.wipe", "exposeDirectly": true, "annotations": {"destructiveHint": true},
   "executor": {"kind": "rest", "connection": "api", "method": "GET", "path": "/wipe"}}
]}`)
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: filepath.Join(dir, "praxec.yaml"), Edit: func(cfg *config.Config) {
		cfg.Policy = config.Policy{DenyDestructive: []config.PrincipalMatch{{Tenant: tenantSandbox}}}
	}})
	call := func(tenant, trace string) *contracts.Error {
		return g.Service.CallDirect(context.Background(), principalOf(tenant), gateway.DirectCall{Capability: "api.wipe",
			Surface: gateway.SurfaceMCP, RequestID: "req-" + trace, TraceID: trace, Args: surfaceArgs(map[string]any{})}).Err
	}
	err := call(tenantSandbox, fmt.Sprintf("%032x", 0xdef001))
	if err == nil || err.Code != contracts.CodeDestructiveActionDenied || err.Status() != http.StatusForbidden {
		t.Fatalf("the denied tenant's call answered %v, want %s (403)", err, contracts.CodeDestructiveActionDenied)
	}
	if n := up.count("GET /wipe"); n != 0 {
		t.Fatalf("the refused call reached the upstream %d times", n)
	}
	if err := call(tenantA, fmt.Sprintf("%032x", 0xdef002)); err != nil {
		t.Fatalf("another tenant's call refused: %v", err)
	}
	if n := up.count("GET /wipe"); n != 1 {
		t.Fatalf("the upstream was called %d times, want 1", n)
	}
}
