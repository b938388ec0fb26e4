package ids

import (
	"regexp"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		mint func() string
		re   *regexp.Regexp
	}{
		{"New", func() string { return New("run") }, regexp.MustCompile(`^run_[a-z2-7]{26}$`)},
		{"Request", Request, regexp.MustCompile(`^[0-9a-f]{24}$`)},
		{"Trace", Trace, regexp.MustCompile(`^[0-9a-f]{32}$`)},
		{"Span", Span, regexp.MustCompile(`^[0-9a-f]{16}$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 1000 {
				id := tc.mint()
				if !tc.re.MatchString(id) {
					t.Fatalf("%q does not match %s", id, tc.re)
				}
				if seen[id] {
					t.Fatalf("%q minted twice", id)
				}
				seen[id] = true
			}
		})
	}
}

func BenchmarkRequest(b *testing.B) {
	for b.Loop() {
		Request()
	}
}
