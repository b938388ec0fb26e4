package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
)

func TestQuantile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		name string
		lat  []time.Duration
		q    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"median of four is the second", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p50 of 1..100", hundred, 0.5, 50 * time.Millisecond},
		{"p99 of 1..100", hundred, 0.99, 99 * time.Millisecond},
		{"p100 is the max", hundred, 1, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := quantile(tc.lat, tc.q); got != tc.want {
				t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

// echoServer serves a go-sdk echo tool over stateless streamable HTTP and
// counts the calls and the bearer tokens it saw.
func echoServer(t *testing.T, fail bool) (url string, calls *atomic.Int64, auth *atomic.Value) {
	calls, auth = &atomic.Int64{}, &atomic.Value{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			var a struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &a)
			return &mcp.CallToolResult{IsError: fail, Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
		})
	h := benchmcp.Handler(srv)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, calls, auth
}

func TestRunCountsCalls(t *testing.T) {
	url, calls, auth := echoServer(t, false)
	o := options{url: url, tool: "echo", label: "t", args: json.RawMessage(`{"text":"hello"}`), sessions: 3,
		duration: 300 * time.Millisecond, count: 40, timeout: 5 * time.Second, token: "tok-1"}
	r, err := run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// The first call is checked and not counted; at most count are.
	if n := len(r.lat); n == 0 || n > 40 || int64(n)+1 != calls.Load() {
		t.Errorf("%d calls measured, %d served", n, calls.Load())
	}
	if r.errors != 0 || r.textBytes != len("hello") {
		t.Errorf("errors %d, text bytes %d", r.errors, r.textBytes)
	}
	if got := auth.Load(); got != "Bearer tok-1" {
		t.Errorf("Authorization %q", got)
	}
	line := r.line(o)
	for _, want := range []string{"mcpload label=t tool=echo sessions=3 ", " errors=0 ", " text_bytes=5", " p99_ms="} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
}

// TestRunAtProtocol: -protocol pins the revision each session negotiates;
// a revision the server does not speak is refused.
func TestRunAtProtocol(t *testing.T) {
	url, _, _ := echoServer(t, false)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		o := options{url: url, tool: "echo", args: json.RawMessage(`{"text":"hi"}`), sessions: 1, duration: 50 * time.Millisecond,
			count: 3, timeout: 5 * time.Second, protocol: version}
		r, err := run(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		if line := r.line(o); !strings.HasSuffix(line, " protocol="+version) {
			t.Errorf("line %q does not name protocol %s", line, version)
		}
	}
	o := options{url: url, tool: "echo", args: json.RawMessage(`{}`), sessions: 1, duration: time.Second, timeout: time.Second, protocol: "1999-01-01"}
	if _, err := run(context.Background(), o); err == nil {
		t.Errorf("a session at protocol 1999-01-01 was opened")
	}
}

func TestRunRefuses(t *testing.T) {
	url, _, _ := echoServer(t, true)
	base := options{url: url, tool: "echo", args: json.RawMessage(`{}`), sessions: 1, duration: time.Second, timeout: time.Second}
	for _, tc := range []struct {
		name string
		edit func(*options)
		want string
	}{
		{"no url", func(o *options) { o.url = "" }, "-url"},
		{"args not an object", func(o *options) { o.args = json.RawMessage(`[1]`) }, "not a JSON object"},
		{"too long", func(o *options) { o.duration = time.Hour }, "at most"},
		{"no sessions", func(o *options) { o.sessions = 0 }, "-sessions"},
		{"a tool answering isError", func(*options) {}, "first call: isError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			if _, err := run(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}
