package connect

import (
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
