package connect_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

func runREST(t *testing.T, base string, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	t.Helper()
	m := connect.New(map[string]config.Connection{"api": {Kind: "rest", BaseURL: base, Headers: map[string]string{"Authorization": "Bearer ${API_TOKEN}"}}},
		&connect.Options{Logger: quiet(), Getenv: env(map[string]string{"API_TOKEN": "sekret"})})
	t.Cleanup(func() { m.Close() })
	x.Kind, x.Connection = "rest", "api"
	return m.Runners()["rest"].Run(context.Background(), x, scope)
}

func TestRESTRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer sekret" || r.Header.Get("X-Trace") != "t-1" || r.Method != "POST" ||
			r.URL.Path != "/repos/acme/my repo/pulls" || r.URL.Query().Get("state") != "open" || string(b) != `{"base":"main","head":"feat","title":"T"}` {
			t.Errorf("request %s %s %v %s", r.Method, r.URL, r.Header, b)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		w.Write([]byte(`{"number":7}`))
	}))
	defer srv.Close()
	out, err := runREST(t, srv.URL, config.Executor{Method: "POST", Path: "/repos/{owner}/{repo}/pulls", Query: map[string]any{"state": "open"},
		Headers: map[string]string{"X-Trace": "$.context.trace"}, Body: map[string]any{"title": "$.arguments.title", "head": "$.input.branch", "base": "main"}},
		workflow.Scope{Arguments: map[string]any{"owner": "acme", "title": "T"}, Context: map[string]any{"repo": "my repo", "trace": "t-1"}, Input: map[string]any{"branch": "feat", "owner": "ignored"}})
	if err != nil {
		t.Fatal(err)
	}
	if out["status"] != 201 || out["body"].(map[string]any)["number"] == nil {
		t.Fatalf("output %v", out)
	}
}

// TestRESTClassifies sends each request once (the retries are the
// engine's, see reliability_test.go) and classifies the answer: 408, 429,
// and 503 to an idempotent method or with Retry-After, unavailable (with a
// bounded Retry-After); a 503 to a POST or PATCH without Retry-After
// failed (a proxy may answer it after the upstream took the request); a
// 502 to a POST unknown; any other error status failed.
func TestRESTClassifies(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		switch r.URL.Path {
		case "/busy":
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(503)
		case "/reset":
			w.WriteHeader(503)
		case "/slowdown":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
		case "/missing":
			w.WriteHeader(404)
		case "/gateway":
			w.WriteHeader(502)
		case "/broken":
			io.ReadAll(r.Body)
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		method, path, outcome string
		retryAfter            time.Duration
	}{
		{"GET", "/busy", workflow.OutcomeUnavailable, 2 * time.Second},
		{"POST", "/busy", workflow.OutcomeUnavailable, 2 * time.Second},
		{"GET", "/reset", workflow.OutcomeUnavailable, 0},
		{"PUT", "/reset", workflow.OutcomeUnavailable, 0},
		{"POST", "/reset", workflow.OutcomeFailed, 0},
		{"PATCH", "/reset", workflow.OutcomeFailed, 0},
		{"POST", "/slowdown", workflow.OutcomeUnavailable, config.MaxRetryAfter},
		{"GET", "/missing", workflow.OutcomeFailed, 0},
		{"POST", "/gateway", workflow.OutcomeUnknown, 0},
		{"GET", "/gateway", workflow.OutcomeFailed, 0},
		{"POST", "/broken", workflow.OutcomeFailed, 0},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			before := n.Load()
			_, err := runREST(t, srv.URL, config.Executor{Method: tc.method, Path: tc.path}, workflow.Scope{})
			var xe *workflow.ExecutorError
			if !errors.As(err, &xe) || xe.Outcome != tc.outcome || xe.RetryAfter != tc.retryAfter {
				t.Fatalf("got %#v, want outcome %s retry after %v", err, tc.outcome, tc.retryAfter)
			}
			if got := n.Load() - before; got != 1 {
				t.Fatalf("%d requests, want exactly one", got)
			}
		})
	}
	_, err := runREST(t, "http://127.0.0.1:1", config.Executor{Method: "POST", Path: "/x"}, workflow.Scope{})
	if outcome(err) != workflow.OutcomeUnavailable || strings.Contains(err.Error(), "sekret") {
		t.Fatalf("refused connection: %v", err)
	}
}

// TestRESTRequestErrorsFail: a request that cannot be built (a path
// variable no source holds, a URL that does not parse, a body that cannot
// be encoded) fails the call, unsent: it would fail the same way again, so
// it is neither unavailable (retried, handed to a fallback) nor unknown.
func TestRESTRequestErrorsFail(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	for _, tc := range []struct {
		name, base string
		x          config.Executor
	}{
		{"missing path variable", srv.URL, config.Executor{Method: "GET", Path: "/x/{id}"}},
		{"invalid URL", srv.URL + "/%zz", config.Executor{Method: "GET", Path: "/x"}},
		{"body not encodable", srv.URL, config.Executor{Method: "POST", Path: "/x", Body: map[string]any{"v": math.NaN()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runREST(t, tc.base, tc.x, workflow.Scope{})
			if outcome(err) != workflow.OutcomeFailed || strings.Contains(err.Error(), "sekret") {
				t.Fatalf("got %v (outcome %q), want failed", err, outcome(err))
			}
		})
	}
	if n.Load() != 0 {
		t.Fatalf("%d requests were sent", n.Load())
	}
}
