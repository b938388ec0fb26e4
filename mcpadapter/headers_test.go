package mcpadapter

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParamBindings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema string
		want   []string // path=header, in walk order
		err    string   // a substring of the error
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, nil, ""},
		{"top level", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`,
			[]string{"n=Mcp-Param-N", "region=Mcp-Param-Region"}, ""},
		{"nested through properties", `{"type":"object","properties":{"o":{"type":"object","properties":{"flag":{"type":"boolean","x-mcp-header":"Flag"}}}}}`,
			[]string{"o.flag=Mcp-Param-Flag"}, ""},
		// go-sdk v1.8.0 reads no binding of this schema (its decoder wants
		// one type per property); the edge reads them.
		{"nullable sibling", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"note":{"type":["string","null"]}}}`,
			[]string{"region=Mcp-Param-Region"}, ""},
		{"on the root", `{"type":"object","x-mcp-header":"Root"}`, nil, "only a property"},
		{"under items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"X"}}}}}}`, nil, "/properties/l/items/properties/x"},
		{"under oneOf", `{"type":"object","oneOf":[{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}]}`, nil, "/oneOf/0/properties/x"},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}}}`, nil, "/$defs/d"},
		{"under additionalProperties", `{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"A"}}`, nil, "only a property"},
		{"number type", `{"type":"object","properties":{"x":{"type":"number","x-mcp-header":"X"}}}`, nil, "must be string, integer or boolean"},
		{"type array", `{"type":"object","properties":{"x":{"type":["string","null"],"x-mcp-header":"X"}}}`, nil, "must be string, integer or boolean"},
		{"no type", `{"type":"object","properties":{"x":{"enum":["a"],"x-mcp-header":"X"}}}`, nil, "must be string, integer or boolean"},
		{"empty", `{"type":"object","properties":{"x":{"type":"string","x-mcp-header":""}}}`, nil, "non-empty string"},
		{"not a string", `{"type":"object","properties":{"x":{"type":"string","x-mcp-header":7}}}`, nil, "non-empty string"},
		{"not a token", `{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"Re gion"}}}`, nil, "not an HTTP token"},
		{"CRLF", `{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"A\r\nB"}}}`, nil, "not an HTTP token"},
		{"duplicate by case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}`, nil, "repeats"},
		// Data that merely looks like an annotation is not one.
		{"in a default", `{"type":"object","properties":{"o":{"type":"object","default":{"x-mcp-header":"X"}}}}`, nil, ""},
		{"boolean subschema", `{"type":"object","properties":{"a":true,"b":{"type":"string","x-mcp-header":"B"}}}`, []string{"b=Mcp-Param-B"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := paramBindings(json.RawMessage(tc.schema))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var flat []string
			for _, b := range got {
				flat = append(flat, strings.Join(b.path, ".")+"="+b.header)
			}
			if !slices.Equal(flat, tc.want) {
				t.Errorf("bindings %v, want %v", flat, tc.want)
			}
		})
	}
}

func TestDecodeHeaderValue(t *testing.T) {
	b64 := func(s string) string {
		return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
	}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"us-west1", "us-west1", true},
		{"", "", true},
		{"a b\tc", "a b\tc", true},
		{b64("Hello, 世界"), "Hello, 世界", true},
		{b64(" padded "), " padded ", true},
		{b64("line1\nline2"), "line1\nline2", true},
		{b64("=?base64?literal?="), "=?base64?literal?=", true},
		{"=?base64?SGVsbG8?=", "", false},                // unpadded
		{"=?base64?not base64!?=", "", false},            // not Base64
		{b64("\xff\xfe"), "", false},                     // not UTF-8
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true}, // no suffix: plain text
		{"=?BASE64?SGk=?=", "=?BASE64?SGk=?=", true},     // markers are case-sensitive
		{"Hello, 世界", "", false},                         // raw UTF-8
		{"a\x00b", "", false},
		{"a\nb", "", false},
		{"a\x7fb", "", false},
	} {
		got, ok := decodeHeaderValue(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestHeaderMatches(t *testing.T) {
	for _, tc := range []struct {
		header, body string
		want         bool
	}{
		{"us-west1", `"us-west1"`, true},
		{"us-west1", `"us-east1"`, false},
		{"", `""`, true},
		{"true", `true`, true},
		{"True", `true`, false},
		{"false", `true`, false},
		{"42", `42`, true},
		{"42.0", `42`, true},
		{"42", `42.0`, true},
		{"4.2e1", `42`, true},
		{"-7", `-7`, true},
		{"42", `"42"`, true},
		{"43", `42`, false},
		{"42.5", `42.5`, false}, // fractions are not integers
		{"9007199254740992", `9007199254740992`, false},
		{"9007199254740991", `9007199254740991`, true},
		{"NaN", `1`, false},
		{"{}", `{}`, false},
		{"a", `["a"]`, false},
		{"null", `null`, false},
	} {
		if got := headerMatches(tc.header, json.RawMessage(tc.body)); got != tc.want {
			t.Errorf("headerMatches(%q, %s) = %v, want %v", tc.header, tc.body, got, tc.want)
		}
	}
}

func TestCheckParamHeaders(t *testing.T) {
	bindings, err := paramBindings(json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"o":{"type":"object","properties":{"flag":{"type":"boolean","x-mcp-header":"Flag"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	body := func(args string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":` + args + `}}`)
	}
	for _, tc := range []struct {
		name    string
		body    []byte
		headers map[string][]string
		fault   string // the header refused, "" for none
	}{
		{"all match", body(`{"region":"eu","n":3,"o":{"flag":true}}`),
			map[string][]string{"Mcp-Param-Region": {"eu"}, "Mcp-Param-N": {"3"}, "Mcp-Param-Flag": {"true"}}, ""},
		{"none bound", body(`{}`), nil, ""},
		{"null needs no header", body(`{"region":null}`), nil, ""},
		{"empty string is a value", body(`{"region":""}`), map[string][]string{"Mcp-Param-Region": {""}}, ""},
		{"Base64", body(`{"region":"Zürich"}`), map[string][]string{"Mcp-Param-Region": {"=?base64?WsO8cmljaA==?="}}, ""},
		{"missing", body(`{"region":"eu"}`), nil, "Mcp-Param-Region"},
		{"mismatch", body(`{"region":"eu"}`), map[string][]string{"Mcp-Param-Region": {"us"}}, "Mcp-Param-Region"},
		{"sent for absent", body(`{}`), map[string][]string{"Mcp-Param-N": {"3"}}, "Mcp-Param-N"},
		{"sent for null", body(`{"n":null}`), map[string][]string{"Mcp-Param-N": {"3"}}, "Mcp-Param-N"},
		{"repeated", body(`{"region":"eu"}`), map[string][]string{"Mcp-Param-Region": {"eu", "eu"}}, "Mcp-Param-Region"},
		{"raw UTF-8", body(`{"region":"Zürich"}`), map[string][]string{"Mcp-Param-Region": {"Zürich"}}, "Mcp-Param-Region"},
		{"nested mismatch", body(`{"o":{"flag":false}}`), map[string][]string{"Mcp-Param-Flag": {"true"}}, "Mcp-Param-Flag"},
		{"nested parent not an object", body(`{"o":3}`), map[string][]string{"Mcp-Param-Flag": {"true"}}, "Mcp-Param-Flag"},
		{"object for a primitive", body(`{"region":{"a":1}}`), map[string][]string{"Mcp-Param-Region": {"x"}}, "Mcp-Param-Region"},
		// Not a tools/call of this tool: the SDK refuses it (or serves
		// another method), not this check.
		{"another tool", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"u","arguments":{"region":"eu"}}}`), nil, ""},
		{"name in another case", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"t","arguments":{"region":"eu"}}}`), nil, ""},
		// Names are matched exactly, as the SDK matches them: a member
		// in another case is not the one the SDK runs.
		{"another-case name beside it", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","NAME":"u","arguments":{"region":"eu"}}}`),
			nil, "Mcp-Param-Region"},
		{"another-case arguments beside them", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"ARGUMENTS":{"region":"eu"}}}`),
			map[string][]string{"Mcp-Param-Region": {"eu"}}, "Mcp-Param-Region"},
		{"another-case argument", body(`{"Region":"eu"}`), map[string][]string{"Mcp-Param-Region": {"eu"}}, "Mcp-Param-Region"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, vs := range tc.headers {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			env, rerr := ParseEnvelope(tc.body)
			if rerr != nil {
				t.Fatal(rerr)
			}
			mm := checkParamHeaders(h, &env, "t", bindings)
			switch {
			case tc.fault == "" && mm != nil:
				t.Errorf("refused: %s %s", mm.header, mm.reason)
			case tc.fault != "" && mm == nil:
				t.Errorf("accepted, want %s refused", tc.fault)
			case tc.fault != "" && mm.header != tc.fault:
				t.Errorf("refused %s (%s), want %s", mm.header, mm.reason, tc.fault)
			}
		})
	}
}

func TestCheckStandardHeaders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string][]string
		decoded string
		fault   string
	}{
		{"plain", map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"praxec.query"}}, "praxec.query", ""},
		{"Base64 name", map[string][]string{"Mcp-Name": {"=?base64?cHJheGVjLnF1ZXJ5?="}}, "praxec.query", ""},
		{"bad Base64 name", map[string][]string{"Mcp-Name": {"=?base64?%%?="}}, "", "Mcp-Name"},
		{"raw UTF-8 name", map[string][]string{"Mcp-Name": {"wetter-für-morgen"}}, "", "Mcp-Name"},
		{"repeated name", map[string][]string{"Mcp-Name": {"a", "b"}}, "", "Mcp-Name"},
		{"repeated method", map[string][]string{"Mcp-Method": {"tools/call", "tools/list"}}, "", "Mcp-Method"},
		{"repeated version", map[string][]string{"Mcp-Protocol-Version": {"2026-07-28", "2025-11-25"}}, "", "Mcp-Protocol-Version"},
		{"control character", map[string][]string{"Mcp-Method": {"tools/call\x01"}}, "", "Mcp-Method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, vs := range tc.headers {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			name, mm := checkStandardHeaders(h)
			switch {
			case tc.fault == "" && mm != nil:
				t.Errorf("refused: %s %s", mm.header, mm.reason)
			case tc.fault != "" && (mm == nil || mm.header != tc.fault):
				t.Errorf("got %+v, want %s refused", mm, tc.fault)
			case tc.fault == "" && name != tc.decoded:
				t.Errorf("name %q, want %q", name, tc.decoded)
			}
		})
	}
}

// FuzzDecodeHeaderValue: a mirrored header value is untrusted input. The
// decoder never panics; what it accepts is UTF-8, and a value it accepts
// as plain text is itself (no sentinel around Base64 content) and holds
// only visible ASCII, space and tab.
func FuzzDecodeHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "", "=?base64?SGVsbG8sIOS4lueVjA==?=", "=?base64??=", "=?base64?", "?=",
		"=?base64?SGVsbG8?=", "a\x00", "Zürich", "=?base64?/w==?=", " x "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, ok := decodeHeaderValue(v)
		if !ok {
			return
		}
		if !utf8.ValidString(s) {
			t.Fatalf("%q decodes to invalid UTF-8 %q", v, s)
		}
		if !plainHeaderValue(v) {
			t.Fatalf("%q accepted with characters outside visible ASCII", v)
		}
		if s != v && !(strings.HasPrefix(v, base64Prefix) && strings.HasSuffix(v, base64Suffix)) {
			t.Fatalf("%q changed to %q without the sentinel", v, s)
		}
	})
}

// FuzzParamBindings: an input schema (from configuration or an upstream's
// tools/list) is untrusted input. Reading its bindings never panics, and
// the bindings it reads have token names unique whatever the case, each
// with a non-empty path.
func FuzzParamBindings(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}`,
		`{"properties":{"a":{"properties":{"b":{"type":"integer","x-mcp-header":"B"}}}}}`,
		`{"items":[{"x-mcp-header":"I"}]}`, `{"x-mcp-header":1}`, `[]`, `{"properties":[]}`, `{"properties":{"a":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		bindings, err := paramBindings(schema)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, b := range bindings {
			name, ok := strings.CutPrefix(b.header, headerParamPrefix)
			if !ok || !isToken(name) || len(b.path) == 0 || seen[strings.ToLower(name)] {
				t.Fatalf("binding %+v of %s", b, schema)
			}
			seen[strings.ToLower(name)] = true
		}
	})
}

// FuzzCheckParamHeaders: a tools/call body and its Mcp-Param-* header are
// untrusted. The check never panics, and a header it accepts for a present
// argument decodes to a value the argument matches.
func FuzzCheckParamHeaders(f *testing.F) {
	f.Add([]byte(`{"method":"tools/call","params":{"name":"t","arguments":{"r":"eu"}}}`), "eu")
	f.Add([]byte(`{"method":"tools/call","params":{"name":"t","arguments":{"r":42}}}`), "42.0")
	f.Add([]byte(`{"method":"tools/call","params":{"name":"t","arguments":{"r":null}}}`), "")
	f.Add([]byte(`{"method":"tools/call","params":{"name":"t","arguments":{"r":"Zürich"}}}`), "=?base64?WsO8cmljaA==?=")
	bindings := []paramBinding{{path: []string{"r"}, header: "Mcp-Param-R"}}
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		h := http.Header{"Mcp-Param-R": {header}}
		env, rerr := ParseEnvelope(body)
		if rerr != nil || checkParamHeaders(h, &env, "t", bindings) != nil {
			return
		}
		// The body is checked (no name twice): maps read it as the edge
		// does, names matched exactly.
		var msg, params, args map[string]json.RawMessage
		var method, name string
		if json.Unmarshal(body, &msg) != nil || json.Unmarshal(msg["method"], &method) != nil || method != "tools/call" ||
			json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(params["name"], &name) != nil || name != "t" {
			return
		}
		_ = json.Unmarshal(params["arguments"], &args)
		raw, ok := args["r"]
		if !ok || strings.TrimSpace(string(raw)) == "null" {
			t.Fatalf("header %q accepted for an absent or null argument in %s", header, body)
		}
		v, ok := decodeHeaderValue(header)
		if !ok || !headerMatches(v, raw) {
			t.Fatalf("header %q accepted for %s", header, raw)
		}
	})
}
