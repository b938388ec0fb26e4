package plainjson

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// values are values Append encodes, and some it refuses.
func values() []any {
	cyclic := map[string]any{}
	cyclic["m"] = cyclic
	return []any{
		nil, true, false, "", "tab\t\b\f\x01\x7f<>&\u2028\u2029\xffé\"\\", 0.0, math.Copysign(0, -1),
		[]any{1e-7, 1e21, 1e20, 123.456, 0.000001, -1.5e-9, 1e300, 42, int64(-7), 5e-324},
		map[string]any{"b": []any{true, false, nil}, "e": map[string]any{}, "a": []any{}, "nm": map[string]any(nil), "na": []any(nil),
			"n": json.Number("12.50"), "r": json.RawMessage(` { "x" : "<" } `), "rn": json.RawMessage(nil), "z": struct{ A string }{"<"}},
		map[string]any{"attempts": []struct{ N int }{{1}}, "capability": "up.echo", "ok": true, "kind": "mcp", "connection": "up"},
		[]contracts.Link{{Rel: "start", Method: "praxec.command", Args: map[string]any{"input": map[string]any{"capability": "up.echo"}},
			InputSchemaSnake: json.RawMessage(`{"type":"object"}`)}},
		math.NaN(), math.Inf(1), map[string]any{"f": func() {}}, json.RawMessage(`{"a":`), cyclic,
	}
}

// TestAppend holds Append to json.Marshal's bytes, and to failing where
// it fails.
func TestAppend(t *testing.T) {
	for _, v := range values() {
		checkAppend(t, v)
	}
}

func checkAppend(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	var b bytes.Buffer
	ok := Append(&b, v)
	if ok != (werr == nil) || ok && !bytes.Equal(b.Bytes(), want) {
		t.Errorf("Append(%#v) = %s %v, json.Marshal %s %v", v, b.Bytes(), ok, want, werr)
	}
	got, err := Marshal(v)
	if (err == nil) != (werr == nil) || err == nil && !bytes.Equal(got, want) {
		t.Errorf("Marshal(%#v) = %s %v, json.Marshal %s %v", v, got, err, want, werr)
	}
}

// FuzzAppend: for any JSON document, Append encodes its decoded value (and
// the value as a member and an item) as json.Marshal does.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"<x>",null,true,{"b":{}}]}`, `"\u2028\ud83d\ude00"`, `[1e-7,1e21,-0,12345678901234567890]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		checkAppend(t, v)
		checkAppend(t, map[string]any{"v": v, "r": json.RawMessage(raw)})
		checkAppend(t, []any{v})
	})
}

// TestLink holds Append to json.Marshal's bytes for a link with
// every field empty, and with every field set (so that a field added to
// contracts.Link and not to appendLink fails here).
func TestLink(t *testing.T) {
	var full contracts.Link
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString("x <&> " + v.Type().Field(i).Name)
		case json.RawMessage:
			f.Set(reflect.ValueOf(json.RawMessage(` { "a" : "<" } `)))
		case map[string]any:
			f.Set(reflect.ValueOf(map[string]any{"k": []any{1.5, "<", nil}}))
		default:
			t.Fatalf("contracts.Link.%s is of a type this test does not fill: %s", v.Type().Field(i).Name, f.Type())
		}
	}
	for _, links := range [][]contracts.Link{{{}}, {full}, {{Rel: "start", Method: "m"}, full}, {}, nil} {
		want, err := json.Marshal(links)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if !Append(&b, links) || !bytes.Equal(b.Bytes(), want) {
			t.Errorf("Append(%+v) = %s, want %s", links, b.Bytes(), want)
		}
	}
	bad := []contracts.Link{{Description: json.RawMessage(`{"a":`)}}
	if Append(new(bytes.Buffer), bad) {
		t.Error("Append encoded a link whose description is not JSON")
	}
}
