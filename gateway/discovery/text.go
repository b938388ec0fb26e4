package discovery

import (
	"container/heap"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The weights of the index's fields (see the package documentation).
const (
	ExactIDWeight          = 10
	IDTokenWeight          = 6
	TitleTokenWeight       = 4
	AliasTokenWeight       = 4
	TagTokenWeight         = 3
	DescriptionTokenWeight = 1
)

// The weights of the lexicon's fields.
const (
	ExactTermWeight       = 10
	TermTokenWeight       = 6
	RefTokenWeight        = 4
	ContextTokenWeight    = 3
	DefinitionTokenWeight = 1
)

// DefaultLimit and MaxLimit bound the results of one search.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// stopWords never become tokens: they would match most descriptions.
var stopWords = map[string]bool{
	"an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "in": true, "into": true, "is": true, "it": true, "its": true,
	"of": true, "on": true, "or": true, "the": true, "to": true, "with": true,
}

// Tokens splits text into the distinct search tokens it holds, in order of
// first appearance: lower case, cut at every character that is neither a
// letter nor a digit, without one-character tokens and stop words.
func Tokens(text string) []string {
	var out []string
	var seen map[string]bool
	for _, f := range strings.FieldsFunc(text, notWordRune) {
		w := strings.ToLower(f)
		if utf8.RuneCountInString(w) < 2 || stopWords[w] {
			continue
		}
		if len(out) < 8 {
			if slices.Contains(out, w) {
				continue
			}
		} else {
			if seen == nil {
				seen = make(map[string]bool, 16)
				for _, o := range out {
					seen[o] = true
				}
			}
			if seen[w] {
				continue
			}
			seen[w] = true
		}
		out = append(out, w)
	}
	return out
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// field is one weighted text of a document.
type field struct {
	weight float32
	texts  []string
}

// posting says how much a token weighs in one document.
type posting struct {
	doc    int32
	weight float32
}

// textIndex is an inverted index over documents numbered 0..n-1, in the
// order their sort keys (unique) sort, which is the order of ties.
type textIndex struct {
	n        int
	postings map[string][]posting
	exact    map[string][]int32 // lower-case exact key -> documents
	exactW   float32
	scratch  sync.Pool // *scratch
}

type scratch struct {
	scores  []float32
	touched []int32
}

func newTextIndex(exactWeight float32) *textIndex {
	return &textIndex{postings: map[string][]posting{}, exact: map[string][]int32{}, exactW: exactWeight}
}

// add indexes document doc (documents must be added in increasing order)
// under its fields and its exact keys.
func (x *textIndex) add(doc int32, fields []field, exactKeys []string) {
	x.n = int(doc) + 1
	// Each token's weight, each field counted once per token; documents
	// have few tokens, so a slice (indexed by a map once it grows) beats a
	// map per document.
	type acc struct {
		tok   string
		w     float32
		field int
	}
	var toks []acc
	var at map[string]int
	for fi, f := range fields {
		for _, t := range f.texts {
			for _, tok := range Tokens(t) {
				i := -1
				if at != nil {
					if j, ok := at[tok]; ok {
						i = j
					}
				} else {
					for j := range toks {
						if toks[j].tok == tok {
							i = j
							break
						}
					}
				}
				switch {
				case i < 0:
					toks = append(toks, acc{tok, f.weight, fi})
					if at != nil {
						at[tok] = len(toks) - 1
					} else if len(toks) > 32 {
						at = make(map[string]int, 2*len(toks))
						for j, a := range toks {
							at[a.tok] = j
						}
					}
				case toks[i].field != fi:
					toks[i].w += f.weight
					toks[i].field = fi
				}
			}
		}
	}
	for _, a := range toks {
		x.postings[a.tok] = append(x.postings[a.tok], posting{doc: doc, weight: a.w})
	}
	for _, k := range exactKeys {
		k = exactKey(k)
		if k != "" && !slices.Contains(x.exact[k], doc) {
			x.exact[k] = append(x.exact[k], doc)
		}
	}
}

// exactKey is how a query and an exact key are compared: lower case,
// spaces trimmed and collapsed.
func exactKey(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// scored is one search result: a document and its score.
type scored struct {
	doc   int32
	score float32
}

// search scores the documents against query and returns the best limit of
// those that keep accepts, best first, ties in document order.
func (x *textIndex) search(query string, keep func(int32) bool, limit int) []scored {
	toks := Tokens(query)
	exact := x.exact[exactKey(query)]
	if len(toks) == 0 && len(exact) == 0 {
		return nil
	}
	s, _ := x.scratch.Get().(*scratch)
	if s == nil || len(s.scores) < x.n {
		s = &scratch{scores: make([]float32, x.n)}
	}
	defer func() {
		for _, d := range s.touched {
			s.scores[d] = 0
		}
		s.touched = s.touched[:0]
		x.scratch.Put(s)
	}()
	bump := func(d int32, w float32) {
		if s.scores[d] == 0 {
			s.touched = append(s.touched, d)
		}
		s.scores[d] += w
	}
	for _, tok := range toks {
		for _, p := range x.postings[tok] {
			bump(p.doc, p.weight)
		}
	}
	for _, d := range exact {
		bump(d, x.exactW)
	}
	h := make(topK, 0, limit+1)
	for _, d := range s.touched {
		if keep != nil && !keep(d) {
			continue
		}
		c := scored{doc: d, score: s.scores[d]}
		if len(h) < limit {
			heap.Push(&h, c)
		} else if better(c, h[0]) {
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	out := make([]scored, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scored)
	}
	return out
}

// better orders results: higher score first, then lower document number.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// topK is a heap whose root is the worst of the results kept.
type topK []scored

func (h topK) Len() int           { return len(h) }
func (h topK) Less(i, j int) bool { return better(h[j], h[i]) }
func (h topK) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topK) Push(v any)        { *h = append(*h, v.(scored)) }
func (h *topK) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// ClampLimit is the number of results a search with limit answers at
// most: DefaultLimit for 0 or less, never more than MaxLimit.
func ClampLimit(limit int) int { return clampLimit(limit) }

// clampLimit applies DefaultLimit and MaxLimit.
func clampLimit(limit int) int {
	switch {
	case limit <= 0:
		return DefaultLimit
	case limit > MaxLimit:
		return MaxLimit
	}
	return limit
}
