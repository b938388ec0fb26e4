package testkit

import (
	"encoding/json"
	"strings"
	"testing"
)

// DecodeObject decodes the first JSON value of s as the gateway decodes a
// request body: into a map, with numbers as json.Number. A JSON null gives
// a nil map and no error.
func DecodeObject(s string) (map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// MustDecodeObject is DecodeObject that fails t, naming s and the error,
// when s does not decode.
func MustDecodeObject(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := DecodeObject(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}
