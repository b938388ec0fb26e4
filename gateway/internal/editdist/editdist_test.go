package editdist

import "testing"

// TestDistance: the distance both ways round, over bytes and over runes
// (a two-byte rune is one substitution as a rune, two as bytes).
func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b         string
		bytes, runes int
	}{
		{"", "", 0, 0}, {"abc", "", 3, 3}, {"", "ab", 2, 2}, {"kitten", "sitting", 3, 3},
		{"flaw", "lawn", 2, 2}, {"über", "uber", 2, 1}, {"maxDepth", "maxdepth", 1, 1},
	} {
		for _, p := range [][2]string{{c.a, c.b}, {c.b, c.a}} {
			if got := Distance([]byte(p[0]), []byte(p[1])); got != c.bytes {
				t.Errorf("Distance(bytes %q, %q) = %d, want %d", p[0], p[1], got, c.bytes)
			}
			if got := Distance([]rune(p[0]), []rune(p[1])); got != c.runes {
				t.Errorf("Distance(runes %q, %q) = %d, want %d", p[0], p[1], got, c.runes)
			}
		}
	}
}
