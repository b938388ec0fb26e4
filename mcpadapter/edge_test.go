package mcpadapter_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/mcpadapter"
)

// rpcError is a JSON-RPC error answer as a client reads it.
type rpcError struct {
	status int
	id     string
	code   int
	msg    string
	size   int
}

// rpcAnswer is a JSON-RPC answer as the tests decode it, by a type of
// their own rather than the contract's.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// postRPC posts a raw body to /mcp with tok at protocol version (every
// header a conforming client sends) and reads the answer as a JSON-RPC
// error when it is application/json; chunked sends it without a
// Content-Length.
func postRPC(t *testing.T, h *harness, tok, version string, body []byte, chunked bool) rpcError {
	t.Helper()
	opts := []gatewaytest.RequestOption{gatewaytest.Bearer(tok),
		gatewaytest.Header("Accept", "application/json, text/event-stream"), gatewaytest.Header("Mcp-Protocol-Version", version)}
	if chunked {
		opts = append(opts, gatewaytest.Chunked()) // no length the client can see
	}
	res := h.g.REST().Do(t, http.MethodPost, "/mcp", body, opts...)
	b := res.Body
	a := rpcError{status: res.Status, size: len(b)}
	if res.Header.Get("Content-Type") != "application/json" {
		return a
	}
	var msg rpcAnswer
	if err := json.Unmarshal(b, &msg); err != nil || msg.JSONRPC != "2.0" {
		t.Fatalf("%d: not a JSON-RPC answer: %.300s", res.Status, b)
	}
	a.id = string(msg.ID)
	if msg.Error != nil {
		a.code, a.msg = msg.Error.Code, msg.Error.Message
	}
	return a
}

// listWithMeta is a tools/list whose _meta holds member "x" of text pad.
func listWithMeta(id, pad string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"_meta":{"x":"` + pad + `"}}}`)
}

// TestStreamableHTTPBodyLimit: /mcp bounds a body with server.limits'
// maxBodyBytes, the one setting /v8 uses: a body of exactly the limit is
// served, one byte more is HTTP 413 with a JSON-RPC invalid request and a
// null id, with a Content-Length and chunked, and nothing runs.
func TestStreamableHTTPBodyLimit(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	limit := int(h.cfg.Server.Limits.MaxBodyBytes)
	if limit != config.DefaultMaxBodyBytes {
		t.Fatalf("the harness's limit is %d, want the default %d", limit, config.DefaultMaxBodyBytes)
	}
	frame := len(listWithMeta("1", ""))
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, chunked := range []bool{false, true} {
			// (A bare request at 2026-07-28 lacks its _meta and headers.)
			at := postRPC(t, h, tok, "2025-11-25", listWithMeta("1", strings.Repeat("x", limit-frame)), chunked)
			if at.status != http.StatusOK {
				t.Errorf("%s chunked=%v: a body of exactly %d bytes answered %d %d %q", version, chunked, limit, at.status, at.code, at.msg)
			}
			for _, size := range []int{limit + 1, 2 << 20} {
				over := postRPC(t, h, tok, version, listWithMeta("2", strings.Repeat("x", size-frame)), chunked)
				if over.status != http.StatusRequestEntityTooLarge || over.code != contracts.RPCInvalidRequest || over.id != "null" ||
					!strings.Contains(over.msg, "1048576") {
					t.Errorf("%s chunked=%v: a body of %d bytes answered %+v, want 413 -32600 id null", version, chunked, size, over)
				}
			}
		}
	}

	// Nothing ran: the key of a refused call is still free for its body.
	call := func(intent string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + contracts.ToolSubmitIntent +
			`","arguments":{"idempotencyKey":"edge-limit-key-000001","intent":"` + intent + `"}}}`)
	}
	if a := postRPC(t, h, tok, "2025-11-25", call(strings.Repeat("x", 2<<20)), false); a.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 2 MiB tools/call answered %+v", a)
	}
	cs := h.overHTTP(t, tok)
	success(t, contracts.ToolSubmitIntent, tryCall(t, cs, contracts.ToolSubmitIntent,
		map[string]any{"idempotencyKey": "edge-limit-key-000001", "intent": "small"}))
}

// TestStreamableHTTPBodyLimitConfigured: one setting bounds both edges.
func TestStreamableHTTPBodyLimitConfigured(t *testing.T) {
	h := newHarness(t, &harnessOptions{edit: func(c *config.Config) { c.Server.Limits.MaxBodyBytes = 4096 }})
	tok := h.token(t, nil, nil)
	if a := postRPC(t, h, tok, "2025-11-25", listWithMeta("1", strings.Repeat("x", 3000)), false); a.status != http.StatusOK {
		t.Errorf("/mcp, 3000 bytes under a limit of 4096: %+v", a)
	}
	a := postRPC(t, h, tok, "2025-11-25", listWithMeta("1", strings.Repeat("x", 5000)), false)
	if a.status != http.StatusRequestEntityTooLarge || !strings.Contains(a.msg, "4096") {
		t.Errorf("/mcp, 5000 bytes under a limit of 4096: %+v", a)
	}
	body := `{"intent":"` + strings.Repeat("x", 5000) + `"}`
	res, b := h.rest(t, http.MethodPost, "/v8/intents", body,
		map[string]string{"Authorization": "Bearer " + tok, "Idempotency-Key": "edge-limit-key-000002"})
	if res.Status != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "4096") {
		t.Errorf("/v8, 5000 bytes under a limit of 4096: %d %s", res.Status, b)
	}
}

// TestStreamableHTTPEnvelope: the JSON-RPC message is read strictly before
// the SDK sees it, at every revision: a parse error for text that is not
// JSON or not UTF-8 (invalid bytes or an unpaired surrogate escape,
// anywhere), an invalid request for a member named twice (anywhere) or an
// id beyond mcpadapter.MaxIDBytes, never echoed; HTTP 400 and nothing runs.
func TestStreamableHTTPEnvelope(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	long := strings.Repeat("i", 100_000)
	for _, c := range []struct {
		name string
		body string
		code int
		id   string
	}{
		{"method twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{}}`, -32600, "null"},
		{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{}}`, -32600, "null"},
		{"name twice in _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"a":1,"a":2}}}`, -32600, "null"},
		{"name twice through an escape", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"a":1,"\u0061":2}}}`, -32600, "null"},
		{"name twice in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"praxec.query","arguments":{"query":"a","query":"b"}}}`, -32600, "null"},
		{"invalid UTF-8 in _meta", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"x\":\"\xff\"}}}", -32700, "null"},
		{"invalid UTF-8 in a name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"\xc3\":1}}}", -32700, "null"},
		{"invalid UTF-8 in arguments", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"praxec.query\",\"arguments\":{\"query\":\"caf\xe9\"}}}", -32700, "null"},
		{"unpaired surrogate in _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"x":"\ud800"}}}`, -32700, "null"},
		{"a string id of 100,000 bytes", `{"jsonrpc":"2.0","id":"` + long + `","method":"tools/list","params":{}}`, -32600, "null"},
		{"a string id of 257 bytes", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", mcpadapter.MaxIDBytes+1) + `","method":"tools/list","params":{}}`, -32600, "null"},
		{"a number id of 257 digits", `{"jsonrpc":"2.0","id":` + strings.Repeat("9", mcpadapter.MaxIDBytes+1) + `,"method":"tools/list","params":{}}`, -32600, "null"},
		{"nested 1001 deep", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"x":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}}}`, -32600, "null"},
		// As the SDK answered them before the edge read the envelope.
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":4,"method":"tools/list","params":{}}`, -32600, "4"},
		{"method a number", `{"jsonrpc":"2.0","id":5,"method":5,"params":{}}`, -32600, "5"},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"tools/list","params":{}}`, -32600, "null"},
		{"not an object", `5`, -32600, "null"},
		{"trailing data", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{}} {}`, -32700, "null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, version := range []string{"2025-11-25", "2026-07-28"} {
				a := postRPC(t, h, tok, version, []byte(c.body), false)
				if a.status != http.StatusBadRequest || a.code != c.code || a.id != c.id || a.msg == "" {
					t.Errorf("%s: %+v, want 400 %d id %s", version, a, c.code, c.id)
				}
				if a.size > 1024 {
					t.Errorf("%s: an answer of %d bytes to a refused request", version, a.size)
				}
			}
		})
	}

	// An id of exactly MaxIDBytes is served and echoed, a string's bytes
	// counted unescaped.
	for _, id := range []string{`"` + strings.Repeat("é", mcpadapter.MaxIDBytes/2) + `"`, `"` + strings.Repeat(`\u0069`, mcpadapter.MaxIDBytes) + `"`,
		strings.Repeat("9", mcpadapter.MaxIDBytes)} {
		a := postRPC(t, h, tok, "2025-11-25", []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":{}}`), false)
		if a.status != http.StatusOK {
			t.Errorf("id %.20s… (%d bytes of text): %+v, want 200", id, len(id), a)
		}
	}

	// A refused call ran nothing: its key is still free.
	cs := h.overHTTP(t, tok)
	key := "edge-envelope-key-00001"
	dup := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + contracts.ToolSubmitIntent +
		`","arguments":{"idempotencyKey":"` + key + `","intent":"a","intent":"b"}}}`
	if a := postRPC(t, h, tok, "2025-11-25", []byte(dup), false); a.status != http.StatusBadRequest || a.code != -32600 {
		t.Fatalf("a tools/call with a member twice: %+v", a)
	}
	success(t, contracts.ToolSubmitIntent, tryCall(t, cs, contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": key, "intent": "c"}))
}
