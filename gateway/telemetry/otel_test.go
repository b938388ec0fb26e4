package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/praxa/praxa/gateway/telemetry/tracing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestResolve: an endpoint in either place turns export on, the
// environment overrides the configuration, OTEL_SDK_DISABLED and disabled
// turn it off, and bad values are refused.
func TestResolve(t *testing.T) {
	half := 0.5
	cases := []struct {
		name string
		s    Settings
		env  map[string]string
		want Resolved
		err  string
	}{
		{name: "nothing", want: Resolved{}},
		{name: "env endpoint alone", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: Resolved{On: true, Protocol: ProtocolHTTP, SampleRatio: 1, ServiceName: DefaultServiceName}},
		{name: "config endpoint", s: Settings{Endpoint: "http://c:4317", Protocol: ProtocolGRPC, SampleRatio: &half, ServiceName: "gw"},
			want: Resolved{On: true, Endpoint: "http://c:4317", Protocol: ProtocolGRPC, SampleRatio: 0.5, ServiceName: "gw"}},
		{name: "env overrides", s: Settings{Endpoint: "http://c:4317", Protocol: ProtocolGRPC, SampleRatio: &half, ServiceName: "gw"},
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://d:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
				"OTEL_TRACES_SAMPLER_ARG": "0.1", "OTEL_SERVICE_NAME": "edge"},
			want: Resolved{On: true, Protocol: ProtocolHTTP, SampleRatio: 0.1, ServiceName: "edge"}},
		{name: "sdk disabled", s: Settings{Endpoint: "http://c:4318"}, env: map[string]string{"OTEL_SDK_DISABLED": "true"}, want: Resolved{}},
		{name: "config disabled", s: Settings{Endpoint: "http://c:4318", Disabled: true}, want: Resolved{}},
		{name: "bad protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: "http/json"},
		{name: "bad ratio", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_SAMPLER_ARG": "2"}, err: "between 0 and 1"},
	}
	for _, c := range cases {
		got, err := Resolve(c.s, env(c.env))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got.MetricInterval = 0
		if !got.On {
			got = Resolved{}
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestSamplerDistrustsRemoteParents: a caller's sampled flag does not
// force a span to be sampled (ratio 0 drops it, and a ratio samples the
// remote trace id as it would a root), while a local parent's decision is
// followed.
func TestSamplerDistrustsRemoteParents(t *testing.T) {
	tracer := func(ratio float64) oteltrace.Tracer {
		return sdktrace.NewTracerProvider(sdktrace.WithSampler(Sampler(ratio))).Tracer("t")
	}
	remote := func(traceID string, sampled bool) context.Context {
		flags := "00"
		if sampled {
			flags = "01"
		}
		h := http.Header{"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-" + flags}}
		return propagator.Extract(context.Background(), propagation.HeaderCarrier(h))
	}
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	if _, s := tracer(0).Start(remote(trace, true), "x"); s.SpanContext().IsSampled() {
		t.Error("ratio 0: a remote parent's sampled flag forced sampling")
	}
	if _, s := tracer(1).Start(remote(trace, false), "x"); !s.SpanContext().IsSampled() {
		t.Error("ratio 1: a remote parent not sampled was not sampled")
	}
	// The ratio decides by trace id: 0x4bf92f3577b34da6 is past the
	// threshold of ratio 0.01 (the lower 63 bits of the id's last 8
	// bytes), so not sampled whatever the flag.
	if _, s := tracer(0.01).Start(remote("00000000000000000000000000000000"[:16]+"7fffffffffffffff", true), "x"); s.SpanContext().IsSampled() {
		t.Error("ratio 0.01: a trace id past the threshold was sampled because of the caller's flag")
	}
	// A local parent sampled is followed, whatever the ratio.
	ctx, parent := tracer(1).Start(context.Background(), "parent")
	if !parent.SpanContext().IsSampled() {
		t.Fatal("ratio 1: a root was not sampled")
	}
	if _, s := tracer(0).Start(ctx, "child"); !s.SpanContext().IsSampled() {
		t.Error("a local parent's decision was not followed")
	}
}

// TestHTTPServerSpanOff: with export off, no span starts and the request's
// context is returned as it is.
func TestHTTPServerSpanOff(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/v8/intents", nil)
	ctx, span, ok := StartHTTPServer(r)
	if ok || span != nil || ctx != r.Context() {
		t.Errorf("StartHTTPServer with export off: %v %v", span, ok)
	}
	if Tracing() {
		t.Error("Tracing with export off")
	}
}

// TestMCPOperationMetric records into the SDK's meter provider (a manual
// reader) what the MCP server middleware records while export is on:
// mcp.server.operation.duration in seconds, by method, tool and
// error.type; with export off it records nothing.
func TestMCPOperationMetric(t *testing.T) {
	RecordMCPOperation(context.Background(), time.Millisecond, "tools/call", "echo", "") // off: nothing, no panic
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	setMeter(mp.Meter(instrumentationName))
	defer setMeter(nil)
	RecordMCPOperation(context.Background(), 20*time.Millisecond, "tools/call", "echo", "")
	RecordMCPOperation(context.Background(), 30*time.Millisecond, "tools/call", "echo", "tool_error")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			found = true
			if m.Unit != "s" {
				t.Errorf("unit %q", m.Unit)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || len(h.DataPoints) != 2 {
				t.Fatalf("data %T %+v", m.Data, m.Data)
			}
			for _, dp := range h.DataPoints {
				method, _ := dp.Attributes.Value(tracing.KeyMCPMethod)
				tool, _ := dp.Attributes.Value(tracing.KeyToolName)
				errType, failed := dp.Attributes.Value(tracing.KeyErrorType)
				if method.AsString() != "tools/call" || tool.AsString() != "echo" || failed && errType.AsString() != "tool_error" {
					t.Errorf("data point %v", dp.Attributes.ToSlice())
				}
				if dp.Count != 1 || dp.Sum < 0.019 || dp.Sum > 0.031 {
					t.Errorf("data point count %d sum %v", dp.Count, dp.Sum)
				}
			}
		}
	}
	if !found {
		t.Errorf("no mcp.server.operation.duration in %+v", rm)
	}

	// A Recorder records http.server.request.duration of what it records,
	// by method, route and status (the second 503 under the attributes
	// cached by the first).
	rec := NewRecorder(NewRequests(), slog.New(slog.DiscardHandler), nil)
	rec.Record(context.Background(), Observation{Route: "/v8/intents", Method: http.MethodPost, Status: 503, Duration: 5 * time.Millisecond})
	rec.Record(context.Background(), Observation{Route: "/v8/intents", Method: http.MethodPost, Status: 200, Duration: 5 * time.Millisecond})
	rec.Record(context.Background(), Observation{Route: "/v8/intents", Method: http.MethodPost, Status: 503, Duration: 5 * time.Millisecond})
	rm = metricdata.ResourceMetrics{}
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found = false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "http.server.request.duration" {
				continue
			}
			found = true
			h := m.Data.(metricdata.Histogram[float64])
			if len(h.DataPoints) != 2 {
				t.Fatalf("http.server.request.duration: %+v", h.DataPoints)
			}
			for _, dp := range h.DataPoints {
				a := dp.Attributes
				method, _ := a.Value("http.request.method")
				route, _ := a.Value("http.route")
				status, _ := a.Value("http.response.status_code")
				errType, hasErr := a.Value(tracing.KeyErrorType)
				switch {
				case method.AsString() != http.MethodPost || route.AsString() != "/v8/intents":
					t.Errorf("http.server.request.duration attributes %v", a.ToSlice())
				case status.AsInt64() == 503 && (errType.AsString() != "503" || dp.Count != 2):
					t.Errorf("503: attributes %v, count %d", a.ToSlice(), dp.Count)
				case status.AsInt64() == 200 && (hasErr || dp.Count != 1):
					t.Errorf("200: attributes %v, count %d", a.ToSlice(), dp.Count)
				case status.AsInt64() != 503 && status.AsInt64() != 200:
					t.Errorf("status %v", status)
				}
			}
		}
	}
	if !found {
		t.Errorf("no http.server.request.duration in %+v", rm)
	}
}

// TestSpanIDsTimeOrdered: the export's tracer provider (traceOptions)
// starts each new trace with an id that leads with the time in
// milliseconds, as export off mints a request's trace (ids.Trace), so that
// the audit events' trace index stays ordered; span ids are valid and
// distinct; and the ratio sampler, which reads the id's random last 8
// bytes, still samples about the ratio of new traces.
func TestSpanIDsTimeOrdered(t *testing.T) {
	tracer := sdktrace.NewTracerProvider(traceOptions(0.5)...).Tracer("t")
	before := uint64(time.Now().UnixMilli())
	const n = 4000
	sampled := 0
	traces, spans := map[oteltrace.TraceID]bool{}, map[oteltrace.SpanID]bool{}
	for range n {
		ctx, root := tracer.Start(context.Background(), "root")
		_, child := tracer.Start(ctx, "child")
		sc := root.SpanContext()
		if !sc.TraceID().IsValid() || !sc.SpanID().IsValid() || !child.SpanContext().SpanID().IsValid() {
			t.Fatalf("invalid ids: %v %v", sc, child.SpanContext())
		}
		if child.SpanContext().TraceID() != sc.TraceID() {
			t.Fatal("a child span left its parent's trace")
		}
		traces[sc.TraceID()] = true
		spans[sc.SpanID()], spans[child.SpanContext().SpanID()] = true, true
		if sc.IsSampled() {
			sampled++
		}
		id := sc.TraceID()
		ms := uint64(id[0])<<40 | uint64(id[1])<<32 | uint64(id[2])<<24 | uint64(id[3])<<16 | uint64(id[4])<<8 | uint64(id[5])
		if after := uint64(time.Now().UnixMilli()); ms < before || ms > after {
			t.Fatalf("trace id %s: its time %d is not between %d and %d", id, ms, before, after)
		}
	}
	if len(traces) != n || len(spans) != 2*n {
		t.Errorf("%d distinct trace ids and %d span ids, want %d and %d", len(traces), len(spans), n, 2*n)
	}
	// Binomial(4000, 0.5): the standard deviation is about 32.
	if sampled < n/2-300 || sampled > n/2+300 {
		t.Errorf("ratio 0.5 sampled %d of %d new traces", sampled, n)
	}
}
