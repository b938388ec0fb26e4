package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/issuer"
)

// TestRateLimit: a principal over its rate gets 429 with an integer
// Retry-After; other tenants and other principals are unaffected (69).
func TestRateLimit(t *testing.T) {
	const burst = 3
	h := newHarness(t, withLimits(func(l *config.Limits) { l.RatePerSecond = 0.01; l.Burst = burst }))
	tokA, tokB := h.tokenA(t), h.tokenB(t)
	path := "/v8/traces/" + newTraceID()
	for range burst {
		gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(tokA)), http.StatusNotFound)
	}
	r := h.Get(t, path, gatewaytest.Bearer(tokA))
	gatewaytest.WantProblem(t, r, http.StatusTooManyRequests, contracts.CodeRateLimited)
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || retry < 1 {
		t.Fatalf("Retry-After %q, want a positive integer of seconds", r.Header.Get("Retry-After"))
	}
	// A fresh token of the same principal shares the bucket.
	gatewaytest.WantProblem(t, h.submit(t, h.tokenA(t), newKey(), intentBody), http.StatusTooManyRequests, contracts.CodeRateLimited)

	// Another tenant, and another principal of the same tenant, are not
	// limited by alice's traffic.
	gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(tokB)), http.StatusNotFound)
	gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(h.token(t, tok{Subject: "carol"}))), http.StatusNotFound)
	// Unauthenticated requests are refused by authentication, not counted
	// against anyone.
	gatewaytest.WantProblem(t, h.Get(t, path), http.StatusUnauthorized, contracts.CodeUnauthenticated)

	// Once Retry-After has passed, alice may proceed.
	h.clock.Advance(time.Duration(retry) * time.Second)
	gatewaytest.WantStatus(t, h.Get(t, path, gatewaytest.Bearer(h.tokenA(t))), http.StatusNotFound)
	if v := gatewaytest.MetricValue(h.metricsText(t), "praxa_rate_limited_total", nil); v < 2 {
		t.Errorf("praxa_rate_limited_total %v, want >= 2", v)
	}
}

// TestAudit: a submit and the refusals of an authenticated principal are
// audit events of the request's trace, in order and redacted; refusals of
// unauthenticated requests write nothing.
func TestAudit(t *testing.T) {
	h := newHarness(t)
	claims := h.claims(tok{})
	tk, err := h.iss.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	jti := claims["jti"].(string)
	trace, k := newTraceID(), newKey()

	steps := []struct {
		name  string
		send  func() *gatewaytest.Response
		event string
		code  contracts.Code
	}{
		{"submit", func() *gatewaytest.Response { return h.submit(t, tk, k, intentBody, gatewaytest.InTrace(trace)) }, "intent.submitted", ""},
		{"replay", func() *gatewaytest.Response { return h.submit(t, tk, k, intentBody, gatewaytest.InTrace(trace)) }, "request.replayed", ""},
		{"missing key", func() *gatewaytest.Response { return h.submit(t, tk, "", intentBody, gatewaytest.InTrace(trace)) },
			"request.refused", contracts.CodeIdempotencyKeyMissing},
		{"malformed key", func() *gatewaytest.Response {
			return h.submit(t, tk, "bad key!", intentBody, gatewaytest.InTrace(trace))
		},
			"request.refused", contracts.CodeIdempotencyKeyInvalid},
		{"reused key", func() *gatewaytest.Response {
			return h.submit(t, tk, k, `{"intent":"another thing"}`, gatewaytest.InTrace(trace))
		},
			"request.refused", contracts.CodeIdempotencyKeyReused},
		{"invalid body", func() *gatewaytest.Response {
			return h.submit(t, tk, newKey(), `{"intent":"x","zzz":1}`, gatewaytest.InTrace(trace))
		},
			"request.refused", contracts.CodeInvalidParams},
		{"missing scope", func() *gatewaytest.Response {
			return h.submit(t, h.token(t, tok{Scopes: []string{"traces:read"}}), newKey(), intentBody, gatewaytest.InTrace(trace))
		}, "request.refused", contracts.CodeInsufficientScope},
		{"missing scope on a read", func() *gatewaytest.Response {
			return h.Get(t, "/v8/traces/"+newTraceID(), gatewaytest.Bearer(h.token(t, tok{Scopes: []string{"missions:write"}})), gatewaytest.InTrace(trace))
		}, "request.refused", contracts.CodeInsufficientScope},
		{"tool not allowed", func() *gatewaytest.Response {
			return h.submit(t, h.token(t, tok{Claims: map[string]any{"tools": []string{contracts.ToolGetTrace}}}), newKey(), intentBody, gatewaytest.InTrace(trace))
		}, "request.refused", contracts.CodeToolNotAllowed},
		{"not found", func() *gatewaytest.Response {
			return h.Get(t, "/v8/traces/"+newTraceID(), gatewaytest.Bearer(tk), gatewaytest.InTrace(trace))
		},
			"request.refused", contracts.CodeNotFound},
	}
	requestIDs := make([]string, len(steps))
	for i, s := range steps {
		r := s.send()
		if r.Header.Get("Traceparent") == "" || r.TraceID(t) != trace {
			t.Fatalf("%s: answered under trace %q, want %s", s.name, r.Header.Get("Traceparent"), trace)
		}
		requestIDs[i] = r.Header.Get("X-Request-Id")
	}

	h.flush(t)
	r := h.Get(t, "/v8/traces/"+trace, gatewaytest.Bearer(tk))
	gatewaytest.WantStatus(t, r, http.StatusOK)
	var got struct {
		TraceID string `json:"traceId"`
		Events  []struct {
			Seq       int64          `json:"seq"`
			Type      string         `json:"type"`
			At        string         `json:"at"`
			Outcome   string         `json:"outcome"`
			Code      string         `json:"code"`
			Subject   string         `json:"subject"`
			Operation string         `json:"operation"`
			Tool      string         `json:"tool"`
			RequestID string         `json:"requestId"`
			Attrs     map[string]any `json:"attributes"`
		} `json:"events"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if err := contracts.ValidateOutput(contracts.ToolGetTrace, r.Object(t)); err != nil {
		t.Errorf("trace does not match the output schema: %v", err)
	}
	var types []string
	for _, e := range got.Events {
		types = append(types, e.Type+" "+e.Code)
	}
	var want []string
	for _, s := range steps {
		want = append(want, s.event+" "+string(s.code))
	}
	if !slices.Equal(types, want) {
		t.Fatalf("trace events\n got %q\nwant %q", types, want)
	}
	var prev time.Time
	for i, e := range got.Events {
		if e.RequestID != requestIDs[i] {
			t.Errorf("event %d (%s) has requestId %q, the request was %q", i, e.Type, e.RequestID, requestIDs[i])
		}
		at, err := time.Parse(time.RFC3339Nano, e.At)
		if err != nil {
			t.Errorf("event %d: at %q: %v", i, e.At, err)
		}
		if at.Before(prev) || i > 0 && e.Seq == got.Events[i-1].Seq {
			t.Errorf("event %d out of order", i)
		}
		prev = at
	}
	if e := got.Events[0]; e.Outcome != "allowed" || e.Subject != userA || e.Operation != "submitIntent" || e.Tool != contracts.ToolSubmitIntent || e.Attrs["intentId"] == nil {
		t.Errorf("intent.submitted event %+v", e)
	}
	for _, secret := range []string{k, tk, jti, "payments service", "another thing"} {
		if strings.Contains(string(r.Body), secret) {
			t.Errorf("the trace holds %q", secret)
		}
	}
	logs := h.logs.String()
	for _, secret := range []string{k, tk, "payments service"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs hold %q", secret)
		}
	}

	t.Run("unauthenticated refusals write nothing", func(t *testing.T) {
		anon := newTraceID()
		for _, opts := range [][]gatewaytest.RequestOption{
			nil,
			{gatewaytest.Header("Authorization", "Basic YWxpY2U6c2VjcmV0")},
			{gatewaytest.Bearer(h.token(t, tok{TTL: -time.Hour}))},
			{gatewaytest.Bearer(h.token(t, tok{Sign: []issuer.SignOption{issuer.WithAlgNone()}}))},
			{gatewaytest.Bearer(h.token(t, tok{Sign: []issuer.SignOption{issuer.WithForeignKey()}}))},
			{gatewaytest.Bearer(h.token(t, tok{Claims: map[string]any{"aud": "https://other.example"}}))},
			{queryParam("access_token", tk)},
			{gatewaytest.Bearer("not.a.jwt")},
		} {
			for _, send := range []func(opts ...gatewaytest.RequestOption) *gatewaytest.Response{
				func(opts ...gatewaytest.RequestOption) *gatewaytest.Response {
					return h.Post(t, "/v8/intents", intentBody, append(opts, gatewaytest.IdempotencyKey(newKey()))...)
				},
				func(opts ...gatewaytest.RequestOption) *gatewaytest.Response {
					return h.Get(t, "/v8/traces/"+trace, opts...)
				},
			} {
				r := send(append(opts, gatewaytest.InTrace(anon))...)
				if r.Status != http.StatusUnauthorized && r.Status != http.StatusBadRequest {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
				if r.TraceID(t) != anon {
					t.Fatalf("answered under trace %s, want %s", r.TraceID(t), anon)
				}
			}
		}
		for _, tenant := range []string{tenantA, tenantB, ""} {
			if evs := h.events(t, tenant, anon); len(evs) != 0 {
				t.Errorf("tenant %q: unauthenticated refusals wrote %d events: %v", tenant, len(evs), eventTypes(evs))
			}
		}
		// The trace of the authenticated steps did not grow either (a
		// trace.read of the read above is in its own trace).
		if evs := h.events(t, tenantA, trace); len(evs) != len(steps) {
			t.Errorf("trace grew to %d events: %v", len(evs), eventTypes(evs))
		}
	})

	t.Run("reads are audited in their own trace", func(t *testing.T) {
		rt := newTraceID()
		gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+trace, gatewaytest.Bearer(tk), gatewaytest.InTrace(rt)), http.StatusOK)
		evs := h.events(t, tenantA, rt)
		if len(evs) != 1 || evs[0].Type != "trace.read" || evs[0].Attributes["traceId"] != trace {
			t.Errorf("read audit: %+v", evs)
		}
	})
}

// TestMetrics: /metrics labels requests by route pattern, never by raw
// path, and counts authentication refusals and idempotency outcomes.
func TestMetrics(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)
	ids := []string{newTraceID(), newTraceID()}
	for _, id := range ids {
		gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+id, gatewaytest.Bearer(tk)), http.StatusNotFound)
	}
	gatewaytest.WantStatus(t, h.Get(t, "/v8/unknown-"+ids[0]), http.StatusNotFound)
	gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+ids[0]), http.StatusUnauthorized)
	gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+ids[0], gatewaytest.Bearer(h.token(t, tok{TTL: -time.Hour}))), http.StatusUnauthorized)
	gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+ids[0], gatewaytest.Bearer(h.token(t, tok{Sign: []issuer.SignOption{issuer.WithAlgNone()}}))), http.StatusUnauthorized)
	k := newKey()
	gatewaytest.WantStatus(t, h.submit(t, tk, k, intentBody), http.StatusOK)
	gatewaytest.WantStatus(t, h.submit(t, tk, k, intentBody), http.StatusOK)
	gatewaytest.WantStatus(t, h.submit(t, tk, k, `{"intent":"other"}`), http.StatusUnprocessableEntity)
	h.clock.Advance(time.Duration(h.cfg.Server.Idempotency.Retention) + time.Minute)
	gatewaytest.WantStatus(t, h.submit(t, h.tokenA(t), k, intentBody), http.StatusConflict)

	text := h.metricsText(t)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"praxa_http_requests_total", map[string]string{"route": "/v8/traces/{traceId}", "method": "GET", "status": "404"}, 2},
		{"praxa_http_requests_total", map[string]string{"route": "/v8/traces/{traceId}", "method": "GET", "status": "401"}, 3},
		{"praxa_http_requests_total", map[string]string{"route": "/v8/intents", "method": "POST", "status": "200"}, 2},
		{"praxa_http_requests_total", map[string]string{"route": "/v8/intents", "method": "POST", "status": "422"}, 1},
		{"praxa_http_requests_total", map[string]string{"route": "/v8/intents", "method": "POST", "status": "409"}, 1},
		{"praxa_auth_refusals_total", map[string]string{"reason": "missing"}, 1},
		{"praxa_auth_refusals_total", map[string]string{"reason": "expired"}, 1},
		{"praxa_auth_refusals_total", map[string]string{"reason": "unsupported algorithm"}, 1},
		{"praxa_idempotency_total", map[string]string{"outcome": "replayed"}, 1},
		{"praxa_idempotency_total", map[string]string{"outcome": "reused"}, 1},
		{"praxa_idempotency_total", map[string]string{"outcome": "expired"}, 1},
		{"praxa_http_request_duration_seconds_count", map[string]string{"route": "/v8/intents", "method": "POST"}, 4},
	} {
		if got := gatewaytest.MetricValue(text, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	for _, id := range ids {
		if strings.Contains(text, id) {
			t.Errorf("a raw path is a metric label: %s", id)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "praxa_http_requests_total{") && strings.Contains(line, "unknown-") {
			t.Errorf("an unmatched path is a label: %s", line)
		}
	}
}

// TestHealth: liveness and readiness need no credentials; readiness
// follows the store.
func TestHealth(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		r := h.Get(t, path)
		gatewaytest.WantStatus(t, r, http.StatusOK)
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s Content-Type %q", path, r.Header.Get("Content-Type"))
		}
	}
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	gatewaytest.WantProblem(t, h.Get(t, "/readyz"), http.StatusServiceUnavailable, contracts.CodeUnavailable)
	gatewaytest.WantStatus(t, h.Get(t, "/healthz"), http.StatusOK)
}
