package telemetry

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/praxa/praxa/gateway/telemetry/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/semconv/v1.40.0/httpconv"
	"go.opentelemetry.io/otel/semconv/v1.40.0/mcpconv"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// The spans every surface starts while Tracing, with the attributes of
// OpenTelemetry's semantic conventions (HTTP server and client, MCP) and
// the gateway's own under the praxa. prefix. No attribute holds a secret,
// a token or an argument's value; the values a caller chooses are cut to
// tracing.MaxAttributeLength (and the span limits bound their count).

// StartHTTPServer starts the server span of an HTTP request r while
// Tracing (a zero span otherwise: ok is false): its parent is the
// request's traceparent header when valid, a remote parent that the
// sampler samples by ratio like a root. Its name is the method until
// EndHTTPServer names its route.
func StartHTTPServer(r *http.Request) (ctx context.Context, span oteltrace.Span, ok bool) {
	if !tracing.On() {
		return r.Context(), nil, false
	}
	ctx = propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span = tracing.Tracer().Start(ctx, r.Method, serverSpan...)
	if span.IsRecording() {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs,
			attribute.String("http.request.method", httpMethod(r.Method)),
			attribute.String("url.path", tracing.Bounded(r.URL.Path)),
			attribute.String("url.scheme", scheme),
			attribute.String("network.protocol.version", strconv.Itoa(r.ProtoMajor)+"."+strconv.Itoa(r.ProtoMinor)))
		if host, port, err := net.SplitHostPort(r.Host); err == nil {
			attrs = append(attrs, attribute.String("server.address", tracing.Bounded(host)))
			if p, err := strconv.Atoi(port); err == nil {
				attrs = append(attrs, attribute.Int("server.port", p))
			}
		}
		if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			attrs = append(attrs, attribute.String("client.address", ip))
		}
		if ua := r.Header.Get("User-Agent"); ua != "" {
			attrs = append(attrs, attribute.String("user_agent.original", tracing.Bounded(ua)))
		}
		span.SetAttributes(attrs...)
	}
	return ctx, span, true
}

// serverSpan are the options of an HTTP server span, built once.
var serverSpan = []oteltrace.SpanStartOption{oteltrace.WithSpanKind(oteltrace.SpanKindServer)}

// EndHTTPServer ends the server span of an HTTP request served by the
// route pattern route with status.
func EndHTTPServer(span oteltrace.Span, method, route string, status int) {
	if span.IsRecording() {
		span.SetName(httpMethod(method) + " " + route)
		span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetAttributes(tracing.KeyErrorType.String(strconv.Itoa(status)))
			span.SetStatus(codes.Error, "")
		}
	}
	span.End()
}

// httpMethod is method as the HTTP conventions name it: the known methods
// as they are, every other _OTHER.
func httpMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch,
		http.MethodHead, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "_OTHER"
}

// setMeter makes the MCP metrics on m (nil: off).
func setMeter(m metric.Meter) {
	if m == nil {
		meters.Store(nil)
		return
	}
	ops, err := mcpconv.NewServerOperationDuration(m, metric.WithExplicitBucketBoundaries(
		0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	if err != nil {
		return
	}
	requests, err := httpconv.NewServerRequestDuration(m, metric.WithExplicitBucketBoundaries(
		0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	if err != nil {
		return
	}
	meters.Store(&meterBox{ops: ops.Inst(), requests: requests.Inst()})
}

// recordHTTPServer records one HTTP request served
// (http.server.request.duration) while export is on, by method, route
// pattern and status: the labels the Prometheus metrics have, bounded the
// same way.
func recordHTTPServer(ctx context.Context, d time.Duration, method, route string, status int) {
	m := meters.Load()
	if m == nil {
		return
	}
	k := httpKey{method: httpMethod(method), route: route, status: status}
	opts, ok := m.requestAttrs.Load(k)
	if !ok {
		attrs := make([]attribute.KeyValue, 0, 4)
		attrs = append(attrs, attribute.String("http.request.method", k.method), attribute.String("http.route", route),
			attribute.Int("http.response.status_code", status))
		if status >= 500 {
			attrs = append(attrs, tracing.KeyErrorType.String(strconv.Itoa(status)))
		}
		opts, _ = m.requestAttrs.LoadOrStore(k, []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))})
	}
	m.requests.Record(ctx, d.Seconds(), opts.([]metric.RecordOption)...)
}

// RecordMCPOperation records one MCP request or notification a server
// served (mcp.server.operation.duration) while export is on: method and
// tool are bounded by the caller (an MCP method, a registered tool's
// name), errType is set when it failed.
func RecordMCPOperation(ctx context.Context, d time.Duration, method, tool, errType string) {
	m := meters.Load()
	if m == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, tracing.KeyMCPMethod.String(method))
	if tool != "" {
		attrs = append(attrs, tracing.KeyToolName.String(tool))
	}
	if errType != "" {
		attrs = append(attrs, tracing.KeyErrorType.String(errType))
	}
	m.ops.Record(ctx, d.Seconds(), metric.WithAttributes(attrs...))
}

// MCPMethod bounds an MCP method name for an attribute or a label: an MCP
// method as it is, anything else _OTHER.
func MCPMethod(method string) string {
	if mcpMethods[method] {
		return method
	}
	return "_OTHER"
}

// MetaCarrier carries W3C trace context in an MCP request's _meta
// (SEP-414: its traceparent and tracestate members), for the propagator.
type MetaCarrier map[string]any

// Get returns the string member key ("" when absent or not a string).
func (c MetaCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}

// Set sets the member key.
func (c MetaCarrier) Set(key, value string) { c[key] = value }

// Keys returns the members' names.
func (c MetaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// StartHTTPClient starts the client span of an upstream HTTP request req
// under the span in ctx when it records (StartChild; nil otherwise, and
// req's Traceparent is left as the caller set it) and sets req's
// Traceparent to it. Its attributes are the HTTP client conventions' but
// url.full: the path template (url.template, the configured one), never
// the request's path or query, which may hold an argument's value.
func StartHTTPClient(ctx context.Context, req *http.Request, template string) oteltrace.Span {
	if !tracing.Recording(ctx) {
		return nil
	}
	name := httpMethod(req.Method)
	if template != "" {
		name += " " + template
	}
	ctx, span := tracing.StartChild(ctx, name, oteltrace.SpanKindClient)
	if span == nil {
		return nil
	}
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 4)
		attrs = append(attrs, attribute.String("http.request.method", httpMethod(req.Method)),
			attribute.String("server.address", tracing.Bounded(req.URL.Hostname())))
		if p, err := strconv.Atoi(req.URL.Port()); err == nil {
			attrs = append(attrs, attribute.Int("server.port", p))
		}
		if template != "" {
			attrs = append(attrs, attribute.String("url.template", tracing.Bounded(template)))
		}
		span.SetAttributes(attrs...)
	}
	propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return span
}

// EndHTTPClient ends the client span of an upstream HTTP request (nil:
// nothing) that answered resp, or failed with err before an answer.
func EndHTTPClient(span oteltrace.Span, resp *http.Response, err error) {
	if span == nil {
		return
	}
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if span.IsRecording() && status > 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
	}
	switch {
	case err != nil:
		tracing.End(span, err, "_OTHER")
	case status >= 400:
		tracing.End(span, nil, strconv.Itoa(status))
	default:
		span.End()
	}
}

// Transport returns next with every request an HTTP client span
// (StartHTTPClient, under the span of the request's context) while
// Tracing, next itself otherwise: for a client whose requests name no
// argument in their URL (praxa mcp --gateway's calls to the gateway).
func Transport(next http.RoundTripper) http.RoundTripper {
	if !tracing.On() {
		return next
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return clientTransport{next: next}
}

type clientTransport struct{ next http.RoundTripper }

func (t clientTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	span := StartHTTPClient(r.Context(), r, "")
	resp, err := t.next.RoundTrip(r)
	EndHTTPClient(span, resp, err)
	return resp, err
}
