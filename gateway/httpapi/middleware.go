package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
)

// The middleware every request passes, outermost first (New):
// requestIDs, s.instrument, s.recoverer. Each is chi-shaped
// (func(http.Handler) http.Handler); their per-request state is one
// exchange, which requestIDs allocates and puts in the context.

// mcpRoute is the route pattern of the MCP endpoint.
const mcpRoute = "/mcp"

// requestID is the id of the request in ctx (telemetry.RequestID).
func requestID(ctx context.Context) string { return telemetry.RequestID(ctx) }

// traceID is the trace id of the request in ctx (telemetry.TraceID).
func traceID(ctx context.Context) string { return telemetry.TraceID(ctx) }

// exchange is the per-request state of the middleware, allocated once by
// requestIDs: the request's ids (telemetry.Request, in the context) and
// the writer instrument records the status with.
type exchange struct {
	telemetry.Request
	statusWriter
	// span is the request's server span while telemetry.Tracing (nil
	// otherwise): instrument ends it.
	span oteltrace.Span
}

// requestIDs gives every request an id and a trace id, in its context
// (telemetry.NewContext) and answered (X-Request-Id, Traceparent): a
// client's valid X-Request-Id is kept, and so is the trace of a valid
// Traceparent. While telemetry.Tracing it starts the request's server span
// (its parent that Traceparent), whose trace is the request's: the one its
// log lines and audit events carry.
func requestIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := &exchange{}
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = ids.Request()
		}
		h := w.Header()
		h["X-Request-Id"] = []string{id}
		ctx, span, traced := telemetry.StartHTTPServer(r)
		if traced {
			x.span = span
			tp := tracing.Traceparent(span.SpanContext())
			x.Start(id, tp[3:35], h) // the span's trace id
			h["Traceparent"] = []string{tp}
		} else {
			trace := traceFrom(r.Header.Get("Traceparent"))
			x.Start(id, trace, h)
			h["Traceparent"] = []string{ids.Traceparent(trace)}
		}
		next.ServeHTTP(w, r.WithContext(telemetry.NewContext(ctx, x)))
	})
}

// instrument records every request (telemetry.Recorder): its metrics and
// its log line, labelled with the route pattern that served it, and an
// MCP request (route /mcp) with its Mcp-Method and Mcp-Name headers too.
// It seals the request's trace once the handler returned (JoinTrace).
func (s *server) instrument(next http.Handler) http.Handler {
	rec := telemetry.NewRecorder(s.Metrics.Requests(), s.AccessLog, s.MCPTool)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.Now()
		x, ok := telemetry.CarrierFrom(r.Context()).(*exchange)
		if !ok {
			x = &exchange{}
		}
		x.statusWriter = statusWriter{ResponseWriter: w}
		next.ServeHTTP(&x.statusWriter, r)
		o := telemetry.Observation{Route: "unmatched", Method: r.Method, Status: x.status, Duration: s.Now().Sub(start)}
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if p := rc.RoutePattern(); p != "" {
				o.Route = p
			}
		}
		if o.Status == 0 {
			o.Status = http.StatusOK
		}
		if o.Route == mcpRoute {
			o.MCPMethod, o.MCPName = r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name")
		}
		rec.Record(r.Context(), o)
		if x.span != nil {
			telemetry.EndHTTPServer(x.span, r.Method, o.Route, o.Status)
		}
	})
}

// recoverer answers a request whose handler panicked 500 internal-error
// (unless its answer had started) and logs the panic; http.ErrAbortHandler
// goes on up, as net/http expects.
func (s *server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if rec == http.ErrAbortHandler {
				panic(rec)
			}
			s.Logger.ErrorContext(r.Context(), "panic serving request", "panic", fmt.Sprint(rec))
			if sw, ok := w.(*statusWriter); !ok || sw.status == 0 {
				writeProblem(w, 0, &contracts.Error{Code: contracts.CodeInternal, Message: "internal error"}, requestID(r.Context()))
			}
		}()
		next.ServeHTTP(w, r)
	})
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
