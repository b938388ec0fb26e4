package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
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

// TestMCPLabels: the MCP labels of a request's metrics take only bounded
// values whatever the client sends.
func TestMCPLabels(t *testing.T) {
	s := &server{Options: Options{MCPTool: func(name string) bool { return name == "praxec.query" }}}
	for _, tc := range []struct {
		route, method, name  string
		wantMethod, wantTool string
	}{
		{"/v8/intents", "tools/call", "praxec.query", "", ""},
		{mcpRoute, "", "", "", ""},
		{mcpRoute, "tools/list", "", "tools/list", ""},
		{mcpRoute, "tools/call", "praxec.query", "tools/call", "praxec.query"},
		{mcpRoute, "tools/call", "made_up_tool", "tools/call", "other"},
		{mcpRoute, "tools/call", "", "tools/call", "other"},
		{mcpRoute, "prompts/get", "anything", "prompts/get", ""},
		{mcpRoute, "made/up", "praxec.query", "other", ""},
	} {
		m, tool := s.mcpLabels(tc.route, tc.method, tc.name)
		if m != tc.wantMethod || tool != tc.wantTool {
			t.Errorf("mcpLabels(%q, %q, %q) = %q, %q; want %q, %q", tc.route, tc.method, tc.name, m, tool, tc.wantMethod, tc.wantTool)
		}
	}
}

// TestJoinTrace: a trace joined while the request is served is its trace
// and its answer's Traceparent; once the request finished, nothing
// changes.
func TestJoinTrace(t *testing.T) {
	ri := &requestInfo{id: "r", trace: "0123456789abcdef0123456789abcdef", header: http.Header{}}
	ctx := context.WithValue(context.Background(), keyRequest, ri)
	if !JoinTrace(ctx, trace) || TraceID(ctx) != trace || !strings.Contains(ri.header.Get("Traceparent"), "-"+trace+"-") {
		t.Fatalf("joined: trace %q, Traceparent %q", TraceID(ctx), ri.header.Get("Traceparent"))
	}
	ri.sealed = true
	if JoinTrace(ctx, "fedcba9876543210fedcba9876543210") || TraceID(ctx) != trace {
		t.Errorf("a finished request's trace changed to %q", TraceID(ctx))
	}
	if JoinTrace(context.Background(), trace) {
		t.Errorf("joined a trace outside any request")
	}
}
