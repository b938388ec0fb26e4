package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/strictjson"
)

// checkCases are inputs Check and Decode must judge alike, with the code
// both answer ("" for success).
var checkCases = []struct {
	name string
	in   string
	code contracts.Code
}{
	{"object", `{"a":1,"b":[true,null,"x"],"c":{"d":-1.5e3,"e":0,"f":1E+2,"g":2e-1}}`, ""},
	{"scalars at the root", ` "x" `, ""},
	{"number at the root", `-0.5`, ""},
	{"surrogate pair", `{"a":"\ud83d\ude00"}`, ""},
	{"every escape", `["\"\\\/\b\f\n\r\t\u00e9"]`, ""},
	{"escaped backslash before u", `{"a":"\\ud800"}`, ""},
	{"same name in two objects", `{"a":{"x":1},"b":{"x":1},"x":[{"x":1},{"x":2}]}`, ""},
	{"names differing in case", `{"id":1,"ID":2,"Id":3}`, ""},
	{"depth 32", strings.Repeat("[", 32) + strings.Repeat("]", 32), ""},
	{"depth 33", strings.Repeat("[", 33) + strings.Repeat("]", 33), contracts.CodeRequestLimits},
	{"deep objects", strings.Repeat(`{"a":`, 33) + "1" + strings.Repeat("}", 33), contracts.CodeRequestLimits},
	{"truncated", `{"a":`, contracts.CodeMalformedJSON},
	{"truncated string", `{"a":"x`, contracts.CodeMalformedJSON},
	{"truncated escape", `"\`, contracts.CodeMalformedJSON},
	{"truncated unicode escape", `"\u00`, contracts.CodeMalformedJSON},
	{"trailing garbage", `{"a":1} x`, contracts.CodeMalformedJSON},
	{"two values", `{"a":1}{"b":2}`, contracts.CodeMalformedJSON},
	{"trailing comma in an object", `{"a":1,}`, contracts.CodeMalformedJSON},
	{"trailing comma in an array", `[1,]`, contracts.CodeMalformedJSON},
	{"missing colon", `{"a" 1}`, contracts.CodeMalformedJSON},
	{"missing comma", `[1 2]`, contracts.CodeMalformedJSON},
	{"mismatched brackets", `[1}`, contracts.CodeMalformedJSON},
	{"non-string name", `{1:2}`, contracts.CodeMalformedJSON},
	{"leading zero", `01`, contracts.CodeMalformedJSON},
	{"bare minus", `-`, contracts.CodeMalformedJSON},
	{"fraction without digits", `1.`, contracts.CodeMalformedJSON},
	{"exponent without digits", `1e+`, contracts.CodeMalformedJSON},
	{"plus sign", `+1`, contracts.CodeMalformedJSON},
	{"short literal", `nul`, contracts.CodeMalformedJSON},
	{"long literal", `truex`, contracts.CodeMalformedJSON},
	{"capital literal", `True`, contracts.CodeMalformedJSON},
	{"control character in a string", "\"a\tb\"", contracts.CodeMalformedJSON},
	{"invalid escape", `"\x"`, contracts.CodeMalformedJSON},
	{"invalid unicode escape", `"\u00zz"`, contracts.CodeMalformedJSON},
	{"duplicate", `{"goal":"a","goal":"b"}`, contracts.CodeMalformedJSON},
	{"nested duplicate", `{"a":{"x":1,"x":1}}`, contracts.CodeMalformedJSON},
	{"duplicate through an escape", `{"a":1,"\u0061":2}`, contracts.CodeMalformedJSON},
	{"duplicate in an array's object", `[{"x":1},{"x":1,"y":2,"x":3}]`, contracts.CodeMalformedJSON},
	{"invalid utf8", "{\"a\":\"\xff\"}", contracts.CodeMalformedJSON},
	{"invalid utf8 in a name", "{\"\xc3\":1}", contracts.CodeMalformedJSON},
	{"lone high surrogate", `{"a":"\ud800"}`, contracts.CodeMalformedJSON},
	{"lone low surrogate", `{"a":"\udc00x"}`, contracts.CodeMalformedJSON},
	{"high then non-low", `{"a":"\ud800\u0041"}`, contracts.CodeMalformedJSON},
	{"lone surrogate in a name", `{"\ud800":1}`, contracts.CodeMalformedJSON},
	{"empty", ``, contracts.CodeMalformedJSON},
	{"only space", " \n", contracts.CodeMalformedJSON},
	{"empty object", `{}`, ""},
	{"empty array", ` [ ] `, ""},
	{"empty object then brace", `{}}`, contracts.CodeMalformedJSON},
	{"empty object, foreign space", "{\u00a0}", contracts.CodeMalformedJSON},
	{"empty object, vertical tab", "{\v}", contracts.CodeMalformedJSON},
	{"single quote", `{'a':1}`, contracts.CodeMalformedJSON},
}

// TestCheck: Check accepts and refuses what Decode does, with the same
// codes; a duplicate name is told apart by its cause.
func TestCheck(t *testing.T) {
	for _, tt := range checkCases {
		t.Run(tt.name, func(t *testing.T) {
			err := strictjson.Check([]byte(tt.in), 32)
			_, derr := strictjson.DecodeWith([]byte(tt.in), strictjson.Limits{MaxDepth: 32, MaxElements: 1 << 30})
			if got, want := codeOf(t, err), codeOf(t, derr); got != tt.code || want != tt.code {
				t.Fatalf("Check: %v; Decode: %v; want code %q", err, derr, tt.code)
			}
			if dup := strings.Contains(tt.name, "duplicate"); errors.Is(err, strictjson.ErrDuplicateName) != dup {
				t.Errorf("Check = %v: ErrDuplicateName %v, want %v", err, !dup, dup)
			}
		})
	}
}

// TestCheckManyNames: an object of many members finds a duplicate among
// them (the map path) and accepts as many distinct names.
func TestCheckManyNames(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 1000 {
		fmt.Fprintf(&b, `"k%d":{"k%d":%d},`, i, i, i)
	}
	distinct := b.String() + `"last":0}`
	if err := strictjson.Check([]byte(distinct), 0); err != nil {
		t.Fatalf("1001 distinct names: %v", err)
	}
	for _, dup := range []string{`"k0"`, `"k999"`, `"\u006b500"`} {
		err := strictjson.Check([]byte(b.String()+dup+`:0}`), 0)
		if !errors.Is(err, strictjson.ErrDuplicateName) {
			t.Errorf("%s again after 1000 names: %v", dup, err)
		}
	}
}

// TestCheckDepthBound: the bound is the caller's; nesting within it costs
// no recursion (a deep document within a large bound is checked).
func TestCheckDepthBound(t *testing.T) {
	deep := []byte(strings.Repeat(`[{"a":`, 5000) + "1" + strings.Repeat("}]", 5000))
	if err := strictjson.Check(deep, 10000); err != nil {
		t.Fatalf("depth 10000 under a bound of 10000: %v", err)
	}
	if err := strictjson.Check(deep, 9999); codeOf(t, err) != contracts.CodeRequestLimits {
		t.Fatalf("depth 10000 under a bound of 9999: %v", err)
	}
}

func codeOf(t *testing.T, err error) contracts.Code {
	t.Helper()
	if err == nil {
		return ""
	}
	var ce *contracts.Error
	if !errors.As(err, &ce) {
		t.Fatalf("not a contracts error: %v", err)
	}
	return ce.Code
}

// TestMembers reads the outer members of checked objects as their text.
func TestMembers(t *testing.T) {
	in := ` { "jsonrpc" : "2.0" , "id":-1.5e3,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,"]}"]}},` +
		`"\u006eull":null,"t":true,"f":false,"s":"a\"b\\","e":{},"a":[] } `
	want := map[string]string{"jsonrpc": `"2.0"`, "id": `-1.5e3`, "method": `"tools/call"`,
		"params": `{"name":"x","arguments":{"a":[1,"]}"]}}`, "null": "null", "t": "true", "f": "false",
		"s": `"a\"b\\"`, "e": "{}", "a": "[]"}
	if err := strictjson.Check([]byte(in), 0); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var order []string
	for name, raw := range strictjson.Members([]byte(in)) {
		got[string(name)] = string(raw)
		order = append(order, string(name))
	}
	if !maps.Equal(got, want) {
		t.Errorf("Members = %v, want %v", got, want)
	}
	if want := []string{"jsonrpc", "id", "method", "params", "null", "t", "f", "s", "e", "a"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if s, ok := strictjson.String([]byte(got["s"])); !ok || s != `a"b\` {
		t.Errorf("String(%s) = %q, %v", got["s"], s, ok)
	}
	for _, notObject := range []string{`[]`, `"x"`, `1`, ``} {
		for range strictjson.Members([]byte(notObject)) {
			t.Errorf("Members(%s) yields", notObject)
		}
	}
	var elems []string
	for raw := range strictjson.Elements([]byte(` [ 1 , {"a":[2]} , "x,]" , [] ] `)) {
		elems = append(elems, string(raw))
	}
	if want := []string{"1", `{"a":[2]}`, `"x,]"`, "[]"}; !slices.Equal(elems, want) {
		t.Errorf("Elements = %q, want %q", elems, want)
	}
}

// FuzzCheck: Check judges every input as Decode does (same verdict, same
// code), and Members and Elements read back the members and elements
// Decode built, value for value.
func FuzzCheck(f *testing.F) {
	for _, c := range checkCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const depth = 8
		err := strictjson.Check(data, depth)
		v, derr := strictjson.DecodeWith(data, strictjson.Limits{MaxDepth: depth, MaxElements: 1 << 30})
		if got, want := codeOf(t, err), codeOf(t, derr); got != want {
			t.Fatalf("%q: Check %v, Decode %v", data, err, derr)
		}
		if derr == nil != (err == nil) {
			t.Fatalf("%q: Check %v, Decode %v", data, err, derr)
		}
		if err != nil {
			// Members and Elements never panic on text Check refused.
			for range strictjson.Members(data) {
			}
			for range strictjson.Elements(data) {
			}
			return
		}
		switch v := v.(type) {
		case map[string]any:
			n := 0
			for name, raw := range strictjson.Members(data) {
				n++
				member, err := strictjson.Decode(raw, depth)
				if err != nil || !jsonSame(t, member, v[string(name)]) {
					t.Fatalf("%q: member %q reads %s (%v), want %v", data, name, raw, err, v[string(name)])
				}
			}
			if n != len(v) {
				t.Fatalf("%q: Members yields %d, Decode built %d", data, n, len(v))
			}
		case []any:
			n := 0
			for raw := range strictjson.Elements(data) {
				if n >= len(v) {
					t.Fatalf("%q: Elements yields more than %d", data, len(v))
				}
				elem, err := strictjson.Decode(raw, depth)
				if err != nil || !jsonSame(t, elem, v[n]) {
					t.Fatalf("%q: element %d reads %s (%v), want %v", data, n, raw, err, v[n])
				}
				n++
			}
			if n != len(v) {
				t.Fatalf("%q: Elements yields %d, Decode built %d", data, n, len(v))
			}
		case string:
			if s, ok := strictjson.String(bytes.Trim(data, " \t\r\n")); !ok || s != v {
				t.Fatalf("%q: String = %q %v, want %q", data, s, ok, v)
			}
		}
	})
}

func jsonSame(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}
