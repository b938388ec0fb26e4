package strictjson_test

import (
	"encoding/json"
	"errors"
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

// FuzzDecode: never panics; whatever it accepts, encoding/json accepts too
// and re-encodes to a value it decodes the same way.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `{"a":1,"a":2}`, `[[[[]]]]`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := strictjson.Decode(data, 8)
		if err != nil {
			var ce *contracts.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is not a contracts error: %v", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		if _, err := strictjson.Decode(b, 8); err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
	})
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
