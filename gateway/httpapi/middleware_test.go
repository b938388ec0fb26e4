package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/telemetry"
)

// The hand-written header checks accept exactly what these expressions,
// which they replaced, accept.
var (
	requestIDRE   = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)
	traceparentRE = regexp.MustCompile(`^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)
	lowerHex32    = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

const (
	trace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	parent = "00f067aa0ba902b7"
)

func TestValidRequestID(t *testing.T) {
	for _, id := range []string{"", "a", "req-1", "A.b_c:d-e", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"has space", "ünïcode", "semi;colon", "slash/", "new\nline", "tab\t", "quote\"", "0123456789"} {
		if got, want := validRequestID(id), requestIDRE.MatchString(id); got != want {
			t.Errorf("validRequestID(%q) = %v, the expression says %v", id, got, want)
		}
	}
}

func FuzzValidRequestID(f *testing.F) {
	for _, s := range []string{"", "req-1", strings.Repeat("y", 64), "a b", "x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := validRequestID(id), requestIDRE.MatchString(id); got != want {
			t.Errorf("validRequestID(%q) = %v, the expression says %v", id, got, want)
		}
	})
}

// oracleTrace is the trace id the former traceFrom kept, "" for a minted one.
func oracleTrace(h string) string {
	m := traceparentRE.FindStringSubmatch(h)
	if m == nil || m[1] == "ff" || m[2] == "00000000000000000000000000000000" || m[3] == "0000000000000000" {
		return ""
	}
	return m[2]
}

func TestTraceFrom(t *testing.T) {
	for _, h := range []string{
		"00-" + trace + "-" + parent + "-01",
		"01-" + trace + "-" + parent + "-00",
		"ff-" + trace + "-" + parent + "-01",
		"00-00000000000000000000000000000000-" + parent + "-01",
		"00-" + trace + "-0000000000000000-01",
		"00-" + strings.ToUpper(trace) + "-" + parent + "-01",
		"00-" + trace + "-" + parent + "-01-extra",
		"00-" + trace + "-" + parent,
		"00_" + trace + "-" + parent + "-01",
		"0g-" + trace + "-" + parent + "-01",
		"00-" + trace[:31] + "z-" + parent + "-01",
		"",
		"garbage",
	} {
		got, want := traceFrom(h), oracleTrace(h)
		if want == "" {
			if got == trace || len(got) != 32 || !lowerHex32.MatchString(got) {
				t.Errorf("traceFrom(%q) = %q, want a fresh trace id", h, got)
			}
			continue
		}
		if got != want {
			t.Errorf("traceFrom(%q) = %q, want %q", h, got, want)
		}
	}
}

func FuzzTraceFrom(f *testing.F) {
	f.Add("00-" + trace + "-" + parent + "-01")
	f.Add("ff-" + trace + "-" + parent + "-01")
	f.Fuzz(func(t *testing.T, h string) {
		got, want := traceFrom(h), oracleTrace(h)
		if want != "" && got != want {
			t.Errorf("traceFrom(%q) = %q, want %q", h, got, want)
		}
		if want == "" && (len(got) != 32 || !lowerHex32.MatchString(got)) {
			t.Errorf("traceFrom(%q) = %q, want a fresh trace id", h, got)
		}
	})
}

// TestStatusWriter: the first final status is kept and sent once, a Write
// without one answers 200, 1xx answers pass, and Flush reaches the
// underlying writer.
func TestStatusWriter(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(w http.ResponseWriter)
		want int
	}{
		{"write only", func(w http.ResponseWriter) { w.Write([]byte("x")) }, http.StatusOK},
		{"two statuses", func(w http.ResponseWriter) { w.WriteHeader(http.StatusCreated); w.WriteHeader(http.StatusTeapot) }, http.StatusCreated},
		{"informational first", func(w http.ResponseWriter) { w.WriteHeader(http.StatusEarlyHints); w.WriteHeader(http.StatusAccepted) }, http.StatusAccepted},
		{"flush", func(w http.ResponseWriter) { http.NewResponseController(w).Flush() }, http.StatusOK},
		{"nothing", func(http.ResponseWriter) {}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := &statusWriter{ResponseWriter: rec}
			tc.do(w)
			if w.status != tc.want {
				t.Errorf("status %d, want %d", w.status, tc.want)
			}
			if tc.want != 0 && tc.name != "informational first" && rec.Code != tc.want {
				t.Errorf("sent %d, want %d", rec.Code, tc.want)
			}
			if tc.name == "flush" && !rec.Flushed {
				t.Error("Flush did not reach the underlying writer")
			}
		})
	}
}

// logLines decodes the JSON lines of buf.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// chain serves routes behind the middleware New puts first, logging to
// the buffer it returns.
func chain(t *testing.T, routes func(r chi.Router)) (http.Handler, *bytes.Buffer, *Metrics) {
	t.Helper()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := &server{Options: Options{Metrics: NewMetrics(), Logger: telemetry.Logger(log), AccessLog: log, Now: time.Now,
		MCPTool: func(name string) bool { return name == "praxec.query" }}}
	r := chi.NewRouter()
	r.Use(requestIDs, s.instrument, s.recoverer)
	routes(r)
	return r, &buf, s.Metrics
}

// TestRecoverer: a handler's panic answers 500 internal-error, with the
// request's id, once; the panic and the request are logged with the
// request's ids; a panic after the answer started leaves the answer.
func TestRecoverer(t *testing.T) {
	h, buf, _ := chain(t, func(r chi.Router) {
		r.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
		r.Get("/late", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			panic("late")
		})
	})
	req := httptest.NewRequest(http.MethodGet, "/boom", nil)
	req.Header.Set("X-Request-Id", "req-boom")
	req.Header.Set("Traceparent", "00-"+trace+"-"+parent+"-01")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var p struct {
		Status    int    `json:"status"`
		Code      string `json:"code"`
		RequestID string `json:"requestId"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusInternalServerError ||
		p.Status != 500 || p.Code != string(contracts.CodeInternal) || p.RequestID != "req-boom" {
		t.Fatalf("answer %d %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("X-Request-Id"); got != "req-boom" {
		t.Errorf("X-Request-Id %q", got)
	}
	lines := logLines(t, buf)
	if len(lines) != 2 || lines[0]["msg"] != "panic serving request" || lines[0]["panic"] != "boom" ||
		lines[1]["msg"] != "request" || lines[1]["status"] != float64(500) || lines[1]["level"] != "ERROR" {
		t.Fatalf("log lines %v", lines)
	}
	for _, l := range lines {
		if l["request_id"] != "req-boom" || l["trace_id"] != trace {
			t.Errorf("line %v: want request_id req-boom, trace_id %s", l, trace)
		}
	}

	buf.Reset()
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/late", nil))
	if rec.Code != http.StatusAccepted || rec.Body.Len() != 0 {
		t.Errorf("a panic after the answer started: %d %q", rec.Code, rec.Body)
	}
	if lines := logLines(t, buf); len(lines) != 2 || lines[1]["status"] != float64(http.StatusAccepted) {
		t.Errorf("log lines %v", lines)
	}
}

// TestAbortHandler: http.ErrAbortHandler goes on up, unrecorded.
func TestAbortHandler(t *testing.T) {
	h, buf, _ := chain(t, func(r chi.Router) {
		r.Get("/abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	})
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", v)
		}
		if buf.Len() != 0 {
			t.Errorf("an aborted request was logged: %s", buf)
		}
	}()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/abort", nil))
}

// TestRequestLine: the request line's fields (their order is
// telemetry's TestRecord's), and the trace an
// MCP request joined while it was served: answered in Traceparent, logged,
// and fixed once the request is recorded.
func TestRequestLine(t *testing.T) {
	var served context.Context
	h, buf, m := chain(t, func(r chi.Router) {
		r.Post(mcpRoute, func(w http.ResponseWriter, r *http.Request) {
			served = r.Context()
			if !telemetry.JoinTrace(r.Context(), trace) {
				t.Error("JoinTrace refused while the request is served")
			}
			w.Write([]byte("{}"))
		})
	})
	req := httptest.NewRequest(http.MethodPost, mcpRoute, strings.NewReader("{}"))
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "praxec.query")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if tp := rec.Header().Get("Traceparent"); !strings.HasPrefix(tp, "00-"+trace+"-") {
		t.Errorf("Traceparent %q, want the joined trace", tp)
	}
	if telemetry.JoinTrace(served, "fedcba9876543210fedcba9876543210") || telemetry.TraceID(served) != trace {
		t.Errorf("a recorded request's trace changed to %q", telemetry.TraceID(served))
	}
	if l := logLines(t, buf)[0]; l["trace_id"] != trace || l["request_id"] != rec.Header().Get("X-Request-Id") || l["route"] != mcpRoute ||
		l["method"] != http.MethodPost || l["mcp_method"] != "tools/call" || l["mcp_name"] != "praxec.query" {
		t.Errorf("request line %v", l)
	}
	mrec := httptest.NewRecorder()
	m.Handler().ServeHTTP(mrec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `praxa_http_requests_total{mcp_method="tools/call",mcp_tool="praxec.query",method="POST",route="/mcp",status="200"} 1`; !strings.Contains(mrec.Body.String(), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// BenchmarkMiddleware is the cost of the middleware every request passes,
// around a handler that writes nothing.
func BenchmarkMiddleware(b *testing.B) {
	log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := &server{Options: Options{Metrics: NewMetrics(), Logger: telemetry.Logger(log), AccessLog: log, Now: time.Now}}
	r := chi.NewRouter()
	r.Use(requestIDs, s.instrument, s.recoverer)
	r.Get("/x", func(http.ResponseWriter, *http.Request) {})
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	b.ReportAllocs()
	for b.Loop() {
		r.ServeHTTP(httptest.NewRecorder(), req)
	}
}
