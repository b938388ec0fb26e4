package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

// Benchmarks of the mission surface through the gateway's handler
// (httpapi.New), in process: no TCP, but the real token verification,
// service layer and a durable SQLite file (fsync per commit, group
// commit) in b.TempDir(). Run with
//
//	go test -run='^$' -bench=. -benchtime=500x ./gateway/e2e/
//
// BenchmarkMissionRead and BenchmarkTraceRead are the two reads to
// compare: GET /v8/missions/{runId} (a mission projection) against GET
// /v8/traces/{traceId} of an intent's trace (there is no intent read
// endpoint; the trace is the intent side's read).

// serveLocal runs r through g's handler in process.
func (g *gw) serveLocal(b *testing.B, r req) *gatewaytest.Response {
	b.Helper()
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			b.Fatal(err)
		}
	}
	hr := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
	if r.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Authorization", "Bearer "+r.token)
	if r.key != "" {
		hr.Header.Set("Idempotency-Key", r.key)
	}
	if r.trace != "" {
		hr.Header.Set("Traceparent", "00-"+r.trace+"-00f067aa0ba902b7-01")
	}
	w := httptest.NewRecorder()
	g.handler.ServeHTTP(w, hr)
	return &gatewaytest.Response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
}

// followLocal follows a link through the handler.
func (g *gw) followLocal(b *testing.B, token string, body []byte, rel string, fill map[string]any) []byte {
	b.Helper()
	var m map[string]any
	if err := gatewaytest.DecodeJSON(body, &m); err != nil {
		b.Fatal(err)
	}
	l := findLink(b, linksOf(b, m), rel)
	r := g.serveLocal(b, (&agent{token: token}).request(b, l, fill))
	if r.Status != http.StatusOK {
		b.Fatalf("%s: %d %s", rel, r.Status, r.Body)
	}
	return r.Body
}

// BenchmarkMissionStartPlusThreeTransitions is one praxec start of
// deploy_pipeline and three submits (run_lint, run_tests, build, the last
// running the validation sub-workflow), each following the previous
// answer's link: four durable commits per op.
func BenchmarkMissionStartPlusThreeTransitions(b *testing.B) {
	ti := newIssuer(b)
	g := startGateway(b, ti, gwOptions{})
	tok := mint(b, ti, tenantA, userA)
	start := req{method: http.MethodPost, path: "/v8/praxec/command", body: map[string]any{"definitionId": "deploy_pipeline"}, token: tok}
	// Warm the verifier (discovery and JWKS fetch) outside the timing.
	if r := g.serveLocal(b, start); r.Status != http.StatusOK {
		b.Fatalf("start: %d %s", r.Status, r.Body)
	}
	for b.Loop() {
		r := g.serveLocal(b, start)
		if r.Status != http.StatusOK {
			b.Fatalf("start: %d %s", r.Status, r.Body)
		}
		body := g.followLocal(b, tok, r.Body, "run_lint", nil)
		body = g.followLocal(b, tok, body, "run_tests", map[string]any{"coverage": 90})
		g.followLocal(b, tok, body, "build", map[string]any{"artifactId": "art_bench"})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(4*b.N), "ns/request")
}

// BenchmarkMissionRead reads one mission: GET /v8/missions/{runId}.
func BenchmarkMissionRead(b *testing.B) {
	ti := newIssuer(b)
	g := startGateway(b, ti, gwOptions{})
	tok := mint(b, ti, tenantA, userA)
	r := g.serveLocal(b, req{method: http.MethodPost, path: "/v8/missions", body: map[string]any{"goal": "bench", "definitionId": "deploy_pipeline"}, token: tok, key: newKey()})
	if r.Status != http.StatusCreated {
		b.Fatalf("create: %d %s", r.Status, r.Body)
	}
	read := req{method: http.MethodGet, path: r.Header.Get("Location"), token: tok}
	for b.Loop() {
		if r := g.serveLocal(b, read); r.Status != http.StatusOK {
			b.Fatalf("read: %d %s", r.Status, r.Body)
		}
	}
}

// BenchmarkTraceRead reads the trace of one intent: GET /v8/traces/{traceId}.
func BenchmarkTraceRead(b *testing.B) {
	ti := newIssuer(b)
	g := startGateway(b, ti, gwOptions{})
	tok := mint(b, ti, tenantA, userA)
	trace := newTraceID()
	r := g.serveLocal(b, req{method: http.MethodPost, path: "/v8/intents", body: map[string]any{"intent": "deploy the payments service"}, token: tok, key: newKey(), trace: trace})
	if r.Status != http.StatusOK {
		b.Fatalf("intent: %d %s", r.Status, r.Body)
	}
	read := req{method: http.MethodGet, path: "/v8/traces/" + trace, token: tok}
	for b.Loop() {
		if r := g.serveLocal(b, read); r.Status != http.StatusOK {
			b.Fatalf("read: %d %s", r.Status, r.Body)
		}
	}
}
