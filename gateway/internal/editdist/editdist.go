// Package editdist is the Levenshtein distance the gateway suggests
// spellings with: over the bytes of a configuration name (package config)
// and over the runes of a lexicon term (package discovery).
package editdist

// Distance returns the Levenshtein distance of a and b: the fewest
// insertions, deletions and substitutions of one element that turn one
// into the other. It keeps two rows of the shorter one's length.
func Distance[T comparable](a, b []T) int {
	if len(a) < len(b) {
		a, b = b, a
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
