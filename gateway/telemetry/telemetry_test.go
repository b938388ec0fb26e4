package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const trace = "4bf92f3577b34da6a3ce929d0e0e4736"

// inRequest is ctx inside a request of id and trace, whose answer's
// headers are h.
func inRequest(id, trace string, h http.Header) (context.Context, *Request) {
	r := &Request{}
	r.Start(id, trace, h)
	return NewContext(context.Background(), r), r
}

func decode(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// keys lists the keys of a JSON object line in order.
func keys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k.(string))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestLogger: a line logged in a request's context carries its ids first;
// one logged outside carries none; wrapping twice adds them once.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	log := Logger(Logger(slog.New(slog.NewJSONHandler(&buf, nil))))
	ctx, _ := inRequest("req-1", trace, nil)
	log.With("component", "x").InfoContext(ctx, "inside", "k", "v")
	log.Info("outside", "k", "v")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if got, want := strings.Join(keys(t, lines[0]), ","), "time,level,msg,component,request_id,trace_id,k"; got != want {
		t.Errorf("inside a request: %s, want %s", got, want)
	}
	if got, want := strings.Join(keys(t, lines[1]), ","), "time,level,msg,k"; got != want {
		t.Errorf("outside a request: %s, want %s", got, want)
	}
	l := decode(t, &buf)[0]
	if l["request_id"] != "req-1" || l["trace_id"] != trace {
		t.Errorf("ids %v", l)
	}
	if !log.Enabled(ctx, slog.LevelInfo) || log.Enabled(ctx, slog.LevelDebug) {
		t.Error("the handler does not report its level as the one beneath")
	}
}

// TestLoggerWithTrace: a line logged in the context of the gateway's own
// work carries its trace_id and no request_id; a request's context keeps
// its own ids, and an empty trace adds none.
func TestLoggerWithTrace(t *testing.T) {
	const own = "fedcba9876543210fedcba9876543210"
	req, _ := inRequest("req-1", trace, nil)
	for _, tt := range []struct {
		name      string
		ctx       context.Context
		keys      string
		requestID any
		traceID   any
		// joins says whether JoinTrace may change the trace.
		joins bool
	}{
		{"Own", WithTrace(context.Background(), own), "time,level,msg,trace_id,k", nil, own, false},
		{"InARequest", WithTrace(req, own), "time,level,msg,request_id,trace_id,k", "req-1", trace, true},
		{"NoTrace", WithTrace(context.Background(), ""), "time,level,msg,k", nil, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			Logger(slog.New(slog.NewJSONHandler(&buf, nil))).InfoContext(tt.ctx, "line", "k", "v")
			if got := strings.Join(keys(t, strings.TrimSpace(buf.String())), ","); got != tt.keys {
				t.Errorf("keys %s, want %s", got, tt.keys)
			}
			l := decode(t, &buf)[0]
			if l["request_id"] != tt.requestID || l["trace_id"] != tt.traceID {
				t.Errorf("ids %v", l)
			}
			if want, _ := tt.traceID.(string); TraceID(tt.ctx) != want || RequestID(tt.ctx) != "" && tt.requestID == nil {
				t.Errorf("TraceID %q, RequestID %q", TraceID(tt.ctx), RequestID(tt.ctx))
			}
			if JoinTrace(tt.ctx, trace) != tt.joins {
				t.Errorf("JoinTrace reported %v", !tt.joins)
			}
		})
	}
}

// TestJoinTrace: a trace joined while the request is served is its trace
// and its answer's Traceparent; once the request is recorded, nothing
// changes.
func TestJoinTrace(t *testing.T) {
	h := http.Header{}
	ctx, r := inRequest("r", "0123456789abcdef0123456789abcdef", h)
	if !JoinTrace(ctx, trace) || TraceID(ctx) != trace || !strings.HasPrefix(h.Get("Traceparent"), "00-"+trace+"-") {
		t.Fatalf("joined: trace %q, Traceparent %q", TraceID(ctx), h.Get("Traceparent"))
	}
	r.seal()
	if JoinTrace(ctx, "fedcba9876543210fedcba9876543210") || TraceID(ctx) != trace {
		t.Errorf("a recorded request's trace changed to %q", TraceID(ctx))
	}
	if JoinTrace(context.Background(), trace) || RequestID(context.Background()) != "" || TraceID(context.Background()) != "" {
		t.Errorf("ids outside any request")
	}
	// Without headers (stdio) the trace is joined all the same.
	ctx, _ = inRequest("s", "0123456789abcdef0123456789abcdef", nil)
	if !JoinTrace(ctx, trace) || TraceID(ctx) != trace {
		t.Errorf("stdio: trace %q", TraceID(ctx))
	}
}

// TestMCPLabels: the MCP labels of a request's metrics take only bounded
// values whatever the client sends.
func TestMCPLabels(t *testing.T) {
	rec := &Recorder{tool: func(name string) bool { return name == "praxec.query" }}
	for _, tc := range []struct {
		method, name         string
		wantMethod, wantTool string
	}{
		{"", "", "", ""},
		{"", "praxec.query", "", ""},
		{"tools/list", "", "tools/list", ""},
		{"tools/call", "praxec.query", "tools/call", "praxec.query"},
		{"tools/call", "made_up_tool", "tools/call", "other"},
		{"tools/call", "", "tools/call", "other"},
		{"prompts/get", "anything", "prompts/get", ""},
		{"made/up", "praxec.query", "other", ""},
	} {
		m, tool := rec.mcpLabels(tc.method, tc.name)
		if m != tc.wantMethod || tool != tc.wantTool {
			t.Errorf("mcpLabels(%q, %q) = %q, %q; want %q, %q", tc.method, tc.name, m, tool, tc.wantMethod, tc.wantTool)
		}
	}
	if m, tool := (&Recorder{}).mcpLabels("tools/call", "praxec.query"); m != "tools/call" || tool != "other" {
		t.Errorf("without a tool list: %q, %q", m, tool)
	}
}

// TestRecord: a request is counted under its bounded labels and logged
// with its fields in order (the method only when there is one), at level
// Error from status 500; its trace is sealed.
func TestRecord(t *testing.T) {
	var buf bytes.Buffer
	reqs := NewRequests()
	rec := NewRecorder(reqs, Logger(slog.New(slog.NewJSONHandler(&buf, nil))), func(name string) bool { return name == "praxec.query" })
	ctx, _ := inRequest("req-1", trace, nil)
	rec.Record(ctx, Observation{Route: "/v8/intents", Method: http.MethodPost, Status: 200, Duration: time.Millisecond})
	ctx, _ = inRequest("req-2", trace, nil)
	rec.Record(ctx, Observation{Route: "stdio", MCPMethod: "tools/call", MCPName: "secret_tool", Status: 500, Duration: time.Millisecond})
	if JoinTrace(ctx, "fedcba9876543210fedcba9876543210") {
		t.Error("a recorded request joined a trace")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for i, want := range []string{
		"time,level,msg,request_id,trace_id,method,route,status,duration",
		"time,level,msg,request_id,trace_id,route,status,duration,mcp_method,mcp_name",
	} {
		if got := strings.Join(keys(t, lines[i]), ","); got != want {
			t.Errorf("line %d: %s, want %s", i, got, want)
		}
	}
	l := decode(t, &buf)
	if l[1]["level"] != "ERROR" || l[1]["mcp_name"] != "secret_tool" || l[1]["request_id"] != "req-2" || l[0]["level"] != "INFO" {
		t.Errorf("lines %v", l)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(reqs)
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`praxa_http_requests_total{mcp_method="",mcp_tool="",method="POST",route="/v8/intents",status="200"} 1`,
		`praxa_http_requests_total{mcp_method="tools/call",mcp_tool="other",method="",route="stdio",status="500"} 1`,
		`praxa_http_request_duration_seconds_count{mcp_method="tools/call",mcp_tool="other",method="",route="stdio"} 1`,
	} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, w.Body)
		}
	}
}
