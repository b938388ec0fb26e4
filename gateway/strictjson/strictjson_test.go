package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/strictjson"
)

func TestDecode(t *testing.T) {
	deep := strings.Repeat("[", 33) + strings.Repeat("]", 33)
	ok32 := strings.Repeat("[", 32) + strings.Repeat("]", 32)
	tests := []struct {
		name string
		in   string
		code contracts.Code // "" for success
	}{
		{"object", `{"a":1,"b":[true,null,"x"],"c":{"d":1.5e3}}`, ""},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, ""},
		{"escaped backslash before u", `{"a":"\\ud800"}`, ""},
		{"depth 32", ok32, ""},
		{"depth 33", deep, contracts.CodeRequestLimits},
		{"truncated", `{"a":`, contracts.CodeMalformedJSON},
		{"trailing garbage", `{"a":1} x`, contracts.CodeMalformedJSON},
		{"two values", `{"a":1}{"b":2}`, contracts.CodeMalformedJSON},
		{"duplicate", `{"goal":"a","goal":"b"}`, contracts.CodeMalformedJSON},
		{"nested duplicate", `{"a":{"x":1,"x":1}}`, contracts.CodeMalformedJSON},
		{"invalid utf8", "{\"a\":\"\xff\"}", contracts.CodeMalformedJSON},
		{"lone high surrogate", `{"a":"\ud800"}`, contracts.CodeMalformedJSON},
		{"lone low surrogate", `{"a":"\udc00x"}`, contracts.CodeMalformedJSON},
		{"high then non-low", `{"a":"\ud800\u0041"}`, contracts.CodeMalformedJSON},
		{"empty", ``, contracts.CodeMalformedJSON},
		{"empty object", `{}`, ""},
		{"empty object in whitespace", " \t\r\n{ \n\t}\r\n ", ""},
		{"empty object then brace", `{}}`, contracts.CodeMalformedJSON},
		{"empty object then value", `{} 1`, contracts.CodeMalformedJSON},
		{"empty object unclosed", ` { `, contracts.CodeMalformedJSON},
		{"empty object, foreign space", "{\u00a0}", contracts.CodeMalformedJSON},
		{"empty object, vertical tab", "{\v}", contracts.CodeMalformedJSON},
		{"single quote", `{'a':1}`, contracts.CodeMalformedJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := strictjson.Decode([]byte(tt.in), 32)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			var ce *contracts.Error
			if !errors.As(err, &ce) || ce.Code != tt.code {
				t.Fatalf("Decode = %v, want code %s", err, tt.code)
			}
		})
	}
}

// TestDecodeEmptyObject: the empty object decodes to an empty map of its
// own, which the caller may fill, at the smallest limits.
func TestDecodeEmptyObject(t *testing.T) {
	a, err := strictjson.DecodeObjectWith([]byte(` { } `), strictjson.Limits{MaxDepth: 1, MaxElements: 1})
	if err != nil || a == nil || len(a) != 0 {
		t.Fatalf("DecodeObjectWith({ }) = %#v, %v; want an empty map", a, err)
	}
	a["x"] = 1
	b, err := strictjson.DecodeObject([]byte(`{}`), 0)
	if err != nil || b == nil || len(b) != 0 {
		t.Fatalf("a second DecodeObject({}) = %#v, %v; want an empty map of its own", b, err)
	}
}

func TestDecodeKeepsNumbers(t *testing.T) {
	v, err := strictjson.DecodeObject([]byte(`{"n":12345678901234567890,"f":0.1}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if v["n"] != json.Number("12345678901234567890") || v["f"] != json.Number("0.1") {
		t.Errorf("numbers = %#v", v)
	}
}

func TestDecodeObjectRefusesOtherValues(t *testing.T) {
	for _, in := range []string{`[]`, `"x"`, `1`, `null`} {
		if _, err := strictjson.DecodeObject([]byte(in), 0); err == nil {
			t.Errorf("DecodeObject(%s) accepted a non-object", in)
		}
	}
}

// FuzzDecode: never panics, and judges every input as before its builder
// (Check, then encoding/json's token stream counting the values: the same
// error, code, message and hint, under any element bound); whatever it
// accepts, encoding/json accepts too, and Decode's value is the one
// encoding/json decodes (UseNumber, into an any). String reads a quoted
// text with escapes as json.Unmarshal does, whether Check accepts it or
// not.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `{"a":1,"a":2}`, `[[[[]]]]`, "\"\xff\"",
		`"\ud800x\u00e9\"\\"`, "\"\\n\xed\xa0\x80\"", `{"k":"v\u0000","n":-0.0e+1,"t":[true,false,null]}`} {
		f.Add([]byte(s))
	}
	for _, c := range checkCases {
		f.Add([]byte(c.in))
	}
	for _, b := range benchBodies {
		f.Add(b.body)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const depth = 8
		if len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"' && bytes.IndexByte(data, '\\') >= 0 {
			var want string
			werr := json.Unmarshal(data, &want)
			if got, ok := strictjson.String(data); ok != (werr == nil) || ok && got != want {
				t.Fatalf("String(%q) = %q, %v; json.Unmarshal: %q, %v", data, got, ok, want, werr)
			}
		}
		v, err := strictjson.Decode(data, depth)
		if _, want := decodeBefore(data, strictjson.Limits{MaxDepth: depth}); !reflect.DeepEqual(err, want) {
			t.Fatalf("%q: Decode %v, before %v", data, err, want)
		}
		if err != nil {
			var ce *contracts.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is not a contracts error: %v", err)
			}
			for _, max := range []int{1, 2, 3} {
				l := strictjson.Limits{MaxDepth: depth, MaxElements: max}
				_, err := strictjson.DecodeWith(data, l)
				if _, want := decodeBefore(data, l); !reflect.DeepEqual(err, want) {
					t.Fatalf("%q under %d values: Decode %v, before %v", data, max, err, want)
				}
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil || dec.More() {
			t.Fatalf("accepted what encoding/json refuses: %q (%v)", data, err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("%q: Decode = %#v, encoding/json %#v", data, v, want)
		}
		// The element bound: the value's own count passes, one fewer is
		// refused, as before.
		n := countValues(want)
		for _, max := range []int{1, n - 1, n} {
			if max < 1 {
				continue
			}
			l := strictjson.Limits{MaxDepth: depth, MaxElements: max}
			got, err := strictjson.DecodeWith(data, l)
			if _, wantErr := decodeBefore(data, l); !reflect.DeepEqual(err, wantErr) {
				t.Fatalf("%q under %d values: Decode %v, before %v", data, max, err, wantErr)
			}
			if (err == nil) != (max >= n) || err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q (%d values) under %d: %#v, %v", data, n, max, got, err)
			}
		}
	})
}

// countValues is how many values v holds, itself included, as
// MaxElements counts them.
func countValues(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			n += countValues(x)
		}
	case []any:
		for _, x := range v {
			n += countValues(x)
		}
	}
	return n
}

// decodeBefore is DecodeWith as it was before its builder: Check, then
// encoding/json's token stream, counting values against MaxElements.
func decodeBefore(data []byte, l strictjson.Limits) (any, error) {
	if l.MaxDepth <= 0 {
		l.MaxDepth = strictjson.DefaultMaxDepth
	}
	if l.MaxElements <= 0 {
		l.MaxElements = strictjson.DefaultMaxElements
	}
	if err := strictjson.Check(data, l.MaxDepth); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	values := 0
	var value func() (any, error)
	value = func() (any, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("before: %w", err)
		}
		if values++; values > l.MaxElements {
			return nil, &contracts.Error{Code: contracts.CodeRequestLimits,
				Message: fmt.Sprintf("the JSON value holds more than %d values (members, items and scalars, through every level)", l.MaxElements),
				Hint:    "Send fewer items per call; the gateway's server.limits.maxElements sets the bound."}
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return tok, nil
		}
		obj, arr := map[string]any{}, []any{}
		for dec.More() {
			var k string
			if d == '{' {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("before: %w", err)
				}
				k = kt.(string)
			}
			v, err := value()
			if err != nil {
				return nil, err
			}
			if d == '{' {
				obj[k] = v
			} else {
				arr = append(arr, v)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("before: %w", err)
		}
		if d == '{' {
			return obj, nil
		}
		return arr, nil
	}
	return value()
}

// TestDecodeElements: every value counts towards MaxElements, through
// every level, the root included; one more than the bound is
// request-limits, the bound itself is not.
func TestDecodeElements(t *testing.T) {
	for _, c := range []struct {
		body string
		max  int
		ok   bool
	}{
		{`{"a":[1,2,{"b":null}]}`, 6, true},
		{`{"a":[1,2,{"b":null}]}`, 5, false},
		{`[[],[],[]]`, 4, true},
		{`[[],[],[]]`, 3, false},
		{`7`, 1, true},
	} {
		_, err := strictjson.DecodeWith([]byte(c.body), strictjson.Limits{MaxElements: c.max})
		if ce := contracts.AsError(err); c.ok != (err == nil) || (!c.ok && ce.Code != contracts.CodeRequestLimits) {
			t.Errorf("%s under %d: %v", c.body, c.max, err)
		}
	}
	many := "[" + strings.Repeat("0,", strictjson.DefaultMaxElements) + "0]"
	if _, err := strictjson.Decode([]byte(many), 0); contracts.AsError(err) == nil || contracts.AsError(err).Code != contracts.CodeRequestLimits {
		t.Errorf("%d items under the default bound: %v", strictjson.DefaultMaxElements+1, err)
	}
}
