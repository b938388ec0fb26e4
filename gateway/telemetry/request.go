// Package telemetry is what every surface of the gateway records of the
// requests it serves, the same way on each: REST and /mcp over HTTP
// (package httpapi's middleware) and MCP on stdio (package mcpadapter's
// Instrument). It holds
//
//   - a request's ids in its context (NewContext, RequestID, TraceID,
//     JoinTrace): the request id, and the W3C trace id an MCP request may
//     still join from its _meta until the request is recorded; and the
//     trace of the gateway's own work outside a request (WithTrace);
//   - the slog.Handler that writes those ids on every log line logged in
//     the request's context (Logger, NewLogHandler);
//   - the request metrics (Requests: praxa_http_requests_total and
//     praxa_http_request_duration_seconds) and the one "request" log line
//     per request (Recorder), MCP requests labelled with their bounded
//     method and tool.
//
// It imports the standard library, package ids and the Prometheus client
// only: not the service, nor a surface, nor a router, so that every surface
// can import it.
package telemetry

import (
	"context"
	"net/http"
	"sync"

	"github.com/praxa/praxa/gateway/ids"
)

// Request is one request's ids: its request id, and its W3C trace id,
// which JoinTrace may change until the request is recorded
// (Recorder.Record seals it). A surface embeds it in its own per-request
// state, so that one allocation holds both, and puts that in the request's
// context with NewContext.
type Request struct {
	id string

	// mu guards trace and sealed: JoinTrace may change the trace from a
	// handler's goroutine (the MCP transport runs calls on goroutines of
	// its own) until Record seals it.
	mu     sync.Mutex
	trace  string
	sealed bool
	// header, when set, holds the answer's headers: JoinTrace sets its
	// Traceparent.
	header http.Header
}

// Start gives r its ids: id, trace, and header, the answer's headers when
// the request has any (HTTP), whose Traceparent JoinTrace then sets. Call
// it once, before r is put in a context.
func (r *Request) Start(id, trace string, header http.Header) {
	r.id, r.trace, r.header = id, trace, header
}

// telemetryRequest returns r: it makes *Request, and every struct that
// embeds Request, a Carrier.
func (r *Request) telemetryRequest() *Request { return r }

// seal ends the window in which JoinTrace may change the trace, and
// returns the trace.
func (r *Request) seal() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sealed = true
	return r.trace
}

// currentTrace is the trace now.
func (r *Request) currentTrace() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trace
}

// A Carrier carries a request's ids through its context: a *Request, or a
// pointer to a surface's per-request state that embeds Request (httpapi
// finds its status writer there again).
type Carrier interface {
	telemetryRequest() *Request
}

// requestKey is the context key of a request's Carrier.
type requestKey struct{}

// NewContext returns ctx carrying c, the request's ids: RequestID, TraceID
// and JoinTrace read them there, and so does the log handler.
func NewContext(ctx context.Context, c Carrier) context.Context {
	return context.WithValue(ctx, requestKey{}, c)
}

// CarrierFrom returns the Carrier NewContext put in ctx, nil if none.
func CarrierFrom(ctx context.Context) Carrier {
	c, _ := ctx.Value(requestKey{}).(Carrier)
	return c
}

// WithTrace returns ctx carrying trace as the trace of work the gateway
// does outside any request (a reload on SIGHUP): TraceID answers it, and
// the log handler writes it as trace_id (with no request_id) on every line
// logged in ctx. A ctx that carries a request already, whose trace it is
// then, or an empty trace leaves ctx as it is.
func WithTrace(ctx context.Context, trace string) context.Context {
	if trace == "" || requestFrom(ctx) != nil {
		return ctx
	}
	return NewContext(ctx, &Request{trace: trace, sealed: true})
}

// requestFrom returns the request in ctx, nil if none.
func requestFrom(ctx context.Context) *Request {
	if c := CarrierFrom(ctx); c != nil {
		return c.telemetryRequest()
	}
	return nil
}

// RequestID returns the id of the request in ctx ("" outside a request).
func RequestID(ctx context.Context) string {
	if r := requestFrom(ctx); r != nil {
		return r.id
	}
	return ""
}

// TraceID returns the W3C trace id of the request in ctx ("" outside a
// request).
func TraceID(ctx context.Context) string {
	if r := requestFrom(ctx); r != nil {
		return r.currentTrace()
	}
	return ""
}

// JoinTrace makes trace, a W3C trace id the caller read from the request's
// body (an MCP request's _meta.traceparent, which ids.ParseTraceparent
// checked), the trace of the request in ctx: TraceID answers it, and so do
// the answer's Traceparent header and the request's log lines. The caller
// calls it before anything of the answer is written, and for one message
// per request (not from the calls of a JSON-RPC batch, whose answers may be
// under way). It reports whether the request was still open.
func JoinTrace(ctx context.Context, trace string) bool {
	r := requestFrom(ctx)
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return false
	}
	r.trace = trace
	if r.header != nil {
		r.header["Traceparent"] = []string{ids.Traceparent(trace)}
	}
	return true
}
