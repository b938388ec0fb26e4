package testkit

import (
	"encoding/json"
	"testing"
)

// TestDecodeObject: numbers stay json.Number as spelt, null gives a nil
// map, and what is not a JSON object is an error.
func TestDecodeObject(t *testing.T) {
	m, err := DecodeObject(`{"n": 1.50, "big": 9007199254740993}`)
	if err != nil || m["n"] != json.Number("1.50") || m["big"] != json.Number("9007199254740993") {
		t.Fatalf("DecodeObject = %#v, %v", m, err)
	}
	if m, err := DecodeObject(`null`); err != nil || m != nil {
		t.Fatalf("DecodeObject(null) = %#v, %v", m, err)
	}
	for _, s := range []string{``, `[1]`, `{"a":`, `"x"`} {
		if m, err := DecodeObject(s); err == nil {
			t.Errorf("DecodeObject(%q) = %#v, want an error", s, m)
		}
	}
}
