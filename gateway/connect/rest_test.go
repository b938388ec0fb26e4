package connect_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

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

func TestRESTRetriesAndClassifies(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/flaky" && n.Add(1) < 3:
			w.WriteHeader(503)
		case r.URL.Path == "/flaky":
			w.Write([]byte(`ok`))
		case r.URL.Path == "/missing":
			w.WriteHeader(404)
		case r.URL.Path == "/gateway":
			w.WriteHeader(502)
		}
	}))
	defer srv.Close()
	out, err := runREST(t, srv.URL, config.Executor{Method: "GET", Path: "/flaky"}, workflow.Scope{})
	if err != nil || out["body"] != "ok" || n.Load() != 3 {
		t.Fatalf("retry: %v %v after %d", out, err, n.Load())
	}
	if _, err := runREST(t, srv.URL, config.Executor{Method: "GET", Path: "/missing"}, workflow.Scope{}); outcome(err) != workflow.OutcomeFailed {
		t.Fatalf("404: %v", err)
	}
	if _, err := runREST(t, srv.URL, config.Executor{Method: "POST", Path: "/gateway"}, workflow.Scope{}); outcome(err) != workflow.OutcomeUnknown {
		t.Fatalf("502 on POST: %v", err)
	}
	_, err = runREST(t, srv.URL, config.Executor{Method: "GET", Path: "/x/{id}"}, workflow.Scope{})
	if outcome(err) != workflow.OutcomeUnavailable || strings.Contains(err.Error(), "sekret") {
		t.Fatalf("missing path variable: %v", err)
	}
	_, err = runREST(t, "http://127.0.0.1:1", config.Executor{Method: "POST", Path: "/x"}, workflow.Scope{})
	if outcome(err) != workflow.OutcomeUnavailable || strings.Contains(err.Error(), "sekret") {
		t.Fatalf("refused connection: %v", err)
	}
}
