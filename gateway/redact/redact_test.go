package redact

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestAttributes: sensitive members are redacted by name at any depth,
// inside lists too (a list of objects once passed unredacted), and the
// input is left as it was.
func TestAttributes(t *testing.T) {
	in := map[string]any{
		"apiKey":   "k1",
		"host":     "api.example.com",
		"upstream": map[string]any{"password": "p1", "user": "u"},
		"headers":  []any{map[string]any{"name": "x", "Authorization": "Bearer t1"}, "plain", 3.0},
		"attempts": []map[string]any{{"accessToken": "t2", "ok": false}},
		"nested":   []any{[]any{map[string]any{"client_secret": "s1"}}},
		"count":    2,
	}
	before, _ := json.Marshal(in)
	got := Attributes(in)
	want := map[string]any{
		"apiKey":   Redacted,
		"host":     "api.example.com",
		"upstream": map[string]any{"password": Redacted, "user": "u"},
		"headers":  []any{map[string]any{"name": "x", "Authorization": Redacted}, "plain", 3.0},
		"attempts": []any{map[string]any{"accessToken": Redacted, "ok": false}},
		"nested":   []any{[]any{map[string]any{"client_secret": Redacted}}},
		"count":    2,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Attributes:\n got %#v\nwant %#v", got, want)
	}
	after, _ := json.Marshal(in)
	if string(before) != string(after) {
		t.Errorf("the input changed:\n%s\n%s", before, after)
	}
	if Attributes(nil) != nil {
		t.Error("Attributes(nil) is not nil")
	}
}

func TestSensitive(t *testing.T) {
	for name, want := range map[string]bool{
		"token": true, "X-Api-Key": true, "apiKey": true, "API_KEY": true, "idempotencyKey": true, "privateKey": true,
		"Set-Cookie": true, "title": false, "head": false, "url": false, "credentials": true,
	} {
		if got := Sensitive(name); got != want {
			t.Errorf("Sensitive(%q) = %v, want %v", name, got, want)
		}
	}
}
