package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// TestNotAcceptable: a /v8 request whose Accept admits neither JSON nor
// problem+json is refused 406 not-acceptable before anything else; one
// that admits either, */*, or sends none, is answered as always; /metrics,
// health and /mcp keep their own rules.
func TestNotAcceptable(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)
	for _, accept := range []string{"application/xml", "text/html", "application/json;q=0", "*/*;q=0"} {
		r := h.get(t, "/v8/coverage", bearer(tk), header("Accept", accept))
		p := wantProblem(t, r, http.StatusNotAcceptable, contracts.CodeNotAcceptable)
		if !strings.Contains(p.Detail, "application/problem+json") || !strings.Contains(string(r.Body), `"hint":"Send Accept: application/json`) {
			t.Errorf("Accept %q: the 406 says %s", accept, r.Body)
		}
		// Before authentication, and before the body is read.
		wantProblem(t, h.get(t, "/v8/coverage", header("Accept", accept)), http.StatusNotAcceptable, contracts.CodeNotAcceptable)
		wantProblem(t, h.submit(t, tk, newKey(), intentBody, header("Accept", accept), contentType("text/plain")),
			http.StatusNotAcceptable, contracts.CodeNotAcceptable)
	}
	for _, accept := range []string{"", "*/*", "application/json", "application/*", "application/problem+json", "text/html, */*;q=0.1"} {
		opts := []reqOpt{bearer(tk)}
		if accept != "" {
			opts = append(opts, header("Accept", accept))
		}
		r := h.get(t, "/v8/coverage", opts...)
		wantStatus(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Accept %q: Content-Type %q", accept, ct)
		}
		wantStatus(t, h.submit(t, tk, newKey(), intentBody, opts[1:]...), http.StatusOK)
		// Refusals stay what they were.
		wantProblem(t, h.get(t, "/v8/coverage", opts[1:]...), http.StatusUnauthorized, contracts.CodeUnauthenticated)
	}
	// Elsewhere the Accept header is not /v8's business.
	for _, path := range []string{"/healthz", "/metrics", "/.well-known/oauth-protected-resource"} {
		if r := h.get(t, path, header("Accept", "application/xml")); r.Status != http.StatusOK {
			t.Errorf("%s with Accept: application/xml: %d", path, r.Status)
		}
	}
	// An unknown /v8 path is still a 404.
	wantProblem(t, h.get(t, "/v8/no-such-route", bearer(tk), header("Accept", "application/xml")), http.StatusNotFound, contracts.CodeNotFound)
}
