package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/internal/golden"
)

// TestLoadGolden loads every testdata/*.yaml file and compares the outcome
// with testdata/*.golden: the decoded configuration for a valid file, every
// FILE:LINE:COLUMN: FIELD: MESSAGE line for an invalid one.
// testdata/workflow-*.yaml hold every class of workflow and policy problem
// to its exact wording and position.
func TestLoadGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			got := loadOutcome(t, file)
			golden.Check(t, strings.TrimSuffix(file, ".yaml")+".golden", got, "")
			// A file is valid exactly when its name says so.
			valid := strings.HasPrefix(name, "valid-") || strings.HasPrefix(name, "yes-no-strings") ||
				name == "empty" || name == "comments-only"
			if ok := bytes.HasPrefix(got, []byte("ok\n")); ok != valid {
				t.Errorf("%s: accepted = %v, want %v", file, ok, valid)
			}
		})
	}
}

// mustNotParse parses data as the file name and returns the *LoadError
// Parse must fail with.
func mustNotParse(t *testing.T, name, data string) *LoadError {
	t.Helper()
	_, err := Parse(name, []byte(data))
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Parse = %v, want a *LoadError", err)
	}
	return le
}

func loadOutcome(t *testing.T, file string) []byte {
	t.Helper()
	cfg, err := Load(file)
	if err != nil {
		var le *LoadError
		if !errors.As(err, &le) {
			t.Fatalf("Load(%s) = %v, want a *LoadError", file, err)
		}
		if le.File != file {
			t.Errorf("LoadError.File = %q, want %q", le.File, file)
		}
		for _, p := range le.Problems {
			if p.Message == "" {
				t.Errorf("problem without a message: %+v", p)
			}
		}
		if !slices.IsSortedFunc(le.Problems, func(a, b Problem) int { return a.Line - b.Line }) {
			t.Errorf("problems are not sorted by line: %+v", le.Problems)
		}
		return []byte(err.Error() + "\n")
	}
	if cfg.Source != file {
		t.Errorf("Source = %q, want %q", cfg.Source, file)
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]byte("ok\n"), b...), '\n')
}

func TestEmptyFileIsDefault(t *testing.T) {
	for _, data := range []string{"", "# comment\n", "---\n", "~\n", "null\n"} {
		cfg, err := Parse("praxec.yaml", []byte(data))
		if err != nil {
			t.Errorf("Parse(%q): %v", data, err)
			continue
		}
		if !reflect.DeepEqual(cfg, Default()) {
			t.Errorf("Parse(%q) = %+v, want Default()", data, cfg)
		}
	}
}

func TestLoadErrorFormat(t *testing.T) {
	_, err := Parse("praxec.yaml", []byte("auth:\n  issuers:\n    - issuer: https://a.example\n      algorithms: [RS256, HS256]\n"))
	const want = "praxec.yaml:4:27: auth.issuers[0].algorithms[1]: must be one of the allowed values " +
		"(asymmetric JWS algorithms: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	le := &LoadError{File: "f.yaml", Problems: []Problem{{Message: "whole file"}, {Line: 3, Message: "no column"}, {Line: 3, Column: 2, Field: "a.b", Message: "m"}}}
	if got, want := le.Error(), "f.yaml: whole file\nf.yaml:3: no column\nf.yaml:3:2: a.b: m"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestProblemsSortedAndComplete(t *testing.T) {
	data := "server:\n  limits:\n    maxDepth: 0\n  bogus: 1\nauth:\n  leeway: 1d\nzzz: 1\naaa: 2\n"
	le := mustNotParse(t, "praxec.yaml", data)
	var lines []int
	for _, p := range le.Problems {
		lines = append(lines, p.Line)
	}
	if want := []int{3, 4, 6, 7, 8}; !slices.Equal(lines, want) {
		t.Errorf("problem lines = %v, want %v\n%v", lines, want, le)
	}
}

func TestParseTooLarge(t *testing.T) {
	data := bytes.Repeat([]byte("#"), MaxFileSize+1)
	_, err := Parse("big.yaml", data)
	var le *LoadError
	if !errors.As(err, &le) || len(le.Problems) != 1 || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v, want a size problem", err)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.As(err, &le) {
		t.Fatalf("Load: err = %v, want *LoadError", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestDeepNestingRefused(t *testing.T) {
	data := "connections: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n"
	_, err := Parse("deep.yaml", []byte(data))
	if err == nil || !strings.Contains(err.Error(), "nesting is deeper than") {
		t.Fatalf("err = %v, want a nesting problem", err)
	}
}

func TestDefaults(t *testing.T) {
	cfg := Default()
	cfg.Defaults("")
	want := &Config{
		Server: Server{
			Addr:      "127.0.0.1:8080",
			PublicURL: "http://127.0.0.1:8080",
			Limits: Limits{
				MaxBodyBytes:   1 << 20,
				MaxDepth:       32,
				MaxElements:    20000,
				RequestTimeout: Duration(30 * time.Second),
				RatePerSecond:  50,
				Burst:          100,
			},
			Idempotency: Idempotency{Retention: Duration(24 * time.Hour), TombstoneRetention: Duration(DefaultTombstoneRetention)},
		},
		Auth: Auth{
			Resource:            "http://127.0.0.1:8080",
			Claims:              Claims{Tenant: "tenant_id", Compartments: "compartments", Purposes: "purposes", Tools: "tools"},
			RequiredClaims:      []string{"sub", "jti", "client_id"},
			Leeway:              Duration(30 * time.Second),
			JWKSRefreshInterval: Duration(30 * time.Second),
			CacheSize:           10000,
		},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Default().Defaults(\"\") =\n%+v\nwant\n%+v", cfg, want)
	}

	// The flag's address wins over the file's, and the public URL and the
	// resource follow it unless the file set them.
	cfg, err := Load(filepath.Join("testdata", "valid-minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Defaults("0.0.0.0:9000")
	if cfg.Server.Addr != "0.0.0.0:9000" || cfg.Server.PublicURL != "http://0.0.0.0:9000" || cfg.Auth.Resource != "http://0.0.0.0:9000" {
		t.Errorf("after Defaults(addr): %+v", cfg.Server)
	}
	if got := cfg.Auth.Issuers[0].Algorithms; !slices.Equal(got, []string{"RS256", "ES256", "EdDSA"}) {
		t.Errorf("issuer algorithms = %v, want the default", got)
	}

	// What the file sets, Defaults keeps.
	cfg, err = Load(filepath.Join("testdata", "valid-full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(cfg)
	cfg.Defaults("")
	after, _ := json.Marshal(cfg)
	if !bytes.Equal(before, after) {
		t.Errorf("Defaults changed a fully set configuration:\n%s\n%s", before, after)
	}
}

func TestDurationJSON(t *testing.T) {
	var d Duration
	if err := json.Unmarshal([]byte(`"1h30m"`), &d); err != nil || d.Std() != 90*time.Minute {
		t.Fatalf("Unmarshal = %v, %v", d, err)
	}
	b, err := json.Marshal(d)
	if err != nil || string(b) != `"1h30m0s"` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	for _, bad := range []string{`30`, `"30"`, `"-1s"`, `"1d"`, `null`} {
		var d Duration
		if err := json.Unmarshal([]byte(bad), &d); err == nil && bad != `null` {
			t.Errorf("Unmarshal(%s) accepted %v", bad, d)
		}
	}
}

// TestSchemaMatchesConfig holds the schema and the Config types together:
// every closed object of the schema lists exactly the JSON members of its Go
// type, and every reserved section is an open object.
func TestSchemaMatchesConfig(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	defs := root["$defs"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		for {
			ref, ok := s["$ref"].(string)
			if !ok {
				return s
			}
			s = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
	}
	walking := map[reflect.Type]bool{}
	var walk func(path string, s map[string]any, typ reflect.Type)
	walk = func(path string, s map[string]any, typ reflect.Type) {
		s = resolve(s)
		if typ == reflect.TypeFor[StringList]() {
			// One string or a list of them.
			if !reflect.DeepEqual(s["type"], []any{"string", "array"}) {
				t.Errorf("%s: schema type %v, want [string array]", path, s["type"])
			}
			if items := resolve(s["items"].(map[string]any)); items["type"] != "string" {
				t.Errorf("%s[]: schema type %v, want string", path, items["type"])
			}
			return
		}
		switch typ.Kind() {
		case reflect.Pointer:
			walk(path, s, typ.Elem())
		case reflect.Interface:
			if s["type"] != nil {
				t.Errorf("%s: schema type %v for a Go interface, want any value", path, s["type"])
			}
		case reflect.Map:
			if s["type"] != "object" {
				t.Errorf("%s: schema type %v, want object", path, s["type"])
			}
			if typ.Key().Kind() != reflect.String {
				t.Errorf("%s: map key %v, want string", path, typ.Key())
			}
			if typ.Elem().Kind() == reflect.Interface {
				if ap, ok := s["additionalProperties"]; ok && ap != true {
					t.Errorf("%s: a map of any value has additionalProperties %v", path, ap)
				}
				return
			}
			ap, ok := s["additionalProperties"].(map[string]any)
			if !ok {
				t.Errorf("%s: a map of %v has no additionalProperties schema", path, typ.Elem())
				return
			}
			walk(path+"{}", ap, typ.Elem())
		case reflect.Struct:
			if s["type"] != "object" || s["additionalProperties"] != false {
				t.Errorf("%s: schema is not a closed object", path)
			}
			if walking[typ] {
				return // a type that holds itself (parallel branches): walked once
			}
			walking[typ] = true
			defer delete(walking, typ)
			props, _ := s["properties"].(map[string]any)
			var names []string
			for f := range typ.Fields() {
				name := jsonName(f)
				if name == "" {
					continue
				}
				names = append(names, name)
				ps, ok := props[name].(map[string]any)
				if !ok {
					t.Errorf("%s.%s: in Config but not in the schema", path, name)
					continue
				}
				walk(path+"."+name, ps, f.Type)
			}
			for name := range props {
				if !slices.Contains(names, name) && !(path == "" && slices.Contains(reservedSections, name)) {
					t.Errorf("%s.%s: in the schema but not in Config", path, name)
				}
			}
		case reflect.Slice:
			if s["type"] != "array" {
				t.Errorf("%s: schema type %v, want array", path, s["type"])
			}
			walk(path+"[]", s["items"].(map[string]any), typ.Elem())
		case reflect.String:
			if s["type"] != "string" {
				t.Errorf("%s: schema type %v, want string", path, s["type"])
			}
		case reflect.Bool:
			if s["type"] != "boolean" {
				t.Errorf("%s: schema type %v, want boolean", path, s["type"])
			}
		case reflect.Int, reflect.Int64:
			want := "integer"
			if typ == reflect.TypeFor[Duration]() {
				want = "string"
				if s["pattern"] != durationPattern {
					t.Errorf("%s: duration pattern %v, want durationPattern", path, s["pattern"])
				}
			}
			if s["type"] != want {
				t.Errorf("%s: schema type %v, want %s", path, s["type"], want)
			}
			if want == "integer" && (s["minimum"] == nil || s["maximum"] == nil) {
				t.Errorf("%s: integer without bounds", path)
			}
		case reflect.Float64:
			if s["type"] != "number" || s["minimum"] == nil || s["maximum"] == nil {
				t.Errorf("%s: want a bounded number", path)
			}
		default:
			t.Errorf("%s: unexpected Go kind %v", path, typ.Kind())
		}
	}
	walk("", root, reflect.TypeFor[Config]())
	props := root["properties"].(map[string]any)
	for _, name := range reservedSections {
		s, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("reserved section %s is missing from the schema", name)
			continue
		}
		if r := resolve(s); r["type"] != "object" || r["additionalProperties"] != nil {
			t.Errorf("reserved section %s is not an open object", name)
		}
		if !strings.Contains(root["description"].(string), name) {
			t.Errorf("the schema's description does not name the reserved section %s", name)
		}
	}
	sections := len(reservedSections)
	for f := range reflect.TypeFor[Config]().Fields() {
		if jsonName(f) != "" {
			sections++
		}
	}
	if len(props) != sections {
		t.Errorf("the schema has %d top-level sections, want %d", len(props), sections)
	}
}

func TestSchemaCompiles(t *testing.T) {
	if _, err := compiledSchema(); err != nil {
		t.Fatal(err)
	}
	s := Schema()
	s[0] = 'x'
	if Schema()[0] == 'x' {
		t.Error("Schema returns the embedded bytes, not a copy")
	}
}

func TestFieldPath(t *testing.T) {
	v := map[string]any{
		"auth":        map[string]any{"issuers": []any{map[string]any{"algorithms": []any{"a", "b"}}}},
		"connections": map[string]any{"0": map[string]any{"a.b": 1}},
	}
	for ptr, want := range map[string]string{
		"":                                 "",
		"/auth":                            "auth",
		"/auth/issuers/0/algorithms/1":     "auth.issuers[0].algorithms[1]",
		"/auth/issuers/0/issuer":           "auth.issuers[0].issuer",
		"/connections/0/a.b":               `connections["0"]["a.b"]`,
		"/connections/x~1y":                `connections["x/y"]`,
		"/auth/issuers/7":                  `auth.issuers["7"]`,
		"/auth/issuers/0/algorithms/~0x~1": `auth.issuers[0].algorithms["~x/"]`,
	} {
		if got := fieldPath(v, ptr); got != want {
			t.Errorf("fieldPath(%q) = %s, want %s", ptr, got, want)
		}
	}
}

// TestUnprintableRefused: a double-quoted escape can put a character into a
// value or key that YAML does not allow written out (the JSON of the
// configuration, which leaves U+007F-U+009F unescaped, would then not parse
// again); such a file is refused at the scalar, and the characters YAML
// prints are kept.
func TestUnprintableRefused(t *testing.T) {
	for _, tc := range []struct {
		data, char   string
		line, column int
	}{
		{"auth: {claims: {tenant: \"\\x80\"}}\n", "U+0080", 1, 25},
		{"auth:\n  claims:\n    tenant: \"org\\x01\"\n", "U+0001", 3, 13},
		{"auth: {claims: {tools: \"a\\x7fb\"}}\n", "U+007F", 1, 24},
		{"connections: {\"up\\x9f\": {kind: mcp, url: \"http://127.0.0.1:1\"}}\n", "U+009F", 1, 15},
		{"auth: {claims: {tenant: \"\\uFFFE\"}}\n", "U+FFFE", 1, 25},
		{"auth: {claims: {tenant: \"\\x85\"}}\n", "U+0085", 1, 25},
	} {
		_, err := Parse("p.yaml", []byte(tc.data))
		var le *LoadError
		if !errors.As(err, &le) || len(le.Problems) != 1 {
			t.Errorf("Parse(%q) = %v, want one problem", tc.data, err)
			continue
		}
		p := le.Problems[0]
		if p.Line != tc.line || p.Column != tc.column || !strings.Contains(p.Message, tc.char) || !strings.Contains(p.Message, "remove it") {
			t.Errorf("Parse(%q): %+v, want %s at %d:%d", tc.data, p, tc.char, tc.line, tc.column)
		}
	}
	for _, ok := range []string{"a\\tb", "\\u00a0", "\\u2028", "\\U0001F600", "caf\\u00e9"} {
		data := "auth: {claims: {tenant: \"" + ok + "\"}}\n"
		if _, err := Parse("p.yaml", []byte(data)); err != nil {
			t.Errorf("Parse(%q) = %v, want it accepted", data, err)
		}
	}
}

func TestSyntaxErrorLines(t *testing.T) {
	for _, tc := range []struct {
		data string
		line int
	}{
		{"x: 1\ny: 2\na: b: c\n", 3},
		{"x: 1\ny: 2\nz:\n\ta: 1\n", 4},
		{"x: 1\ny: 2\n- a\n", 3},
		{"x: 1\ny: 2\nz: [1, 2\nw: 1\n", 3},
		{"x: 1\ny: 2\nz: {a: 1\nw: 1\n", 3},
		{"- a\nb: 1\n", 2},
	} {
		_, err := Parse("p.yaml", []byte(tc.data))
		var le *LoadError
		if !errors.As(err, &le) || len(le.Problems) != 1 {
			t.Errorf("Parse(%q) = %v, want one syntax problem", tc.data, err)
			continue
		}
		if p := le.Problems[0]; p.Line != tc.line || !strings.HasPrefix(p.Message, "YAML syntax: ") {
			t.Errorf("Parse(%q): %v, want line %d", tc.data, err, tc.line)
		}
	}
}

func TestProblemsBounded(t *testing.T) {
	data := "server:\n  allowedOrigins:\n" + strings.Repeat("    - 1\n", 500)
	le := mustNotParse(t, "p.yaml", data)
	if len(le.Problems) != maxProblems+1 {
		t.Fatalf("%d problems, want %d", len(le.Problems), maxProblems+1)
	}
	if last := le.Problems[maxProblems]; !strings.Contains(last.Message, "more problems not shown") || last.Line < le.Problems[maxProblems-1].Line {
		t.Errorf("last problem = %+v", last)
	}
}

// TestPrivateKeyFileRelativeToConfig: a relative auth.privateKeyFile is
// read from the configuration file's directory, an absolute one as given.
func TestPrivateKeyFileRelativeToConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "praxec.yaml")
	yaml := `connections:
  rel: {kind: rest, baseUrl: "https://a.example.com", auth: {kind: client-credentials, tokenEndpoint: "https://as.example.com/token", clientId: gw, privateKeyFile: keys/gw.pem}}
  abs: {kind: rest, baseUrl: "https://a.example.com", auth: {kind: client-credentials, tokenEndpoint: "https://as.example.com/token", clientId: gw, privateKeyFile: /etc/gw.pem}}
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"rel": filepath.Join(dir, "keys", "gw.pem"), "abs": "/etc/gw.pem"} {
		if got := cfg.Connections[name].Auth.PrivateKeyFile; got != want {
			t.Errorf("%s: privateKeyFile %q, want %q", name, got, want)
		}
	}
}
