package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestIdempotencyKeyHeader covers checklist items 35-38 on POST /v8/intents.
func TestIdempotencyKeyHeader(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)

	t.Run("missing key records nothing", func(t *testing.T) {
		trace := newTraceID()
		r := h.submit(t, tk, "", intentBody, gatewaytest.InTrace(trace))
		gatewaytest.WantProblem(t, r, http.StatusBadRequest, contracts.CodeIdempotencyKeyMissing)
		evs := h.events(t, tenantA, trace)
		if n := countType(evs, "intent.submitted"); n != 0 {
			t.Fatalf("a refused submit recorded %d intents", n)
		}
		if len(evs) != 1 || evs[0].Type != "request.refused" || evs[0].Code != string(contracts.CodeIdempotencyKeyMissing) {
			t.Fatalf("trace of the refusal: %+v", evs)
		}
	})

	pad := func(prefix string, n int) string { return prefix + strings.Repeat("x", n-len(prefix)) }
	for _, tc := range []struct {
		name  string
		lines []string // Idempotency-Key field lines as sent
		code  contracts.Code
	}{
		{"15 characters", []string{pad("a", 15)}, contracts.CodeIdempotencyKeyInvalid},
		{"129 characters", []string{pad("a", 129)}, contracts.CodeIdempotencyKeyInvalid},
		{"16 characters", []string{pad("k16", 16)}, ""},
		{"128 characters", []string{pad("k128", 128)}, ""},
		{"colons, dots, dashes, underscores", []string{"urn:uuid:6ba7b810-9dad_11d1.80b4"}, ""},
		{"quoted 16 characters", []string{`"` + pad("q16", 16) + `"`}, ""},
		{"first character a dash", []string{pad("-a", 20)}, contracts.CodeIdempotencyKeyInvalid},
		{"first character a dot", []string{pad(".a", 20)}, contracts.CodeIdempotencyKeyInvalid},
		{"inner space", []string{"abcdefgh ijklmnopq"}, contracts.CodeIdempotencyKeyInvalid},
		{"inner space quoted", []string{`"abcdefgh ijklmnopq"`}, contracts.CodeIdempotencyKeyInvalid},
		{"slash", []string{"abcdefgh/ijklmnopq"}, contracts.CodeIdempotencyKeyInvalid},
		{"plus", []string{"abcdefgh+ijklmnopq"}, contracts.CodeIdempotencyKeyInvalid},
		{"non-ASCII", []string{"schlüssel-schlüssel-1"}, contracts.CodeIdempotencyKeyInvalid},
		{"empty", []string{""}, contracts.CodeIdempotencyKeyInvalid},
		{"empty sf-string", []string{`""`}, contracts.CodeIdempotencyKeyInvalid},
		{"unterminated sf-string", []string{`"abcdefghijklmnopq`}, contracts.CodeIdempotencyKeyInvalid},
		{"sf-string with a parameter", []string{`"abcdefghijklmnopq";v=1`}, contracts.CodeIdempotencyKeyInvalid},
		{"bare with a parameter", []string{`abcdefghijklmnopq;v=1`}, contracts.CodeIdempotencyKeyInvalid},
		{"sf-string with an escape", []string{`"abcdefgh\"ijklmnopq"`}, contracts.CodeIdempotencyKeyInvalid},
		{"two field lines", []string{pad("one", 20), pad("two", 20)}, contracts.CodeIdempotencyKeyInvalid},
		{"two identical field lines", []string{pad("same", 20), pad("same", 20)}, contracts.CodeIdempotencyKeyInvalid},
		{"sf-list", []string{`"` + pad("one", 20) + `", "` + pad("two", 20) + `"`}, contracts.CodeIdempotencyKeyInvalid},
		{"bare list", []string{pad("one", 20) + ", " + pad("two", 20)}, contracts.CodeIdempotencyKeyInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace := newTraceID()
			opts := []gatewaytest.RequestOption{gatewaytest.InTrace(trace)}
			for _, l := range tc.lines {
				opts = append(opts, gatewaytest.IdempotencyKey(l))
			}
			r := h.submit(t, tk, "", intentBody, opts...)
			if tc.code == "" {
				gatewaytest.WantStatus(t, r, http.StatusOK)
				notReplayed(t, r)
				return
			}
			p := gatewaytest.WantProblem(t, r, http.StatusBadRequest, tc.code)
			for _, l := range tc.lines {
				if len(l) > 3 && strings.Contains(p.Detail, l) {
					t.Errorf("the refusal repeats the key: %s", p.Detail)
				}
			}
			if n := countType(h.events(t, tenantA, trace), "intent.submitted"); n != 0 {
				t.Fatalf("a refused key recorded %d intents", n)
			}
		})
	}

	t.Run("sf-string and bare token are the same key", func(t *testing.T) {
		k := newKey()
		bare := h.submit(t, tk, k, intentBody)
		gatewaytest.WantStatus(t, bare, http.StatusOK)
		wantReplayOf(t, h.submit(t, tk, `"`+k+`"`, intentBody), bare)
		k2 := newKey()
		quoted := h.submit(t, tk, `"`+k2+`"`, intentBody)
		gatewaytest.WantStatus(t, quoted, http.StatusOK)
		wantReplayOf(t, h.submit(t, tk, k2, intentBody), quoted)
	})

	t.Run("safe reads ignore the header", func(t *testing.T) {
		tr := h.submit(t, tk, newKey(), intentBody).TraceID(t)
		for _, lines := range [][]string{{"junk"}, {newKey(), newKey()}} {
			opts := []gatewaytest.RequestOption{gatewaytest.Bearer(tk)}
			for _, l := range lines {
				opts = append(opts, gatewaytest.IdempotencyKey(l))
			}
			gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+tr, opts...), http.StatusOK)
		}
	})

	t.Run("safe POSTs never require a key", func(t *testing.T) {
		for _, tc := range []struct{ path, body string }{
			{"/v8/praxec/query", `{}`},
			{"/v8/praxec/query", `{"query":"deploy"}`},
			{"/v8/capabilities/search", `{"query":"deploy"}`},
			{"/v8/memory/query", `{"compartment":"c1","purpose":"p1","query":""}`},
		} {
			for _, keyLines := range [][]string{nil, {"junk"}, {newKey(), newKey()}} {
				opts := []gatewaytest.RequestOption{gatewaytest.Bearer(tk)}
				for _, l := range keyLines {
					opts = append(opts, gatewaytest.IdempotencyKey(l))
				}
				// The operations answer 501 until they exist; whatever they
				// answer, it is never about the key and never a failure.
				r := h.Post(t, tc.path, tc.body, opts...)
				if r.Status >= 500 && r.Status != http.StatusNotImplemented {
					t.Errorf("POST %s %s with key lines %q: %s", tc.path, tc.body, keyLines, r)
				}
				if strings.Contains(string(r.Body), "idempotency-") {
					t.Errorf("POST %s: a safe read answered about its key: %s", tc.path, r.Body)
				}
			}
		}
	})

	t.Run("versioned praxec command honours a key when sent", func(t *testing.T) {
		body := `{"definitionId":"deploy"}`
		r := h.Post(t, "/v8/praxec/command", body, gatewaytest.Bearer(tk))
		if strings.Contains(string(r.Body), "idempotency-") || r.Status >= 500 && r.Status != http.StatusNotImplemented {
			t.Fatalf("no key: %s", r)
		}
		r = h.Post(t, "/v8/praxec/command", body, gatewaytest.Bearer(tk), gatewaytest.IdempotencyKey("short"))
		gatewaytest.WantProblem(t, r, http.StatusBadRequest, contracts.CodeIdempotencyKeyInvalid)
		r = h.Post(t, "/v8/praxec/command", body, gatewaytest.Bearer(tk), gatewaytest.IdempotencyKey(newKey()), gatewaytest.IdempotencyKey(newKey()))
		gatewaytest.WantProblem(t, r, http.StatusBadRequest, contracts.CodeIdempotencyKeyInvalid)
	})
}

// TestIdempotentReplay covers checklist items 39-44 and 56 on POST
// /v8/intents.
func TestIdempotentReplay(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)
	trace := newTraceID()
	k := newKey()

	first := h.submit(t, tk, k, intentBody, gatewaytest.InTrace(trace))
	gatewaytest.WantStatus(t, first, http.StatusOK)
	notReplayed(t, first)
	orig := first.Object(t)
	if orig["status"] != "recorded" || orig["traceId"] != trace {
		t.Fatalf("first answer %s", first.Body)
	}
	intentID := orig["intentId"].(string)
	if err := contracts.ValidateOutput(contracts.ToolSubmitIntent, orig); err != nil {
		t.Errorf("answer does not match the output schema: %v", err)
	}

	for _, tc := range []struct {
		name string
		body string
	}{
		{"same body", intentBody},
		{"members reordered and spaced", " {\n \"tags\" : [ \"deploy\" , \"staging\" ] ,\t\"intent\":\"deploy the payments service to staging\" }\n"},
		{"escapes for the same characters", `{"intent":"deploy the payments service to st\u0061ging","tags":["deploy","staging"]}`},
	} {
		t.Run("replay: "+tc.name, func(t *testing.T) {
			// A fresh token of the same principal replays too.
			wantReplayOf(t, h.submit(t, h.tokenA(t), k, tc.body, gatewaytest.InTrace(trace)), first)
		})
	}

	for _, tc := range []struct {
		name string
		body string
	}{
		{"other intent", `{"intent":"delete the payments service"}`},
		{"tags reordered", `{"intent":"deploy the payments service to staging","tags":["staging","deploy"]}`},
		{"tags dropped", `{"intent":"deploy the payments service to staging"}`},
	} {
		t.Run("reuse: "+tc.name, func(t *testing.T) {
			r := h.submit(t, tk, k, tc.body, gatewaytest.InTrace(trace))
			p := gatewaytest.WantProblem(t, r, http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
			if _, ok := p.Raw["retryable"]; !ok || p.Retryable {
				t.Errorf("a reused key is retryable: %s", r.Body)
			}
			notReplayed(t, r)
		})
	}

	t.Run("reuse on another route", func(t *testing.T) {
		// The record names its operation: the same key on
		// aura_create_mission is a reuse, whatever the body.
		r := h.Post(t, "/v8/missions", `{"goal":"deploy the payments service to staging"}`, gatewaytest.Bearer(tk), gatewaytest.IdempotencyKey(k), gatewaytest.InTrace(trace))
		gatewaytest.WantProblem(t, r, http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
	})

	t.Run("original untouched after reuse attempts", func(t *testing.T) {
		wantReplayOf(t, h.submit(t, tk, k, intentBody, gatewaytest.InTrace(trace)), first)
	})

	t.Run("schema-invalid body with a completed key is a 400, not a replay", func(t *testing.T) {
		r := h.submit(t, tk, k, `{"intent":""}`, gatewaytest.InTrace(trace))
		gatewaytest.WantProblem(t, r, http.StatusBadRequest, contracts.CodeInvalidParams)
		notReplayed(t, r)
	})

	var second *gatewaytest.Response
	t.Run("different key, identical body is a new intent", func(t *testing.T) {
		second = h.submit(t, tk, newKey(), intentBody, gatewaytest.InTrace(trace))
		gatewaytest.WantStatus(t, second, http.StatusOK)
		notReplayed(t, second)
		if second.Object(t)["intentId"] == intentID {
			t.Fatal("a new key replayed the old intent")
		}
	})

	t.Run("exactly the intents sent", func(t *testing.T) {
		evs := h.events(t, tenantA, trace)
		if n := countType(evs, "intent.submitted"); n != 2 {
			t.Fatalf("%d intents recorded, want 2: %v", n, eventTypes(evs))
		}
		if n := countType(evs, "request.replayed"); n != 4 {
			t.Errorf("%d replays audited, want 4: %v", n, eventTypes(evs))
		}
		if !h.intentExists(t, tenantA, intentID) {
			t.Error("the first intent is not in the store")
		}
	})

	t.Run("after the retention window the key acts no more", func(t *testing.T) {
		h.clock.Advance(time.Duration(h.cfg.Server.Idempotency.Retention) + time.Minute)
		r := h.submit(t, h.tokenA(t), k, intentBody)
		p := gatewaytest.WantProblem(t, r, http.StatusConflict, contracts.CodeIdempotencyKeyExpired)
		if _, ok := p.Raw["retryable"]; !ok || p.Retryable {
			t.Errorf("an expired key is retryable: %s", r.Body)
		}
		notReplayed(t, r)
		gatewaytest.WantProblem(t, h.submit(t, h.tokenA(t), k, `{"intent":"delete the payments service"}`), http.StatusUnprocessableEntity,
			contracts.CodeIdempotencyKeyReused)
	})

	t.Run("after the tombstone window the key is fresh", func(t *testing.T) {
		h.clock.Advance(time.Duration(h.cfg.Server.Idempotency.TombstoneRetention))
		r := h.submit(t, h.tokenA(t), k, intentBody)
		gatewaytest.WantStatus(t, r, http.StatusOK)
		notReplayed(t, r)
		if r.Object(t)["intentId"] == intentID {
			t.Fatal("an expired record replayed")
		}
	})
}

// TestPreExecutionFailuresKeepTheKey: refusals before the operation runs
// consume no key (47, 48).
func TestPreExecutionFailuresKeepTheKey(t *testing.T) {
	h := newHarness(t, withLimits(func(l *config.Limits) { l.MaxBodyBytes = 256 }))
	tk := h.tokenA(t)
	big := `{"intent":"` + strings.Repeat("x", 300) + `"}`
	for _, tc := range []struct {
		name   string
		send   func(t *testing.T, key string) *gatewaytest.Response
		status int
		code   contracts.Code
	}{
		{"schema violation", func(t *testing.T, k string) *gatewaytest.Response { return h.submit(t, tk, k, `{"intent":""}`) },
			http.StatusBadRequest, contracts.CodeInvalidParams},
		{"unknown field", func(t *testing.T, k string) *gatewaytest.Response {
			return h.submit(t, tk, k, `{"intent":"x","zzz":1}`)
		},
			http.StatusBadRequest, contracts.CodeInvalidParams},
		{"malformed JSON", func(t *testing.T, k string) *gatewaytest.Response { return h.submit(t, tk, k, `{"intent":"x"`) },
			http.StatusBadRequest, contracts.CodeMalformedJSON},
		{"too deep", func(t *testing.T, k string) *gatewaytest.Response { return h.submit(t, tk, k, deepBody(33)) },
			http.StatusBadRequest, contracts.CodeRequestLimits},
		{"too large, chunked", func(t *testing.T, k string) *gatewaytest.Response {
			return h.submit(t, tk, k, big, gatewaytest.Chunked())
		},
			http.StatusRequestEntityTooLarge, contracts.CodeContentTooLarge},
		{"too large, with length", func(t *testing.T, k string) *gatewaytest.Response { return h.submit(t, tk, k, big) },
			http.StatusRequestEntityTooLarge, contracts.CodeContentTooLarge},
		{"wrong media type", func(t *testing.T, k string) *gatewaytest.Response {
			return h.submit(t, tk, k, intentBody, gatewaytest.ContentType("text/plain"))
		}, http.StatusUnsupportedMediaType, contracts.CodeUnsupportedMediaType},
		{"expired token", func(t *testing.T, k string) *gatewaytest.Response {
			return h.submit(t, h.token(t, tok{TTL: -time.Hour}), k, intentBody)
		}, http.StatusUnauthorized, contracts.CodeInvalidToken},
		{"no token", func(t *testing.T, k string) *gatewaytest.Response {
			return h.Post(t, "/v8/intents", intentBody, gatewaytest.IdempotencyKey(k))
		}, http.StatusUnauthorized, contracts.CodeUnauthenticated},
		{"missing scope", func(t *testing.T, k string) *gatewaytest.Response {
			return h.submit(t, h.token(t, tok{Scopes: []string{"traces:read"}}), k, intentBody)
		}, http.StatusForbidden, contracts.CodeInsufficientScope},
		{"idempotency key in the body", func(t *testing.T, k string) *gatewaytest.Response {
			return h.submit(t, tk, k, `{"intent":"x","idempotencyKey":"`+k+`"}`)
		}, http.StatusBadRequest, contracts.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKey()
			gatewaytest.WantProblem(t, tc.send(t, k), tc.status, tc.code)
			r := h.submit(t, tk, k, intentBody)
			gatewaytest.WantStatus(t, r, http.StatusOK)
			notReplayed(t, r)
		})
	}
}

// rawResult is an answer received on another goroutine.
type rawResult struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// submitAsync submits intentBody with key in trace. It runs on its own
// goroutine, so it reports errors instead of failing.
func (h *harness) submitAsync(token, key, trace string) rawResult {
	req, err := http.NewRequest(http.MethodPost, h.url+"/v8/intents", strings.NewReader(intentBody))
	if err != nil {
		return rawResult{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Traceparent", "00-"+trace+"-00f067aa0ba902b7-01")
	res, err := h.client.Do(req)
	if err != nil {
		return rawResult{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return rawResult{status: res.StatusCode, header: res.Header, body: b, err: err}
}

// TestConcurrentSameKey: 20 concurrent identical requests make exactly one
// intent; the rest are replays or 409 with Retry-After; none is a 5xx (45).
func TestConcurrentSameKey(t *testing.T) {
	h := newHarness(t)
	for round := range 4 {
		t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) {
			tk := h.token(t, tok{Subject: fmt.Sprintf("racer-%d", round)}) // a rate-limit bucket per round
			k, trace := newKey(), newTraceID()
			const n = 20
			results := gatewaytest.Race(n, func(int) rawResult { return h.submitAsync(tk, k, trace) })

			var fresh []rawResult
			var replays, busy int
			for _, r := range results {
				if r.err != nil {
					t.Fatal(r.err)
				}
				switch {
				case r.status == http.StatusOK && r.header.Get("Idempotent-Replayed") == "":
					fresh = append(fresh, r)
				case r.status == http.StatusOK && r.header.Get("Idempotent-Replayed") == "true":
					replays++
				case r.status == http.StatusConflict:
					busy++
					if !strings.Contains(string(r.body), string(contracts.CodeIdempotencyInProgress)) {
						t.Errorf("409 is not in-progress: %s", r.body)
					}
					if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
						t.Errorf("409 Retry-After %q, want a positive integer", r.header.Get("Retry-After"))
					}
					// Its next move: the same request with the same key.
					var p gatewaytest.Problem
					if err := json.Unmarshal(r.body, &p); err != nil || len(p.Links) != 1 || p.Links[0].Rel != "retry" ||
						p.Links[0].Method != contracts.ToolSubmitIntent || p.Links[0].Args["idempotencyKey"] != k {
						t.Errorf("409 links %+v (%v), want a retry with the key", p.Links, err)
					}
				default:
					t.Errorf("unexpected answer %d %s", r.status, r.body)
				}
			}
			if len(fresh) != 1 {
				t.Fatalf("%d fresh answers, want exactly 1 (replays %d, in progress %d)", len(fresh), replays, busy)
			}
			for _, r := range results {
				if r.status == http.StatusOK && string(r.body) != string(fresh[0].body) {
					t.Errorf("replay body differs:\n%s\n%s", r.body, fresh[0].body)
				}
			}
			if n := countType(h.events(t, tenantA, trace), "intent.submitted"); n != 1 {
				t.Fatalf("%d intents recorded, want 1", n)
			}
			t.Logf("1 fresh, %d replays, %d in progress", replays, busy)
			// After the race, every retry replays.
			r := h.submit(t, tk, k, intentBody)
			if r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" || string(r.Body) != string(fresh[0].body) {
				t.Fatalf("retry after the race: %s", r)
			}
		})
	}
}

// TestConcurrentSameKeyAcrossReplicas: two gateway processes sharing the
// SQLite file receive the same keyed request at once; the store's unique
// key, not the in-process map, decides, and exactly one intent results.
func TestConcurrentSameKeyAcrossReplicas(t *testing.T) {
	h1 := newHarness(t)
	h2 := newHarness(t, asReplicaOf(h1, time.Hour))
	tk := h1.tokenA(t)
	k, trace := newKey(), newTraceID()
	const perReplica = 10
	results := gatewaytest.Race(2*perReplica, func(i int) rawResult {
		h := h1
		if i%2 == 1 {
			h = h2
		}
		return h.submitAsync(tk, k, trace)
	})
	fresh := 0
	var body string
	for _, r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		switch {
		case r.status == http.StatusOK:
			if r.header.Get("Idempotent-Replayed") == "" {
				fresh++
			}
			if body == "" {
				body = string(r.body)
			} else if string(r.body) != body {
				t.Errorf("two different answers for one key:\n%s\n%s", body, r.body)
			}
		case r.status == http.StatusConflict && r.header.Get("Retry-After") != "":
		default:
			t.Errorf("unexpected answer %d %s", r.status, r.body)
		}
	}
	if fresh != 1 {
		t.Fatalf("%d fresh answers across replicas, want 1", fresh)
	}
	if n := countType(h1.events(t, tenantA, trace), "intent.submitted"); n != 1 {
		t.Fatalf("%d intents recorded, want 1", n)
	}
	// Each replica now replays the one answer.
	for _, h := range []*harness{h1, h2} {
		r := h.submit(t, tk, k, intentBody)
		if r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" || string(r.Body) != body {
			t.Fatalf("retry on %s: %s", h.url, r)
		}
	}
}

// TestRefusalTraceReadsBack follows README: the 422 of a key reused with
// another body names its trace in the body (traceId, the trace of its
// Traceparent), and GET /v8/traces/{traceId} reads the refusal there.
func TestRefusalTraceReadsBack(t *testing.T) {
	h := newHarness(t)
	tk := h.tokenA(t)
	k := newKey()
	gatewaytest.WantStatus(t, h.submit(t, tk, k, intentBody), http.StatusOK)
	r := h.submit(t, tk, k, `{"intent":"something else"}`)
	p := gatewaytest.WantProblem(t, r, http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
	if p.TraceID != r.TraceID(t) {
		t.Fatalf("traceId %q, Traceparent %q", p.TraceID, r.Header.Get("Traceparent"))
	}
	h.flush(t)
	tr := h.Get(t, "/v8/traces/"+p.TraceID, gatewaytest.Bearer(tk))
	gatewaytest.WantStatus(t, tr, http.StatusOK)
	var body struct {
		Events []struct {
			Type string `json:"type"`
			Code string `json:"code"`
		} `json:"events"`
	}
	if err := json.Unmarshal(tr.Body, &body); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range body.Events {
		found = found || e.Code == string(contracts.CodeIdempotencyKeyReused)
	}
	if !found {
		t.Errorf("the trace of the 422 holds %s, want its refusal", tr.Body)
	}
}
