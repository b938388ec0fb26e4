package gatewaytest

import (
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/restclient"
)

// Problem is a decoded RFC 9457 problem+json answer of the gateway: the
// document as restclient reads it, and the whole of it as decoded JSON.
type Problem struct {
	restclient.Problem
	// Raw is the whole document, numbers as json.Number.
	Raw map[string]any `json:"-"`
}

// Pointers lists the JSON pointers of p's errors[], in order.
func (p Problem) Pointers() []string {
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Pointer)
	}
	return out
}

// problemMembers are the members every problem of the gateway carries.
var problemMembers = []string{"type", "title", "status", "code", "requestId", "retryable", "links", "traceId"}

// problemLeaks are what a problem must never show a client.
var problemLeaks = []string{"goroutine ", ".go:", "sqlite", "SELECT ", "panic"}

// WantProblem checks that r is an RFC 9457 problem with status and code in
// the gateway's shape, and returns it decoded: application/problem+json,
// not cached; the seeds/000 envelope members (code, detail as the
// message, links always an array) and the gateway's own (type and title
// from the code registry, status as the answer's, retryable as the
// registry says, instance naming requestId); requestId the answer's
// X-Request-Id and traceId its Traceparent's trace (for a replayed answer,
// Idempotent-Replayed, the original request's); and no internals (stack
// frames, SQL) in the body. A wrong status or code ends the test; every
// other difference is reported.
func WantProblem(t testing.TB, r *Response, status int, code contracts.Code) Problem {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d (%s): %s", r.Status, status, code, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	var p Problem
	if err := DecodeJSON(r.Body, &p); err != nil {
		t.Fatalf("problem does not decode: %v\n%s", err, r.Body)
	}
	p.Raw = r.Object(t)
	for _, m := range problemMembers {
		if _, ok := p.Raw[m]; !ok {
			t.Errorf("problem lacks member %q: %s", m, r.Body)
		}
	}
	if p.Code != code {
		t.Fatalf("problem code %q, want %q: %s", p.Code, code, r.Body)
	}
	info, _ := code.Info()
	if p.Status != status || p.Title != info.Title || p.Title == "" || p.Type != code.TypeURI() || p.Retryable != info.Retryable {
		t.Errorf("problem members status=%d title=%q type=%q retryable=%v disagree with the code registry %+v", p.Status, p.Title, p.Type, p.Retryable, info)
	}
	if p.Detail == "" {
		t.Errorf("problem has no detail (the envelope's message): %s", r.Body)
	}
	// A replayed refusal is the original problem, its request's id and
	// trace included; X-Request-Id and Traceparent name the retry.
	replayed := r.Header.Get("Idempotent-Replayed") == "true"
	if p.RequestID == "" || p.Instance != "urn:praxa:request:"+p.RequestID || !replayed && r.Header.Get("X-Request-Id") != p.RequestID {
		t.Errorf("problem requestId %q / instance %q / X-Request-Id %q disagree", p.RequestID, p.Instance, r.Header.Get("X-Request-Id"))
	}
	if trace := r.TraceID(t); p.TraceID == "" || !replayed && p.TraceID != trace {
		t.Errorf("problem traceId %q, Traceparent %q", p.TraceID, r.Header.Get("Traceparent"))
	}
	if l, ok := p.Raw["links"].([]any); !ok || l == nil {
		t.Errorf("problem links is %T, want an array", p.Raw["links"])
	}
	for _, leak := range problemLeaks {
		if strings.Contains(string(r.Body), leak) {
			t.Errorf("problem leaks %q: %s", leak, r.Body)
		}
	}
	return p
}
