package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// parseSeeds are FuzzParse's inputs besides testdata/*.yaml and yamlCases.
var parseSeeds = []string{
	"server: {limits: {ratePerSecond: 1e-7, maxBodyBytes: 1e3}}",
	"auth: {claims: {tenant: \"\\u2028\\x01\"}}",
}

// FuzzParse holds Parse to three promises: it never panics, it fails only
// with a *LoadError that says something, and what it accepts survives a
// round trip: the decoded configuration, marshalled to JSON (which is YAML),
// parses again to the same configuration.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range parseSeeds {
		f.Add([]byte(seed))
	}
	for _, c := range yamlCases {
		f.Add([]byte(c.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.yaml", data)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Parse failed with %T %v, want a *LoadError", err, err)
			}
			if len(le.Problems) == 0 {
				t.Fatal("a LoadError without problems")
			}
			for _, p := range le.Problems {
				if p.Message == "" || p.Line < 0 || p.Column < 0 {
					t.Fatalf("malformed problem %+v", p)
				}
			}
			return
		}
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("an accepted configuration does not marshal: %v", err)
		}
		again, err := Parse("fuzz.json", b)
		if err != nil {
			t.Fatalf("the re-marshalled configuration does not parse:\n%s\n%v", b, err)
		}
		b2, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("the round trip changed the configuration:\n%s\n%s", b, b2)
		}
	})
}

// FuzzCheckToolSchema: an upstream's tools/list inputSchema (any JSON the
// server sends) becomes a capability's input schema only through
// CheckToolSchema. What it accepts has an object root, no remote
// reference, no $id or legacy recursion keyword, compiles, validates
// instances without panicking, and is accepted again unchanged (it is
// what a reload imports again); nothing panics.
func FuzzCheckToolSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"a":{"type":"string","pattern":"^x+$"}},"required":["a"]}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"number"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","items":[{"type":"string"}]}`,
		`{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`,
		`{"type":"object","$id":"urn:x"}`,
		`{"type":"object","properties":{"x":{"$recursiveRef":"#"}}}`,
		`{"type":"object","properties":{"x":{"pattern":"("}}}`,
		`{"type":"object","properties":{"x":{"format":"email","minLength":1e300}}}`,
		`{"type":["object","null"]}`,
		`{"type":"string"}`, `[]`, `null`, `{}`, `{"type":"object","properties":{"~1/%25":{"const":{"a":[1,{"b":null}]}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var schema any
		if json.Unmarshal(b, &schema) != nil {
			return
		}
		got, err := CheckToolSchema(schema)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%s: refused without a reason", b)
			}
			return
		}
		if got["type"] != "object" {
			t.Fatalf("%s: accepted with root type %v", b, got["type"])
		}
		if k := forbiddenKeyword(got); k != "" {
			t.Fatalf("%s: accepted with %s", b, k)
		}
		again, err := CheckToolSchema(got)
		if err != nil {
			t.Fatalf("%s: accepted, but its result is refused: %v", b, err)
		}
		x, _ := json.Marshal(got)
		y, _ := json.Marshal(again)
		if !bytes.Equal(x, y) {
			t.Fatalf("%s: not stable: %s then %s", b, x, y)
		}
		compiled, err := contracts.CompileSchema("fuzz", x)
		if err != nil {
			t.Fatalf("%s: accepted, but does not compile: %v", b, err)
		}
		for _, inst := range []any{map[string]any{}, map[string]any{"a": "x", "n": 1.5, "x": []any{nil, true}}} {
			_ = compiled.Validate(inst)
		}
	})
}

// forbiddenKeyword names a keyword CheckToolSchema must never let through
// anywhere in an accepted schema: $id, $vocabulary, $recursiveRef,
// $recursiveAnchor, or a $ref or $dynamicRef that is not local.
func forbiddenKeyword(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "$id", "$vocabulary", "$recursiveRef", "$recursiveAnchor":
				return k
			case "$ref", "$dynamicRef":
				if s, ok := x.(string); !ok || !strings.HasPrefix(s, "#") {
					return k + " " + fmt.Sprint(x)
				}
			}
			if k := forbiddenKeyword(x); k != "" {
				return k
			}
		}
	case []any:
		for _, x := range v {
			if k := forbiddenKeyword(x); k != "" {
				return k
			}
		}
	}
	return ""
}
