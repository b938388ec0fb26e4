package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/praxa/praxa/contracts"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyTraceID
)

func requestID(ctx context.Context) string {
	s, _ := ctx.Value(keyRequestID).(string)
	return s
}

// RequestID returns the id of the request in ctx.
func RequestID(ctx context.Context) string { return requestID(ctx) }

// TraceID returns the W3C trace id of the request in ctx.
func TraceID(ctx context.Context) string {
	s, _ := ctx.Value(keyTraceID).(string)
	return s
}

var (
	requestIDRE   = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)
	traceparentRE = regexp.MustCompile(`^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)
)

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// traceFrom honours a valid W3C traceparent and mints a trace id otherwise.
func traceFrom(h string) string {
	m := traceparentRE.FindStringSubmatch(h)
	if m == nil || m[1] == "ff" || m[2] == "00000000000000000000000000000000" || m[3] == "0000000000000000" {
		return randomHex(16)
	}
	return m[2]
}

// observe gives every request an id and a trace id, recovers panics, and
// records metrics and one log line labelled with the route pattern.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.Now()
		id := r.Header.Get("X-Request-Id")
		if !requestIDRE.MatchString(id) {
			id = randomHex(12)
		}
		trace := traceFrom(r.Header.Get("Traceparent"))
		ctx := context.WithValue(context.WithValue(r.Context(), keyRequestID, id), keyTraceID, trace)
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		ww.Header().Set("X-Request-Id", id)
		ww.Header().Set("Traceparent", "00-"+trace+"-"+randomHex(8)+"-01")
		defer func() {
			if rec := recover(); rec != nil {
				if rec == http.ErrAbortHandler {
					panic(rec)
				}
				s.Logger.ErrorContext(ctx, "panic serving request", "request_id", id, "panic", fmt.Sprint(rec))
				if ww.Status() == 0 {
					writeProblem(ww, 0, &contracts.Error{Code: contracts.CodeInternal, Message: "internal error"}, id)
				}
			}
			route := "unmatched"
			if rc := chi.RouteContext(ctx); rc != nil && rc.RoutePattern() != "" {
				route = rc.RoutePattern()
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			d := s.Now().Sub(start)
			s.Metrics.observe(route, r.Method, status, d)
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			s.Logger.LogAttrs(ctx, level, "request",
				slog.String("request_id", id), slog.String("trace_id", trace), slog.String("method", r.Method),
				slog.String("route", route), slog.Int("status", status), slog.Duration("duration", d))
		}()
		next.ServeHTTP(ww, r.WithContext(ctx))
	})
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
