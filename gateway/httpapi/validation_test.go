package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestRequestValidation covers checklist items 57-62 on POST /v8/intents:
// every refusal is a problem document with a stable code, and none is a
// 5xx.
func TestRequestValidation(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)
	for _, tc := range []struct {
		name     string
		body     string
		code     contracts.Code
		pointers []string // the errors[] pointers, in order, when given
	}{
		{name: "truncated", body: `{"intent":`, code: contracts.CodeMalformedJSON},
		{name: "empty body", body: ``, code: contracts.CodeMalformedJSON},
		{name: "trailing garbage", body: `{"intent":"x"} x`, code: contracts.CodeMalformedJSON},
		{name: "two top-level values", body: `{"intent":"x"}{"intent":"y"}`, code: contracts.CodeMalformedJSON},
		{name: "trailing comma", body: `{"intent":"x",}`, code: contracts.CodeMalformedJSON},
		{name: "single quotes", body: `{'intent':'x'}`, code: contracts.CodeMalformedJSON},
		{name: "duplicate member", body: `{"intent":"a","intent":"b"}`, code: contracts.CodeMalformedJSON},
		{name: "duplicate nested member", body: `{"intent":"a","tags":["x"],"tags":["y"]}`, code: contracts.CodeMalformedJSON},
		{name: "invalid UTF-8 in a string", body: "{\"intent\":\"caf\xe9\"}", code: contracts.CodeMalformedJSON},
		{name: "invalid UTF-8 in a name", body: "{\"int\xffent\":\"x\"}", code: contracts.CodeMalformedJSON},
		{name: "lone high surrogate", body: `{"intent":"x\ud800"}`, code: contracts.CodeMalformedJSON},
		{name: "lone low surrogate", body: `{"intent":"x\udc00y"}`, code: contracts.CodeMalformedJSON},
		{name: "high surrogate then a letter", body: `{"intent":"\ud800\u0041"}`, code: contracts.CodeMalformedJSON},
		{name: "array root", body: `[]`, code: contracts.CodeInvalidParams, pointers: []string{""}},
		{name: "string root", body: `"deploy"`, code: contracts.CodeInvalidParams, pointers: []string{""}},
		{name: "null root", body: `null`, code: contracts.CodeInvalidParams},
		{name: "unknown field", body: `{"intent":"x","zzz":1}`, code: contracts.CodeInvalidParams, pointers: []string{"/zzz"}},
		{name: "missing required", body: `{"tags":["a"]}`, code: contracts.CodeInvalidParams, pointers: []string{"/intent"}},
		{name: "empty intent", body: `{"intent":""}`, code: contracts.CodeInvalidParams, pointers: []string{"/intent"}},
		{name: "wrong type", body: `{"intent":42}`, code: contracts.CodeInvalidParams, pointers: []string{"/intent"}},
		{name: "every violation reported", body: `{"intent":5,"tags":"x","zzz":1}`, code: contracts.CodeInvalidParams,
			pointers: []string{"/intent", "/tags", "/zzz"}},
		{name: "duplicate tags", body: `{"intent":"x","tags":["a","a"]}`, code: contracts.CodeInvalidParams, pointers: []string{"/tags"}},
		{name: "too many tags", body: `{"intent":"x","tags":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]}`,
			code: contracts.CodeInvalidParams, pointers: []string{"/tags"}},
		{name: "nested 33 deep", body: deepBody(33), code: contracts.CodeRequestLimits},
		{name: "nested 1000 deep", body: deepBody(1000), code: contracts.CodeRequestLimits},
		// server.limits.maxElements (default 20000) counts every value:
		// the root, intent, tags and its 19998 items make 20001.
		{name: "20001 values", body: `{"intent":"x","tags":[` + strings.Repeat(`0,`, 19997) + `0]}`, code: contracts.CodeRequestLimits},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.submit(t, tk, newKey(), tc.body)
			p := gatewaytest.WantProblem(t, r, http.StatusBadRequest, tc.code)
			if tc.pointers != nil {
				var got []string
				for _, e := range p.Errors {
					got = append(got, e.Pointer)
				}
				got = slices.Compact(got)
				if !slices.Equal(got, tc.pointers) {
					t.Errorf("error pointers %q, want %q (%s)", got, tc.pointers, r.Body)
				}
			}
		})
	}
	for _, tc := range []struct{ name, body string }{
		{"nested 32 deep is not a limit", deepBody(32)},
		{"valid surrogate pair", `{"intent":"ship it \ud83d\ude80"}`},
		{"escaped characters", `{"intent":"line\nbreak \"quoted\" \u00e9 \/"}`},
		{"non-ASCII text", `{"intent":"déployer le service de paiement 🚀"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.submit(t, tk, newKey(), tc.body)
			if r.Status == http.StatusOK {
				return
			}
			gatewaytest.WantProblem(t, r, http.StatusBadRequest, contracts.CodeInvalidParams) // schema, not syntax or limits
		})
	}
}

// TestMediaType covers checklist item 63.
func TestMediaType(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)
	for _, tc := range []struct {
		ct string
		ok bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"application/json;charset=UTF-8", true},
		{"Application/JSON", true},
		{"", false},
		{"text/plain", false},
		{"application/x-www-form-urlencoded", false},
		{"multipart/form-data; boundary=x", false},
		{"application/json; charset=latin1", false},
		{"application/json-patch+json", false},
		{"application/problem+json", false},
		{"application/json; foo=bar", false},
		{"application/", false},
	} {
		t.Run("Content-Type "+tc.ct, func(t *testing.T) {
			r := h.submit(t, tk, newKey(), intentBody, gatewaytest.ContentType(tc.ct))
			if tc.ok {
				gatewaytest.WantStatus(t, r, http.StatusOK)
				return
			}
			gatewaytest.WantProblem(t, r, http.StatusUnsupportedMediaType, contracts.CodeUnsupportedMediaType)
		})
	}
	t.Run("form body with access_token is 415, never read as credentials", func(t *testing.T) {
		r := h.Post(t, "/v8/intents", "access_token="+tk+"&intent=x", gatewaytest.IdempotencyKey(newKey()), gatewaytest.ContentType("application/x-www-form-urlencoded"))
		gatewaytest.WantProblem(t, r, http.StatusUnsupportedMediaType, contracts.CodeUnsupportedMediaType)
	})
}

// TestRoutes covers checklist items 64 and 65: unknown routes, wrong
// methods and hostile path arguments.
func TestRoutes(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)

	for _, path := range []string{"/v8/nope", "/nope", "/v8/intents/extra", "/v8/traces", "/v8/traces/", "/v9/intents", "/V8/intents"} {
		t.Run("unknown route "+path, func(t *testing.T) {
			gatewaytest.WantProblem(t, h.Get(t, path, gatewaytest.Bearer(tk)), http.StatusNotFound, contracts.CodeNotFound)
		})
	}

	for _, tc := range []struct {
		method, path string
		allow        []string
	}{
		{http.MethodDelete, "/v8/traces/abc", []string{"GET"}},
		{http.MethodPost, "/v8/traces/abc", []string{"GET"}},
		{http.MethodPut, "/v8/intents", []string{"POST"}},
		{http.MethodGet, "/v8/intents", []string{"POST"}},
		{http.MethodPatch, "/v8/missions/run-1", []string{"GET"}},
		{http.MethodGet, "/v8/tokens/revocations", []string{"POST"}},
		{http.MethodPost, "/healthz", []string{"GET"}},
	} {
		t.Run("wrong method "+tc.method+" "+tc.path, func(t *testing.T) {
			r := h.Do(t, tc.method, tc.path, "", gatewaytest.Bearer(tk))
			gatewaytest.WantProblem(t, r, http.StatusMethodNotAllowed, contracts.CodeMethodNotAllowed)
			var allow []string
			for _, v := range r.Header.Values("Allow") {
				for _, m := range strings.Split(v, ",") {
					allow = append(allow, strings.TrimSpace(m))
				}
			}
			slices.Sort(allow)
			if !slices.Equal(allow, tc.allow) {
				t.Errorf("Allow %q, want %q", allow, tc.allow)
			}
		})
	}

	for _, raw := range []string{
		"/v8/traces/../../etc/passwd",
		"/v8/traces/..%2F..%2Fetc%2Fpasswd",
		"/v8/traces/%2e%2e",
		"/v8/traces/%00",
		"/v8/traces/abc%00def",
		"/v8/traces/abc%0d%0aSet-Cookie:%20x=1",
		"/v8/traces/" + strings.Repeat("a", 10<<10),
		"/v8/traces/" + strings.Repeat("%41", 3<<10),
		"/v8/traces/%ZZ",
		"/v8/traces/%E2%80%AEtxt.exe",
		"/v8/traces/-leading-dash",
		"/v8/traces/a;b=c",
		"/v8/traces/%2Fetc",
		"/v8/missions/..%2Fcancel",
		"/v8/skills/%00",
	} {
		name := raw
		if len(name) > 60 {
			name = name[:60] + "…"
		}
		t.Run("path "+name, func(t *testing.T) {
			r := h.Get(t, "/", gatewaytest.Bearer(tk), rawPath(raw))
			switch r.Status {
			case http.StatusBadRequest, http.StatusNotFound:
			case http.StatusNotImplemented: // a route whose operation does not exist yet, reached with a valid argument
				if !strings.HasPrefix(raw, "/v8/missions/") && !strings.HasPrefix(raw, "/v8/skills/") {
					t.Fatalf("status 501 for %s", raw)
				}
			default:
				t.Fatalf("status %d, want 400 or 404: %s", r.Status, r.Body)
			}
			if strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
				gatewaytest.WantProblem(t, r, r.Status, contracts.Code(problemCode(t, r)))
			}
			if r.Header.Get("Set-Cookie") != "" {
				t.Fatal("header injection through the path")
			}
		})
	}

	t.Run("percent-encoded path argument is decoded", func(t *testing.T) {
		sub := h.submit(t, tk, newKey(), intentBody)
		trace := sub.TraceID(t)
		enc := "%" + strings.ToUpper(hexByte(trace[0])) + trace[1:] // the same id, first byte escaped
		r := h.Get(t, "/v8/traces/"+enc, gatewaytest.Bearer(tk))
		gatewaytest.WantStatus(t, r, http.StatusOK)
		if got := r.Object(t)["traceId"]; got != trace {
			t.Fatalf("traceId %v, want %s", got, trace)
		}
	})

	t.Run("unknown query parameter", func(t *testing.T) {
		sub := h.submit(t, tk, newKey(), intentBody)
		trace := sub.TraceID(t)
		for _, q := range []string{"zzz=1", "traceId=" + trace, "zzz", "a=%zz", "limit=1&limit=2"} {
			gatewaytest.WantProblem(t, h.Get(t, "/v8/traces/"+trace+"?"+q, gatewaytest.Bearer(tk)), http.StatusBadRequest, contracts.CodeInvalidParams)
		}
		r := h.Get(t, "/v8/traces/"+trace+"?zzz=1", gatewaytest.Bearer(tk))
		p := gatewaytest.WantProblem(t, r, http.StatusBadRequest, contracts.CodeInvalidParams)
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/zzz" {
			t.Errorf("errors %+v, want one at /zzz", p.Errors)
		}
		gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+trace+"?", gatewaytest.Bearer(tk)), http.StatusOK)
	})
}

// rawPath sends path verbatim in the request line, unparsed and
// unnormalized by the client.
func rawPath(path string) gatewaytest.RequestOption {
	return func(r *http.Request) { r.URL.Opaque = path }
}

func hexByte(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

func problemCode(t *testing.T, r *gatewaytest.Response) string {
	t.Helper()
	c, _ := r.Object(t)["code"].(string)
	return c
}

// TestBodyLimit covers checklist items 66 and 67: the configured body limit
// is exact, with and without a Content-Length.
func TestBodyLimit(t *testing.T) {
	const limit = 256
	h := newHarness(t, withLimits(func(l *config.Limits) { l.MaxBodyBytes = limit }))
	tk := h.tokenA(t)
	body := func(n int) string {
		prefix, suffix := `{"intent":"`, `"}`
		return prefix + strings.Repeat("x", n-len(prefix)-len(suffix)) + suffix
	}
	if len(body(limit)) != limit {
		t.Fatal("bad body size")
	}
	for _, tc := range []struct {
		name   string
		size   int
		opts   []gatewaytest.RequestOption
		status int
	}{
		{"at the limit", limit, nil, http.StatusOK},
		{"at the limit, chunked", limit, []gatewaytest.RequestOption{gatewaytest.Chunked()}, http.StatusOK},
		{"one byte over", limit + 1, nil, http.StatusRequestEntityTooLarge},
		{"one byte over, chunked", limit + 1, []gatewaytest.RequestOption{gatewaytest.Chunked()}, http.StatusRequestEntityTooLarge},
		{"far over", 4 << 20, nil, http.StatusRequestEntityTooLarge},
		{"far over, chunked", 4 << 20, []gatewaytest.RequestOption{gatewaytest.Chunked()}, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.submit(t, tk, newKey(), body(tc.size), tc.opts...)
			if tc.status == http.StatusOK {
				gatewaytest.WantStatus(t, r, http.StatusOK)
				return
			}
			gatewaytest.WantProblem(t, r, tc.status, contracts.CodeContentTooLarge)
		})
	}
	t.Run("operator endpoint too", func(t *testing.T) {
		r := h.Post(t, "/v8/tokens/revocations", `{"jti":"`+strings.Repeat("j", limit)+`"}`, gatewaytest.Bearer(tk), gatewaytest.Chunked())
		gatewaytest.WantProblem(t, r, http.StatusRequestEntityTooLarge, contracts.CodeContentTooLarge)
	})
	// Every POST operator endpoint checks a declared size first, as a tool
	// does: an oversized body is refused before authentication is read.
	for _, path := range []string{"/v8/tokens/revocations", "/v8/config/reload", "/v8/approvals/apr_x/approve", contracts.CoverageRunsPath} {
		t.Run("operator endpoint, declared size before authentication: "+path, func(t *testing.T) {
			r := h.Post(t, path, `{"note":"`+strings.Repeat("n", limit)+`"}`)
			gatewaytest.WantProblem(t, r, http.StatusRequestEntityTooLarge, contracts.CodeContentTooLarge)
		})
	}
	t.Run("safe POST too", func(t *testing.T) {
		r := h.Post(t, "/v8/capabilities/search", `{"query":"`+strings.Repeat("q", limit)+`"}`, gatewaytest.Bearer(tk))
		gatewaytest.WantProblem(t, r, http.StatusRequestEntityTooLarge, contracts.CodeContentTooLarge)
	})
}
