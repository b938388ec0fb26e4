package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/ids"
)

type ctxKey int

const keyRequest ctxKey = iota

// requestInfo is what identify puts in a request's context: one value for
// both ids, so that a request pays one context layer for them.
type requestInfo struct {
	id, trace string
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
		return ri.trace
	}
	return ""
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

// isLowerHex reports whether s is lowercase hex digits only.
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// traceFrom honours a valid W3C traceparent (version-traceid-parentid-flags,
// lowercase hex, version not ff, ids not all zero) and mints a trace id
// otherwise.
func traceFrom(h string) string {
	// 2 + 1 + 32 + 1 + 16 + 1 + 2
	if len(h) != 55 || h[2] != '-' || h[35] != '-' || h[52] != '-' {
		return ids.Trace()
	}
	version, trace, parent, flags := h[0:2], h[3:35], h[36:52], h[53:55]
	if !isLowerHex(version) || !isLowerHex(trace) || !isLowerHex(parent) || !isLowerHex(flags) ||
		version == "ff" || trace == "00000000000000000000000000000000" || parent == "0000000000000000" {
		return ids.Trace()
	}
	return trace
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
		h["X-Request-Id"] = []string{o.info.id}
		h["Traceparent"] = []string{"00-" + o.info.trace + "-" + ids.Span() + "-01"}
		defer s.finish(ctx, o, r.Method, start)
		next.ServeHTTP(&o.statusWriter, r.WithContext(ctx))
	})
}

// finish recovers a panic of the request's handler, then records the
// request's metrics and log line.
func (s *server) finish(ctx context.Context, o *observed, method string, start time.Time) {
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
	s.Metrics.observe(route, method, status, d)
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	if !s.AccessLog.Enabled(ctx, level) {
		return
	}
	s.AccessLog.LogAttrs(ctx, level, "request",
		slog.String("request_id", o.info.id), slog.String("trace_id", o.info.trace), slog.String("method", method),
		slog.String("route", route), slog.Int("status", status), slog.Duration("duration", d))
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
