package mcpadapter

import (
	"encoding/json"
	"testing"
)

// FuzzRequestID: the edge reads a refused request's id from an untrusted
// body. It never panics; an id it finds is a string or number member "id"
// of a JSON object, and reads back the same from its own encoding.
func FuzzRequestID(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":7,"method":"x"}`, `{"id":"a"}`, `{"id":null}`, `{"id":{}}`,
		`[{"id":1}]`, `{"id":1e400}`, `{"id":-0.5}`, `{"id":"\u0000"}`, `{`, ``, `{"id":1,"id":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id := requestID(body)
		if id.IsNull() {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("id %s from a body that is not an object: %q", id, body)
		}
		b, err := json.Marshal(map[string]any{"id": id})
		if err != nil {
			t.Fatal(err)
		}
		if again := requestID(b); again != id {
			t.Fatalf("id %s reads back as %s", id, again)
		}
	})
}
