package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestHTTPExportersSignalPaths: over OTLP/HTTP the configured endpoint is
// a base, each exporter posting to its signal's path under it (a trailing
// slash of the base is not doubled), as the exporters do with
// OTEL_EXPORTER_OTLP_ENDPOINT.
func TestHTTPExportersSignalPaths(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		t.Setenv(v, "")
	}
	paths := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ctx := context.Background()
	r := Resolved{On: true, Endpoint: srv.URL + "/collector/", Protocol: ProtocolHTTP}

	se, err := newSpanExporter(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer se.Shutdown(ctx)
	if err := se.ExportSpans(ctx, []sdktrace.ReadOnlySpan{tracetest.SpanStub{Name: "s"}.Snapshot()}); err != nil {
		t.Fatal(err)
	}
	if got := <-paths; got != "/collector/v1/traces" {
		t.Errorf("spans went to %q, want /collector/v1/traces", got)
	}

	me, err := newMetricExporter(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer me.Shutdown(ctx)
	rm := &metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{{Name: "m",
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}}}}}}}
	if err := me.Export(ctx, rm); err != nil {
		t.Fatal(err)
	}
	if got := <-paths; got != "/collector/v1/metrics" {
		t.Errorf("metrics went to %q, want /collector/v1/metrics", got)
	}
}
