package jsonvalue

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestClone(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"string", "s", "s"},
		{"number", 1.5, 1.5},
		{"bool", true, true},
		{"object", map[string]any{"a": 1.0, "b": map[string]any{"c": []any{"d"}}}, map[string]any{"a": 1.0, "b": map[string]any{"c": []any{"d"}}}},
		{"list", []any{map[string]any{"a": "b"}, []any{1.0}}, []any{map[string]any{"a": "b"}, []any{1.0}}},
		{"nil object below", map[string]any{"a": map[string]any(nil)}, map[string]any{"a": map[string]any{}}},
		{"nil list below", map[string]any{"a": []any(nil)}, map[string]any{"a": []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clone(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Clone(%#v) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

// TestCloneIsDeep changes the copy at every depth and checks that the
// original still encodes as before.
func TestCloneIsDeep(t *testing.T) {
	var orig map[string]any
	if err := json.Unmarshal([]byte(`{"a":{"b":[{"c":1},[2]]},"d":"e"}`), &orig); err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(orig)
	c := CloneMap(orig)
	c["d"] = "x"
	a := c["a"].(map[string]any)
	a["new"] = true
	b := a["b"].([]any)
	b[0].(map[string]any)["c"] = 9.0
	b[1].([]any)[0] = 9.0
	after, _ := json.Marshal(orig)
	if string(before) != string(after) {
		t.Fatalf("original changed through the copy: %s, was %s", after, before)
	}
}

func TestCloneMapNil(t *testing.T) {
	if got := CloneMap(nil); got != nil {
		t.Fatalf("CloneMap(nil) = %#v, want nil", got)
	}
	if got := CloneMap(map[string]any{}); got == nil || len(got) != 0 {
		t.Fatalf("CloneMap({}) = %#v, want an empty map", got)
	}
}
