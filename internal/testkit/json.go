package testkit

import (
	"bytes"
	"encoding/json"
	"testing"
)

// DecodeJSON decodes the first JSON value of b into v as the gateway
// decodes a request body: numbers as json.Number.
func DecodeJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// DecodeObject decodes the first JSON value of s as DecodeJSON does, into a
// map. A JSON null gives a nil map and no error.
func DecodeObject(s string) (map[string]any, error) {
	var m map[string]any
	if err := DecodeJSON([]byte(s), &m); err != nil {
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
