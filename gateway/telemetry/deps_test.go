package telemetry_test

import (
	"strings"
	"testing"

	"github.com/praxa/praxa/internal/testkit"
)

// TestDependencies keeps telemetry below every surface: of the module it
// imports packages ids and tracing only, so that httpapi, mcpadapter and
// the service can all import it; and tracing, which the workflow engine
// and the store drivers import, imports neither HTTP nor the SDK.
func TestDependencies(t *testing.T) {
	for _, dep := range testkit.Deps(t, "github.com/praxa/praxa/gateway/telemetry") {
		if strings.HasPrefix(dep, "github.com/praxa/praxa/") && dep != "github.com/praxa/praxa/gateway/ids" &&
			dep != "github.com/praxa/praxa/gateway/telemetry" && dep != "github.com/praxa/praxa/gateway/telemetry/tracing" || strings.HasPrefix(dep, "github.com/go-chi/") ||
			strings.HasPrefix(dep, "github.com/modelcontextprotocol/") {
			t.Errorf("gateway/telemetry depends on %s", dep)
		}
	}
}

// TestTracingDependencies keeps package tracing light: OpenTelemetry's
// trace API, no HTTP, no SDK, nothing of the module.
func TestTracingDependencies(t *testing.T) {
	for _, dep := range testkit.Deps(t, "github.com/praxa/praxa/gateway/telemetry/tracing") {
		if dep == "net/http" || strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") ||
			strings.HasPrefix(dep, "github.com/praxa/praxa/") && dep != "github.com/praxa/praxa/gateway/telemetry/tracing" {
			t.Errorf("gateway/telemetry/tracing depends on %s", dep)
		}
	}
}
