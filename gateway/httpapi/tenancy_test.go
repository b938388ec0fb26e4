package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestTenantIsolation covers checklist items 27-33 that apply today.
func TestTenantIsolation(t *testing.T) {
	h := newHarness(t)
	tokA, tokB := h.tokenA(t), h.tokenB(t)
	traceA := newTraceID()
	sub := h.submit(t, tokA, newKey(), intentBody, gatewaytest.InTrace(traceA))
	gatewaytest.WantStatus(t, sub, http.StatusOK)
	intentA := sub.Object(t)["intentId"].(string)
	h.flush(t)
	gatewaytest.WantStatus(t, h.Get(t, "/v8/traces/"+traceA, gatewaytest.Bearer(tokA)), http.StatusOK)

	t.Run("another tenant's trace is not found, like a missing one", func(t *testing.T) {
		foreign := h.Get(t, "/v8/traces/"+traceA, gatewaytest.Bearer(tokB))
		missing := h.Get(t, "/v8/traces/"+newTraceID(), gatewaytest.Bearer(tokB))
		pf := gatewaytest.WantProblem(t, foreign, http.StatusNotFound, contracts.CodeNotFound)
		pm := gatewaytest.WantProblem(t, missing, http.StatusNotFound, contracts.CodeNotFound)
		if pf.Type != pm.Type || pf.Title != pm.Title || pf.Status != pm.Status || pf.Code != pm.Code {
			t.Errorf("foreign %+v differs from missing %+v", pf, pm)
		}
		if members(t, foreign.Body) != members(t, missing.Body) {
			t.Errorf("members differ: %s vs %s", members(t, foreign.Body), members(t, missing.Body))
		}
		for _, name := range []string{"Content-Type", "Cache-Control", "WWW-Authenticate", "Retry-After", "Idempotent-Replayed"} {
			if foreign.Header.Get(name) != missing.Header.Get(name) {
				t.Errorf("header %s: foreign %q, missing %q", name, foreign.Header.Get(name), missing.Header.Get(name))
			}
		}
		for _, leak := range []string{tenantA, userA, intentA} {
			if strings.Contains(string(foreign.Body), leak) {
				t.Errorf("the refusal names %q: %s", leak, foreign.Body)
			}
		}
		// Tenant A's trace is unchanged by B's attempts.
		evs := h.events(t, tenantA, traceA)
		if got := eventTypes(evs); !slices.Equal(got, []string{"intent.submitted"}) {
			t.Errorf("A's trace after B's reads: %v", got)
		}
		if !h.intentExists(t, tenantA, intentA) || h.intentExists(t, tenantB, intentA) {
			t.Errorf("intent %s must exist for %s only", intentA, tenantA)
		}
	})

	t.Run("a request header cannot select another tenant", func(t *testing.T) {
		r := h.submit(t, tokA, newKey(), intentBody, gatewaytest.Header("X-Tenant-Id", tenantB), gatewaytest.Header("Tenant", tenantB))
		gatewaytest.WantStatus(t, r, http.StatusOK)
		id := r.Object(t)["intentId"].(string)
		if !h.intentExists(t, tenantA, id) || h.intentExists(t, tenantB, id) {
			t.Errorf("intent %s recorded outside the token's tenant", id)
		}
	})

	t.Run("tenant and owner fields in the body are unknown fields", func(t *testing.T) {
		for _, field := range []string{"tenantId", "tenant_id", "TenantID", "ownerId", "subject", "intentId", "traceId"} {
			r := h.submit(t, tokA, newKey(), `{"intent":"x","`+field+`":"`+tenantB+`"}`)
			p := gatewaytest.WantProblem(t, r, http.StatusBadRequest, contracts.CodeInvalidParams)
			if len(p.Errors) == 0 || p.Errors[0].Pointer != "/"+field {
				t.Errorf("%s: errors %+v, want pointer /%s", field, p.Errors, field)
			}
		}
	})

	t.Run("same key from two tenants makes two intents", func(t *testing.T) {
		key := newKey()
		ra := h.submit(t, tokA, key, intentBody)
		rb := h.submit(t, tokB, key, intentBody)
		gatewaytest.WantStatus(t, ra, http.StatusOK)
		gatewaytest.WantStatus(t, rb, http.StatusOK)
		notReplayed(t, ra, rb)
		ia, ib := ra.Object(t)["intentId"].(string), rb.Object(t)["intentId"].(string)
		if ia == ib {
			t.Fatalf("both tenants got intent %s", ia)
		}
		if !h.intentExists(t, tenantA, ia) || !h.intentExists(t, tenantB, ib) || h.intentExists(t, tenantA, ib) || h.intentExists(t, tenantB, ia) {
			t.Errorf("intents not recorded per tenant")
		}
		// Each tenant's retry replays its own answer.
		wantReplayOf(t, h.submit(t, h.tokenA(t), key, intentBody), ra)
		wantReplayOf(t, h.submit(t, h.tokenB(t), key, intentBody), rb)
	})

	t.Run("same tenant, another subject or client, is independent", func(t *testing.T) {
		key := newKey()
		alice := h.submit(t, tokA, key, intentBody)
		carol := h.submit(t, h.token(t, tok{Subject: "carol"}), key, intentBody)
		otherClient := h.submit(t, h.token(t, tok{Claims: map[string]any{"client_id": "another-agent"}}), key, intentBody)
		for _, r := range []*gatewaytest.Response{alice, carol, otherClient} {
			gatewaytest.WantStatus(t, r, http.StatusOK)
		}
		notReplayed(t, alice, carol, otherClient)
		ids := map[string]bool{}
		for _, r := range []*gatewaytest.Response{alice, carol, otherClient} {
			ids[r.Object(t)["intentId"].(string)] = true
		}
		if len(ids) != 3 {
			t.Fatalf("3 principals with one key made %d intents, want 3", len(ids))
		}
		// Carol reusing her key for another body is refused; alice's
		// record under the same key is untouched.
		r := h.submit(t, h.token(t, tok{Subject: "carol"}), key, `{"intent":"carol's own"}`)
		gatewaytest.WantProblem(t, r, http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
		wantReplayOf(t, h.submit(t, h.tokenA(t), key, intentBody), alice)
	})
}

// members lists the member names of a JSON object, sorted and joined.
func members(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

func notReplayed(t *testing.T, rs ...*gatewaytest.Response) {
	t.Helper()
	for _, r := range rs {
		if v := r.Header.Get("Idempotent-Replayed"); v != "" {
			t.Errorf("fresh answer has Idempotent-Replayed: %q", v)
		}
	}
}

// wantReplayOf checks that r replays orig exactly.
func wantReplayOf(t *testing.T, r, orig *gatewaytest.Response) {
	t.Helper()
	if r.Status != orig.Status {
		t.Fatalf("replay status %d, original %d: %s", r.Status, orig.Status, r.Body)
	}
	if r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay lacks Idempotent-Replayed: true (got %q)", r.Header.Get("Idempotent-Replayed"))
	}
	if string(r.Body) != string(orig.Body) {
		t.Errorf("replay body differs:\n got %s\nwant %s", r.Body, orig.Body)
	}
	for _, name := range []string{"Content-Type", "Cache-Control", "Location"} {
		if r.Header.Get(name) != orig.Header.Get(name) {
			t.Errorf("replay header %s %q, original %q", name, r.Header.Get(name), orig.Header.Get(name))
		}
	}
}
