package connect

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRetryAfter: any Retry-After value is refused or read as a wait that
// is never negative.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", " 5 ", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if d, ok := retryAfter(v); ok && d < 0 {
			t.Fatalf("%q: a negative wait %v", v, d)
		}
	})
}

// FuzzResolvePath: a path argument resolves to a clean absolute path, or
// is refused; ".." is always refused; nothing panics.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"a/b", "/etc/passwd", "../x", "a/../../b", "", ".", "./x", "a//b/", "\x00"} {
		f.Add(s)
	}
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, p string) {
		got, err := resolvePath(p, base)
		if err != nil {
			return
		}
		for _, el := range strings.Split(filepath.ToSlash(p), "/") {
			if el == ".." {
				t.Fatalf("%q: accepted with ..", p)
			}
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("%q: resolved to %q, not a clean absolute path", p, got)
		}
	})
}

// FuzzParseJSON: what a cli command prints on stdout, or a REST upstream
// answers as its body, becomes the move's output json / body only when it
// is exactly one JSON object or array; what is accepted is valid JSON,
// marshals again (the run's context is stored as JSON) and reads back the
// same; nothing panics.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2,3]`, ` {"n": 12345678901234567890123} `, `{"a":1}{"b":2}`, `{"a":1} x`,
		`"str"`, `42`, `null`, `[`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `[[[[[[[[[[]]]]]]]]]]`, `{"a":1e999}`, `{"a":-0}`, "\ufeff{}", ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := parseJSON(b)
		if !ok {
			return
		}
		if !json.Valid(bytes.TrimSpace(b)) {
			t.Fatalf("%q: accepted, but it is not valid JSON", b)
		}
		switch v.(type) {
		case map[string]any, []any:
		default:
			t.Fatalf("%q: accepted as %T, want an object or an array", b, v)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%q: the value does not marshal: %v", b, err)
		}
		again, ok := parseJSON(out)
		if !ok {
			t.Fatalf("%q: its marshalled form %q is refused", b, out)
		}
		if out2, _ := json.Marshal(again); !bytes.Equal(out, out2) {
			t.Fatalf("%q: not stable: %s then %s", b, out, out2)
		}
	})
}
