package mcpadapter_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/mcpadapter"
)

// An idempotency key belongs to the principal, not to the surface: a
// mutation sent over MCP replays over REST and the other way round, and a
// key reused for other arguments is refused on either.
func TestIdempotencyAcrossSurfaces(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	cs := h.inMemory(t, tok, nil)
	const intent = "deploy the payments service to staging"
	restSubmit := func(key, body string) (*gatewaytest.Response, map[string]any, []byte) {
		t.Helper()
		res, b := h.rest(t, http.MethodPost, "/v8/intents", body,
			map[string]string{"Authorization": "Bearer " + tok, "Idempotency-Key": key})
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("REST answer %d: %s", res.Status, b)
		}
		return res, m, b
	}

	t.Run("MCP first, then REST replays", func(t *testing.T) {
		const key = "mcp-then-rest-key-0001"
		first := call(t, cs, contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": key, "intent": intent})
		if first.meta[mcpadapter.ReplayedMetaKey] != nil {
			t.Errorf("a first submission is marked replayed: %v", first.meta)
		}
		res, body, raw := restSubmit(key, `{"intent":"`+intent+`"}`)
		if res.Status != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("REST twin: %d, Idempotent-Replayed %q: %s", res.Status, res.Header.Get("Idempotent-Replayed"), raw)
		}
		if body["intentId"] != first.str("intentId") || first.str("intentId") == "" {
			t.Errorf("REST replay intentId %v, MCP answered %q", body["intentId"], first.str("intentId"))
		}
		if !jsonEqual(t, raw, first.raw) {
			t.Errorf("REST replay body %s differs from the MCP answer %s", raw, first.raw)
		}
	})
	t.Run("REST first, then MCP replays", func(t *testing.T) {
		const key = "rest-then-mcp-key-0001"
		res, _, raw := restSubmit(key, `{"intent":"`+intent+`"}`)
		if res.Status != http.StatusOK || res.Header.Get("Idempotent-Replayed") == "true" {
			t.Fatalf("REST first: %d, replayed %q: %s", res.Status, res.Header.Get("Idempotent-Replayed"), raw)
		}
		again := call(t, cs, contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": key, "intent": intent})
		if again.meta[mcpadapter.ReplayedMetaKey] != true {
			t.Errorf("MCP replay _meta %v, want %s: true", again.meta, mcpadapter.ReplayedMetaKey)
		}
		if !jsonEqual(t, again.raw, raw) {
			t.Errorf("MCP replay %s differs from the REST answer %s", again.raw, raw)
		}
	})
	t.Run("same key, other arguments", func(t *testing.T) {
		const key = "mcp-reused-key-000001"
		call(t, cs, contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": key, "intent": intent})
		callErr(t, cs, contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": key, "intent": "something else"},
			contracts.CodeIdempotencyKeyReused)
		res, _, raw := restSubmit(key, `{"intent":"something else"}`)
		if res.Status != http.StatusUnprocessableEntity {
			t.Errorf("REST with the reused key: %d %s, want 422", res.Status, raw)
		}
	})
	t.Run("another principal's key is its own", func(t *testing.T) {
		// The same key from another subject is a fresh mutation.
		const key = "mcp-then-rest-key-0001"
		other, err := h.iss.Mint(h.issURL, h.cfg.Auth.Resource, "bob", tenantA, gatewaytest.AllScopes(), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		a := call(t, h.inMemory(t, other, nil), contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": key, "intent": intent})
		if a.meta[mcpadapter.ReplayedMetaKey] != nil {
			t.Errorf("another principal's submission replayed alice's: %v", a.meta)
		}
	})
}
