// Package tracing is the part of the gateway's OpenTelemetry tracing that
// every layer may import, the workflow engine and the store drivers
// included: whether spans are exported (On), the gateway's tracer, child
// spans under the span of a context, the attribute keys and the bound on
// attribute values. It imports OpenTelemetry's trace API only (no SDK, no
// HTTP): package telemetry sets the SDK up and hands its tracer to Set.
package tracing

import (
	"context"
	"encoding/hex"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Attribute keys of the semantic conventions (MCP, errors) and of the
// gateway (praxa.*).
const (
	KeyMCPMethod          = attribute.Key("mcp.method.name")
	KeyMCPProtocolVersion = attribute.Key("mcp.protocol.version")
	KeyToolName           = attribute.Key("gen_ai.tool.name")
	KeyJSONRPCRequestID   = attribute.Key("jsonrpc.request.id")
	KeyNetworkTransport   = attribute.Key("network.transport")
	KeyErrorType          = attribute.Key("error.type")

	KeyTenant     = attribute.Key("praxa.tenant")
	KeyRunID      = attribute.Key("praxa.run.id")
	KeyCapability = attribute.Key("praxa.capability")
	KeyOperation  = attribute.Key("praxa.operation")
	KeyOutcome    = attribute.Key("praxa.outcome")
	KeyExecutor   = attribute.Key("praxa.executor")
	KeyConnection = attribute.Key("praxa.connection")
)

// MaxAttributeLength bounds the length of every attribute value a span
// holds (a caller-controlled value is cut there; the SDK's span limits
// say the same).
const MaxAttributeLength = 256

// tracer is the exporting tracer while export is on; nil while it is off.
var tracer atomic.Pointer[tracerBox]

type tracerBox struct{ trace.Tracer }

var noopTracer = noop.NewTracerProvider().Tracer("github.com/praxa/praxa")

// Set makes t the gateway's tracer (nil: export is off).
func Set(t trace.Tracer) {
	if t == nil {
		tracer.Store(nil)
		return
	}
	tracer.Store(&tracerBox{t})
}

// On reports whether spans are exported: a layer skips every span (and
// builds no attribute) when it is not.
func On() bool { return tracer.Load() != nil }

// Tracer returns the gateway's tracer: the exporting one while On, a
// no-op tracer otherwise.
func Tracer() trace.Tracer {
	if b := tracer.Load(); b != nil {
		return b.Tracer
	}
	return noopTracer
}

// Bounded cuts a value a caller chose to MaxAttributeLength bytes (on a
// UTF-8 boundary).
func Bounded(s string) string {
	if len(s) <= MaxAttributeLength {
		return s
	}
	cut := MaxAttributeLength
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut]
}

// Recording reports whether the span in ctx records (export is on and
// the request was sampled): a layer builds a child span's attributes only
// then.
func Recording(ctx context.Context) bool {
	return tracer.Load() != nil && trace.SpanFromContext(ctx).IsRecording()
}

// StartChild starts a span of kind under the span in ctx, only when that
// span records (Recording): work outside a traced request (a background
// sweep) or in a request sampled out starts none, and span is nil; the
// hops of a request sampled out carry the request's span context on. attrs
// are set on the span.
func StartChild(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	b := tracer.Load()
	if b == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	ctx, span := b.Start(ctx, name, trace.WithSpanKind(kind))
	if len(attrs) > 0 {
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// StartStoreUpdate starts the span of a store transaction that may commit
// an effect (db.system.name system: sqlite or postgresql), under the span
// in ctx (StartChild): nil when none.
func StartStoreUpdate(ctx context.Context, system string) (context.Context, trace.Span) {
	if tracer.Load() == nil {
		return ctx, nil
	}
	return StartChild(ctx, "store.update", trace.SpanKindInternal, attribute.String("db.system.name", system))
}

// End ends span (nil: nothing), marked failed with error.type when err or
// errType is set: errType names the failure (empty: _OTHER). No error text
// is recorded (it may quote a value).
func End(span trace.Span, err error, errType string) {
	if span == nil {
		return
	}
	if (err != nil || errType != "") && span.IsRecording() {
		if errType == "" {
			errType = "_OTHER"
		}
		span.SetAttributes(KeyErrorType.String(Bounded(errType)))
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// Annotate sets the gateway's attributes of a call on the span in ctx,
// when it records: the tenant, the operation, the capability, the run and
// the outcome ("ok" or an error code), each only when set.
func Annotate(ctx context.Context, tenant, operation, capability, runID, outcome string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	for _, a := range [...]struct {
		k attribute.Key
		v string
	}{{KeyTenant, tenant}, {KeyOperation, operation}, {KeyCapability, capability}, {KeyRunID, runID}, {KeyOutcome, outcome}} {
		if a.v != "" {
			attrs = append(attrs, a.k.String(Bounded(a.v)))
		}
	}
	span.SetAttributes(attrs...)
}

// Traceparent is the W3C traceparent of the span context sc, in one
// allocation: its trace id is Traceparent(sc)[3:35].
func Traceparent(sc trace.SpanContext) string {
	var b [55]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	b[0], b[1], b[2] = '0', '0', '-'
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52], b[53], b[54] = '-', '0', '0'
	if sc.IsSampled() {
		b[54] = '1'
	}
	return string(b[:])
}
