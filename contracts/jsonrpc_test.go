package contracts_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// idCases are ids that must survive a round trip byte for byte. String ids
// are written the way encoding/json writes them (it escapes <, > and &).
var idCases = []struct {
	raw  string
	kind string // "string", "number" or "null"
	text string // ID.String()
}{
	{`"abc"`, "string", "abc"},
	{`""`, "string", ""},
	{`"1"`, "string", "1"},
	{`"null"`, "string", "null"},
	{`"café \u003c\u003e"`, "string", "café <>"},
	{`0`, "number", "0"},
	{`1`, "number", "1"},
	{`-7`, "number", "-7"},
	{`-0`, "number", "-0"},
	{`12345678901234567890`, "number", "12345678901234567890"},
	{`-12345678901234567890123`, "number", "-12345678901234567890123"},
	{`1.5`, "number", "1.5"},
	{`1e3`, "number", "1e3"},
	{`1E+3`, "number", "1E+3"},
	{`2.50`, "number", "2.50"},
	{`null`, "null", "null"},
}

func idKind(id contracts.ID) string {
	switch {
	case id.IsString():
		return "string"
	case id.IsNumber():
		return "number"
	case id.IsNull():
		return "null"
	}
	return "?"
}

func TestIDRoundTrip(t *testing.T) {
	for _, tt := range idCases {
		t.Run(tt.raw, func(t *testing.T) {
			var id contracts.ID
			if err := json.Unmarshal([]byte(tt.raw), &id); err != nil {
				t.Fatal(err)
			}
			if idKind(id) != tt.kind || id.String() != tt.text {
				t.Errorf("decoded %s %q, want %s %q", idKind(id), id.String(), tt.kind, tt.text)
			}
			if b, _ := json.Marshal(id); string(b) != tt.raw {
				t.Errorf("marshal = %s, want %s", b, tt.raw)
			}

			// Through a Response, byte for byte.
			resp := `{"jsonrpc":"2.0","id":` + tt.raw + `,"result":{"ok":true}}`
			var r contracts.Response
			if err := json.Unmarshal([]byte(resp), &r); err != nil {
				t.Fatal(err)
			}
			if r.ID != id {
				t.Errorf("Response.ID = %v, want %v", r.ID, id)
			}
			if b, _ := json.Marshal(r); string(b) != resp {
				t.Errorf("Response round trip:\n got %s\nwant %s", b, resp)
			}

			// Through a Request, byte for byte; a null id is still a request.
			req := `{"jsonrpc":"2.0","id":` + tt.raw + `,"method":"tools/call","params":{"name":"praxec.query","arguments":{}}}`
			var q contracts.Request
			if err := json.Unmarshal([]byte(req), &q); err != nil {
				t.Fatal(err)
			}
			if q.IsNotification() || q.ID == nil || *q.ID != id {
				t.Fatalf("Request.ID = %v (notification %v), want %v", q.ID, q.IsNotification(), id)
			}
			if b, _ := json.Marshal(q); string(b) != req {
				t.Errorf("Request round trip:\n got %s\nwant %s", b, req)
			}
		})
	}
}

func TestIDConstructors(t *testing.T) {
	tests := []struct {
		id   contracts.ID
		json string
	}{
		{contracts.StringID("req-1"), `"req-1"`},
		{contracts.StringID(""), `""`},
		{contracts.NumberID(0), `0`},
		{contracts.NumberID(-42), `-42`},
		{contracts.NumberID(9223372036854775807), `9223372036854775807`},
		{contracts.ID{}, `null`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.id)
		if err != nil || string(b) != tt.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.id, b, err, tt.json)
		}
		var back contracts.ID
		if err := json.Unmarshal(b, &back); err != nil || back != tt.id {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, back, err, tt.id)
		}
	}
	// A string id written with escapes decodes to its text and is written
	// back canonically.
	var esc contracts.ID
	if err := json.Unmarshal([]byte(`"\u0041\/b"`), &esc); err != nil || esc != contracts.StringID("A/b") {
		t.Errorf(`"\u0041\/b" decoded to %#v, %v`, esc, err)
	}
	if contracts.StringID("1") == contracts.NumberID(1) {
		t.Error(`the string id "1" equals the number id 1`)
	}
}

func TestIDRejects(t *testing.T) {
	for _, raw := range []string{`{}`, `{"a":1}`, `[]`, `[1]`, `true`, `false`, `-`, `01x`, `"unterminated`} {
		var id contracts.ID
		if err := id.UnmarshalJSON([]byte(raw)); err == nil {
			t.Errorf("UnmarshalJSON(%s) accepted %v", raw, id)
		}
		var r contracts.Response
		if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":`+raw+`,"result":1}`), &r); err == nil {
			t.Errorf("a response with id %s decoded", raw)
		}
		var q contracts.Request
		if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":`+raw+`,"method":"m"}`), &q); err == nil {
			t.Errorf("a request with id %s decoded", raw)
		}
	}
}

func TestNotification(t *testing.T) {
	const raw = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	var q contracts.Request
	if err := json.Unmarshal([]byte(raw), &q); err != nil {
		t.Fatal(err)
	}
	if !q.IsNotification() {
		t.Error("a request without an id is a notification")
	}
	if b, _ := json.Marshal(q); string(b) != raw {
		t.Errorf("notification round trip: %s", b)
	}
	withNull := contracts.Request{JSONRPC: contracts.JSONRPCVersion, ID: &contracts.ID{}, Method: "m"}
	if withNull.IsNotification() {
		t.Error("a request with a null id is not a notification")
	}
	if b, _ := json.Marshal(withNull); string(b) != `{"jsonrpc":"2.0","id":null,"method":"m"}` {
		t.Errorf("null-id request = %s", b)
	}
}

func TestErrorResponse(t *testing.T) {
	const raw = `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params","data":{"pointer":"/runId"}}}`
	var r contracts.Response
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Code != contracts.RPCInvalidParams || r.Result != nil {
		t.Fatalf("decoded %+v", r)
	}
	if got := r.Error.Error(); got != "jsonrpc error -32602: invalid params" {
		t.Errorf("Error() = %q", got)
	}
	if b, _ := json.Marshal(r); string(b) != raw {
		t.Errorf("round trip %s", b)
	}
	codes := []int{contracts.RPCParseError, contracts.RPCInvalidRequest, contracts.RPCMethodNotFound, contracts.RPCInvalidParams, contracts.RPCInternalError}
	if want := []int{-32700, -32600, -32601, -32602, -32603}; !slices.Equal(codes, want) {
		t.Errorf("standard codes %v, want %v", codes, want)
	}
}

// reencode encodes v, decoded from the fuzz input from, and decodes the
// bytes again into a new T, failing t when either step does.
func reencode[T any](t *testing.T, from []byte, v T) ([]byte, T) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%q: decoded %+v does not encode: %v", from, v, err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%q: re-encoded %s does not decode: %v", from, b, err)
	}
	return b, back
}

// FuzzIDRoundTrip decodes arbitrary bytes as an id; whatever decodes must
// encode and decode again to the same id and the same bytes.
func FuzzIDRoundTrip(f *testing.F) {
	for _, c := range idCases {
		f.Add([]byte(c.raw))
	}
	for _, s := range []string{`{}`, `[]`, `true`, ` 7 `, `"\ud800"`, `"\u0000"`, "\"\xff\"", `1e999`, `-0.0e-0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var id contracts.ID
		if err := json.Unmarshal(data, &id); err != nil {
			return
		}
		b1, id2 := reencode(t, data, id)
		if id2 != id {
			t.Fatalf("round trip of %q changed the id: %#v -> %#v", data, id, id2)
		}
		b2, err := json.Marshal(id2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("round trip of %q changed the bytes: %s -> %s (%v)", data, b1, b2, err)
		}
		// Through a response as well.
		resp, r := reencode(t, data, contracts.Response{JSONRPC: contracts.JSONRPCVersion, ID: id, Result: json.RawMessage(`1`)})
		if r.ID != id {
			t.Fatalf("response %s: id %v, want %v", resp, r.ID, id)
		}
	})
}

// FuzzRequestDecode: any bytes are refused as a JSON-RPC request or decode
// into one whose encoding decodes back to the same request.
func FuzzRequestDecode(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"m","params":[]}`))
	f.Add([]byte(`{"jsonrpc":"1.0","id":null,"method":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r contracts.Request
		if json.Unmarshal(b, &r) != nil {
			return
		}
		_, back := reencode(t, b, r)
		if back.Method != r.Method || (r.ID == nil) != (back.ID == nil) || (r.ID != nil && back.ID.String() != r.ID.String()) {
			t.Fatalf("%q: round trip %+v != %+v", b, back, r)
		}
	})
}
