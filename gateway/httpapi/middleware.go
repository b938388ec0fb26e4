package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/ids"
)

type ctxKey int

const keyRequest ctxKey = iota

// requestInfo is what identify puts in a request's context: one value for
// both ids, so that a request pays one context layer for them. mu guards
// trace and sealed: JoinTrace may change the trace from a handler's
// goroutine (the MCP transport runs calls on goroutines of its own) until
// finish seals it.
type requestInfo struct {
	id string

	mu     sync.Mutex
	trace  string
	sealed bool
	header http.Header // the answer's headers, for JoinTrace's Traceparent
}

func requestID(ctx context.Context) string {
	if ri, _ := ctx.Value(keyRequest).(*requestInfo); ri != nil {
		return ri.id
	}
	return ""
}

// RequestID returns the id of the request in ctx.
func RequestID(ctx context.Context) string { return requestID(ctx) }

// TraceID returns the W3C trace id of the request in ctx.
func TraceID(ctx context.Context) string {
	if ri, _ := ctx.Value(keyRequest).(*requestInfo); ri != nil {
		ri.mu.Lock()
		defer ri.mu.Unlock()
		return ri.trace
	}
	return ""
}

// JoinTrace makes trace, a W3C trace id the caller read from the request's
// body (an MCP request's _meta.traceparent, which ids.ParseTraceparent
// checked), the trace of the request in ctx: TraceID answers it, and so do
// the answer's Traceparent header and the request's log line. The caller
// calls it before anything of the answer is written, and for one message
// per request (not from the calls of a JSON-RPC batch, whose answers may be
// under way). It reports whether the request was still open.
func JoinTrace(ctx context.Context, trace string) bool {
	ri, _ := ctx.Value(keyRequest).(*requestInfo)
	if ri == nil {
		return false
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if ri.sealed {
		return false
	}
	ri.trace = trace
	ri.header["Traceparent"] = []string{"00-" + trace + "-" + ids.Span() + "-01"}
	return true
}

// validRequestID reports whether a client's X-Request-Id is kept: 1 to 64
// characters of [A-Za-z0-9._:-].
func validRequestID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// traceFrom honours a valid W3C traceparent (ids.ParseTraceparent) and
// mints a trace id otherwise.
func traceFrom(h string) string {
	if trace, ok := ids.ParseTraceparent(h); ok {
		return trace
	}
	return ids.Trace()
}

// statusWriter records the status a handler answers with. Like chi's
// WrapResponseWriter it passes 1xx informational answers on and keeps the
// first final status, ignoring later WriteHeader calls.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if w.status == 0 {
		w.status = code
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher (the streamable MCP transport flushes).
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observed is the per-request state of observe, allocated once.
type observed struct {
	statusWriter
	info requestInfo
}

// observe gives every request an id and a trace id (X-Request-Id and
// Traceparent answered), recovers panics, and records metrics and one log
// line labelled with the route pattern.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.Now()
		o := &observed{statusWriter: statusWriter{ResponseWriter: w}}
		o.info.id = r.Header.Get("X-Request-Id")
		if !validRequestID(o.info.id) {
			o.info.id = ids.Request()
		}
		o.info.trace = traceFrom(r.Header.Get("Traceparent"))
		ctx := context.WithValue(r.Context(), keyRequest, &o.info)
		h := w.Header()
		o.info.header = h
		h["X-Request-Id"] = []string{o.info.id}
		h["Traceparent"] = []string{"00-" + o.info.trace + "-" + ids.Span() + "-01"}
		defer s.finish(ctx, o, r, start)
		next.ServeHTTP(&o.statusWriter, r.WithContext(ctx))
	})
}

// finish recovers a panic of the request's handler, then records the
// request's metrics and log line. An MCP request (route /mcp) is labelled
// with its Mcp-Method and Mcp-Name headers as well (mcpLabels).
func (s *server) finish(ctx context.Context, o *observed, r *http.Request, start time.Time) {
	method := r.Method
	if rec := recover(); rec != nil {
		if rec == http.ErrAbortHandler {
			panic(rec)
		}
		s.Logger.ErrorContext(ctx, "panic serving request", "request_id", o.info.id, "panic", fmt.Sprint(rec))
		if o.status == 0 {
			writeProblem(&o.statusWriter, 0, &contracts.Error{Code: contracts.CodeInternal, Message: "internal error"}, o.info.id)
		}
	}
	route := "unmatched"
	if rc := chi.RouteContext(ctx); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			route = p
		}
	}
	status := o.status
	if status == 0 {
		status = http.StatusOK
	}
	d := s.Now().Sub(start)
	o.info.mu.Lock()
	o.info.sealed = true
	trace := o.info.trace
	o.info.mu.Unlock()
	var mcpMethod, mcpName string
	if route == mcpRoute {
		mcpMethod, mcpName = r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name")
	}
	labelMethod, labelTool := s.mcpLabels(route, mcpMethod, mcpName)
	s.Metrics.observe(route, method, labelMethod, labelTool, status, d)
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	if !s.AccessLog.Enabled(ctx, level) {
		return
	}
	attrs := [8]slog.Attr{slog.String("request_id", o.info.id), slog.String("trace_id", trace), slog.String("method", method),
		slog.String("route", route), slog.Int("status", status), slog.Duration("duration", d)}
	n := 6
	if mcpMethod != "" {
		attrs[n] = slog.String("mcp_method", mcpMethod)
		n++
	}
	if mcpName != "" {
		attrs[n] = slog.String("mcp_name", mcpName)
		n++
	}
	s.AccessLog.LogAttrs(ctx, level, "request", attrs[:n]...)
}

// deadline bounds every API request by the configured timeout; operations
// honour the context.
func (s *server) deadline(next http.Handler) http.Handler {
	d := time.Duration(s.limits.RequestTimeout)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
