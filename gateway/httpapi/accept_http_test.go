package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestNotAcceptable: a /v8 request whose Accept admits neither JSON nor
// problem+json is refused 406 not-acceptable before anything else; one
// that admits either, */*, or sends none, is answered as always; /metrics,
// health and /mcp keep their own rules.
func TestNotAcceptable(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)
	for _, accept := range []string{"application/xml", "text/html", "application/json;q=0", "*/*;q=0"} {
		r := h.Get(t, "/v8/coverage", gatewaytest.Bearer(tk), gatewaytest.Header("Accept", accept))
		p := gatewaytest.WantProblem(t, r, http.StatusNotAcceptable, contracts.CodeNotAcceptable)
		if !strings.Contains(p.Detail, "application/problem+json") || !strings.Contains(string(r.Body), `"hint":"Send Accept: application/json`) {
			t.Errorf("Accept %q: the 406 says %s", accept, r.Body)
		}
		// Before authentication, and before the body is read.
		gatewaytest.WantProblem(t, h.Get(t, "/v8/coverage", gatewaytest.Header("Accept", accept)), http.StatusNotAcceptable, contracts.CodeNotAcceptable)
		gatewaytest.WantProblem(t, h.submit(t, tk, newKey(), intentBody, gatewaytest.Header("Accept", accept), gatewaytest.ContentType("text/plain")),
			http.StatusNotAcceptable, contracts.CodeNotAcceptable)
	}
	for _, accept := range []string{"", "*/*", "application/json", "application/*", "application/problem+json", "text/html, */*;q=0.1"} {
		opts := []gatewaytest.RequestOption{gatewaytest.Bearer(tk)}
		if accept != "" {
			opts = append(opts, gatewaytest.Header("Accept", accept))
		}
		r := h.Get(t, "/v8/coverage", opts...)
		gatewaytest.WantStatus(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Accept %q: Content-Type %q", accept, ct)
		}
		gatewaytest.WantStatus(t, h.submit(t, tk, newKey(), intentBody, opts[1:]...), http.StatusOK)
		// Refusals stay what they were.
		gatewaytest.WantProblem(t, h.Get(t, "/v8/coverage", opts[1:]...), http.StatusUnauthorized, contracts.CodeUnauthenticated)
	}
	// Elsewhere the Accept header is not /v8's business.
	for _, path := range []string{"/healthz", "/metrics", "/.well-known/oauth-protected-resource"} {
		if r := h.Get(t, path, gatewaytest.Header("Accept", "application/xml")); r.Status != http.StatusOK {
			t.Errorf("%s with Accept: application/xml: %d", path, r.Status)
		}
	}
	// An unknown /v8 path is still a 404.
	gatewaytest.WantProblem(t, h.Get(t, "/v8/no-such-route", gatewaytest.Bearer(tk), gatewaytest.Header("Accept", "application/xml")), http.StatusNotFound, contracts.CodeNotFound)
}
