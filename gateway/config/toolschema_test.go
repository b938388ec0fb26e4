package config

import (
	"strings"
	"testing"
)

func TestCheckToolSchema(t *testing.T) {
	for _, c := range []struct {
		schema map[string]any
		want   string // "" accepts
	}{
		{map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}, ""},
		{map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}, ""},
		{map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}, ""},
		{map[string]any{"type": "array"}, "root must be an object schema"},
		{map[string]any{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}, "only JSON Schema 2020-12"},
		{map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": map[string]any{"l": map[string]any{"items": []any{map[string]any{}}}}}, "meaning differs"},
		{map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "https://evil.example/s.json"}}}, "refers outside"},
		{map[string]any{"type": "object", "$recursiveRef": "#"}, "$recursiveRef is not accepted"},
		{map[string]any{"type": "object", "$id": "https://x.example/s"}, "$id is not accepted"},
		{map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": 5}}}, "does not compile"},
	} {
		got, err := CheckToolSchema(c.schema)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v refused: %v", c.schema, err)
		case c.want == "" && got["$schema"] != nil && got["$schema"] != dialect2020:
			t.Errorf("%v: draft-07 $schema kept", c.schema)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.schema, err, c.want)
		}
	}
}

func TestInterpolate(t *testing.T) {
	got, missing := Interpolate("Bearer ${A} ${B}${A}", func(k string) string { return map[string]string{"A": "x"}[k] })
	if got != "Bearer x x" || len(missing) != 1 || missing[0] != "B" {
		t.Errorf("%q %v", got, missing)
	}
	if ShellQuote("plain") != "plain" || ShellQuote("it's") != `'it'\''s'` || ShellQuote("") != "''" {
		t.Error("ShellQuote")
	}
}
