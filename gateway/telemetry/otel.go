package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// This file is the gateway's OpenTelemetry export: spans and metrics over
// OTLP (HTTP or gRPC) through the OpenTelemetry Go SDK, configured by the
// telemetry block of praxec.yaml (Settings) and the standard OTEL_*
// environment variables, which override it. With no endpoint (or
// OTEL_SDK_DISABLED=true) nothing is set up: Tracing reports false, and the
// surfaces skip every span and attribute on their hot paths.

// Protocols of OTLP export (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// DefaultServiceName is the service.name of the gateway's spans and
// metrics when neither OTEL_SERVICE_NAME nor the configuration names one.
const DefaultServiceName = "praxa"

// DefaultSampleRatio is the share of traces sampled when neither
// OTEL_TRACES_SAMPLER_ARG nor the configuration says.
const DefaultSampleRatio = 1.0

// Settings are the telemetry block of praxec.yaml: where traces and
// metrics are exported, and how many traces are sampled. The OTEL_*
// environment variables override each (Resolve).
type Settings struct {
	// Endpoint is the OTLP endpoint's base URL (http://host:4318 for
	// http/protobuf, http://host:4317 for grpc); empty: no export unless
	// OTEL_EXPORTER_OTLP_ENDPOINT names one.
	Endpoint string
	// Protocol is ProtocolHTTP (the default) or ProtocolGRPC.
	Protocol string
	// SampleRatio is the share of traces sampled, 0 to 1 (nil:
	// DefaultSampleRatio).
	SampleRatio *float64
	// ServiceName is the service.name resource attribute (empty:
	// DefaultServiceName).
	ServiceName string
	// Disabled turns export off whatever the endpoint.
	Disabled bool
	// MetricInterval is how often metrics are exported (0: the SDK's
	// default, 60s, or OTEL_METRIC_EXPORT_INTERVAL).
	MetricInterval time.Duration
}

// Resolved is what Resolve made of the settings and the environment.
type Resolved struct {
	// On reports whether anything is exported.
	On bool
	// Endpoint is the endpoint set by the configuration when the
	// environment names none (the exporters read the environment's
	// themselves); empty otherwise.
	Endpoint string
	// Protocol is ProtocolHTTP or ProtocolGRPC.
	Protocol    string
	SampleRatio float64
	ServiceName string
	// MetricInterval is the configuration's, unless the environment
	// sets OTEL_METRIC_EXPORT_INTERVAL (0: the SDK decides).
	MetricInterval time.Duration
}

// Resolve applies the standard environment variables (getenv: nil is
// none) over s: OTEL_SDK_DISABLED, OTEL_EXPORTER_OTLP_ENDPOINT (and
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), OTEL_EXPORTER_OTLP_PROTOCOL (and
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL), OTEL_TRACES_SAMPLER_ARG and
// OTEL_SERVICE_NAME. An endpoint in either place alone turns export on.
func Resolve(s Settings, getenv func(string) string) (Resolved, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	r := Resolved{Protocol: ProtocolHTTP, SampleRatio: DefaultSampleRatio, ServiceName: DefaultServiceName, MetricInterval: s.MetricInterval}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") || s.Disabled {
		return r, nil
	}
	envEndpoint := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	if !envEndpoint && s.Endpoint == "" {
		return r, nil
	}
	r.On = true
	if !envEndpoint {
		r.Endpoint = s.Endpoint
	}
	if s.Protocol != "" {
		r.Protocol = s.Protocol
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			r.Protocol = v
		}
	}
	if r.Protocol != ProtocolHTTP && r.Protocol != ProtocolGRPC {
		return r, fmt.Errorf("telemetry: OTLP protocol %q is not supported (%s or %s)", r.Protocol, ProtocolHTTP, ProtocolGRPC)
	}
	if s.SampleRatio != nil {
		r.SampleRatio = *s.SampleRatio
	}
	if v := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG")); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return r, fmt.Errorf("telemetry: OTEL_TRACES_SAMPLER_ARG %q is not a ratio", v)
		}
		r.SampleRatio = f
	}
	if r.SampleRatio < 0 || r.SampleRatio > 1 || r.SampleRatio != r.SampleRatio {
		return r, fmt.Errorf("telemetry: the sample ratio %v is not between 0 and 1", r.SampleRatio)
	}
	if s.ServiceName != "" {
		r.ServiceName = s.ServiceName
	}
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		r.ServiceName = v
	}
	if getenv("OTEL_METRIC_EXPORT_INTERVAL") != "" {
		r.MetricInterval = 0
	}
	return r, nil
}

// Sampler is the gateway's sampler: parent-based, but a remote parent's
// sampled flag is not trusted: a span whose parent came from a caller (a
// traceparent header or an MCP request's _meta.traceparent) is sampled by
// the ratio on its trace id, as a root is, so no caller can have every
// request traced; a span under a local parent follows it.
func Sampler(ratio float64) sdktrace.Sampler {
	byRatio := sdktrace.TraceIDRatioBased(ratio)
	return sdktrace.ParentBased(byRatio,
		sdktrace.WithRemoteParentSampled(byRatio),
		sdktrace.WithRemoteParentNotSampled(byRatio))
}

// traceOptions are the tracer provider's options but its exporter and
// resource: the sampler (Sampler), the span limits and the ids.
func traceOptions(ratio float64) []sdktrace.TracerProviderOption {
	return []sdktrace.TracerProviderOption{
		sdktrace.WithSampler(Sampler(ratio)),
		sdktrace.WithRawSpanLimits(spanLimits),
		sdktrace.WithIDGenerator(idGenerator{}),
	}
}

// idGenerator mints the ids of the spans the gateway starts as export
// off mints a request's ids (package ids): a new trace's id leads with
// the time in milliseconds and keeps 80 random bits (ids.TraceBytes),
// where the SDK's default generator draws all 128 at random. The trace id
// is stored with every audit event of the request, and the events' trace
// index takes time-ordered ids on its last pages; random ones land on a
// random page each, so that a batch of events dirtied a page of the index
// per event (more WAL written, synced and checkpointed: most of what export
// on cost a cheap request, see BENCHMARKS.md). The ratio sampler reads the
// id's last 8 bytes, which stay random.
type idGenerator struct{}

func (idGenerator) NewIDs(context.Context) (oteltrace.TraceID, oteltrace.SpanID) {
	return ids.TraceBytes(), ids.SpanBytes()
}

func (idGenerator) NewSpanID(context.Context, oteltrace.TraceID) oteltrace.SpanID {
	return ids.SpanBytes()
}

// Export is the process's OpenTelemetry export, set up by Start:
// Shutdown flushes and stops it.
type Export struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
	// Resolved is what the export was set up with.
	Resolved Resolved
}

// instrumentationName names the gateway's tracer and meter.
const instrumentationName = "github.com/praxa/praxa/gateway/telemetry"

// Tracing reports whether spans are exported (tracing.On).
func Tracing() bool { return tracing.On() }

// spanLimits bound what one span holds, whoever set its attributes.
var spanLimits = sdktrace.SpanLimits{
	AttributeValueLengthLimit:   tracing.MaxAttributeLength,
	AttributeCountLimit:         64,
	EventCountLimit:             16,
	LinkCountLimit:              8,
	AttributePerEventCountLimit: 16,
	AttributePerLinkCountLimit:  8,
}

// propagator is the W3C trace context, what every hop carries.
var propagator = propagation.TraceContext{}

// Propagator returns the W3C trace context propagator every hop uses.
func Propagator() propagation.TextMapPropagator { return propagator }

// started guards Start: one export per process.
var started atomic.Bool

// Start sets up the export s and the environment say (Resolve), once per
// process: it returns nil, and sets nothing up, when export is off or
// already set up (a second gateway in one process exports through the
// first's). The tracer and meter providers become OpenTelemetry's global
// ones, so that otelhttp's client spans use them too; log receives the
// export's errors (nil: the SDK's default).
func Start(ctx context.Context, s Settings, getenv func(string) string, log *slog.Logger) (*Export, error) {
	r, err := Resolve(s, getenv)
	if err != nil || !r.On {
		return nil, err
	}
	if !started.CompareAndSwap(false, true) {
		return nil, nil
	}
	if log != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("telemetry export", "err", err) }))
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", r.ServiceName)))
	if err != nil {
		res = resource.Default()
	}
	spans, err := newSpanExporter(ctx, r)
	if err != nil {
		started.Store(false)
		return nil, err
	}
	metrics, err := newMetricExporter(ctx, r)
	if err != nil {
		started.Store(false)
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(append(traceOptions(r.SampleRatio),
		sdktrace.WithBatcher(spans),
		sdktrace.WithResource(res))...)
	var readerOpts []sdkmetric.PeriodicReaderOption
	if r.MetricInterval > 0 {
		readerOpts = append(readerOpts, sdkmetric.WithInterval(r.MetricInterval))
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics, readerOpts...)))
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(propagator)
	setMeter(mp.Meter(instrumentationName))
	tracing.Set(tp.Tracer(instrumentationName))
	return &Export{tp: tp, mp: mp, Resolved: r}, nil
}

// Shutdown flushes the spans and metrics not yet exported and stops the
// export (a nil Export does nothing). Tracing reports false from here on.
func (e *Export) Shutdown(ctx context.Context) error {
	if e == nil {
		return nil
	}
	tracing.Set(nil)
	setMeter(nil)
	err := errors.Join(e.tp.Shutdown(ctx), e.mp.Shutdown(ctx))
	started.Store(false)
	return err
}

// newSpanExporter is the OTLP span exporter r names. The exporters read
// the OTEL_EXPORTER_OTLP_* variables themselves (endpoint, headers,
// timeout, certificate); the configuration's endpoint is passed when the
// environment names none.
func newSpanExporter(ctx context.Context, r Resolved) (sdktrace.SpanExporter, error) {
	if r.Protocol == ProtocolGRPC {
		return otlptracegrpc.New(ctx, endpointOption(r.Endpoint, "", otlptracegrpc.WithEndpointURL)...)
	}
	return otlptracehttp.New(ctx, endpointOption(r.Endpoint, "/v1/traces", otlptracehttp.WithEndpointURL)...)
}

// newMetricExporter is the OTLP metric exporter r names.
func newMetricExporter(ctx context.Context, r Resolved) (sdkmetric.Exporter, error) {
	if r.Protocol == ProtocolGRPC {
		return otlpmetricgrpc.New(ctx, endpointOption(r.Endpoint, "", otlpmetricgrpc.WithEndpointURL)...)
	}
	return otlpmetrichttp.New(ctx, endpointOption(r.Endpoint, "/v1/metrics", otlpmetrichttp.WithEndpointURL)...)
}

// endpointOption is the exporter option (withURL) of the configured
// endpoint, none when the configuration names none. Over HTTP the URL is
// the signal's (signalPath appended); over gRPC ("") the endpoint itself.
func endpointOption[O any](endpoint, signalPath string, withURL func(string) O) []O {
	if endpoint == "" {
		return nil
	}
	if signalPath != "" {
		endpoint = signalURL(endpoint, signalPath)
	}
	return []O{withURL(endpoint)}
}

// signalURL is base with a signal's path appended, as the OTLP exporters
// do with OTEL_EXPORTER_OTLP_ENDPOINT.
func signalURL(base, path string) string {
	return strings.TrimSuffix(base, "/") + path
}

// meterBox holds the OTLP metrics while export is on: the MCP
// operations' and the HTTP requests' durations.
type meterBox struct {
	ops, requests metric.Float64Histogram
	// requestAttrs caches the attributes of http.server.request.duration
	// by label values (httpKey -> []metric.RecordOption), so that a
	// request does not build and sort its attribute set again: the values
	// are bounded as the Prometheus labels are (Requests.bound).
	requestAttrs sync.Map
}

// httpKey is the label values of one HTTP request's OTLP metric.
type httpKey struct {
	method, route string
	status        int
}

var meters atomic.Pointer[meterBox]
