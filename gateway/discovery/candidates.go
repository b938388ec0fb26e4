package discovery

import (
	"cmp"
	"slices"
	"strings"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/internal/editdist"
)

// This file proposes the known terms an unknown subject may have meant (the
// candidates of a SUBJECT_NEEDS_DEFINITION interaction).
//
// Every name of every term (the term, its refs and its aliases) is compared
// with the unknown subject, both by lookup key (config.TermKey: case and
// repeated spaces folded). A term is a candidate through its closest name,
// with one of these match kinds, tried in this order:
//
//	exact_alias  the names are equal once separators (space - _ . / ') are
//	             dropped too: "evidence_pack" for "evidence-pack"
//	prefix       once folded so, one is a prefix of the other and the
//	             shorter has at least MinPrefixLen runes: "evidence" for
//	             "evidence-pack"
//	fuzzy_close  the Levenshtein distance of the keys (in runes) is at most
//	             max(2, len/3), len being the rune length of the unknown
//	             subject's key: "evidence-pak" for "evidence-pack"
//
// distance is always the Levenshtein distance of the two keys. Candidates
// are ordered by match kind (as listed), then distance, then term, and at
// most MaxCandidates are returned.

// The match kinds of a candidate.
const (
	MatchExactAlias = "exact_alias"
	MatchPrefix     = "prefix"
	MatchFuzzyClose = "fuzzy_close"
)

// Candidate bounds.
const (
	MaxCandidates      = 5
	MinPrefixLen       = 3
	MinFuzzyDistance   = 2
	PreviewLen         = 80
	fuzzyDivisor       = 3
	matchRankNoneValue = 3
)

// Candidate is one known term an unknown subject may have meant.
type Candidate struct {
	Term              string `json:"term"`
	Distance          int    `json:"distance"`
	MatchKind         string `json:"match_kind"`
	DefinitionPreview string `json:"definition_preview"`
	// BoundedContext is the term's bounded context (not on the wire).
	BoundedContext string `json:"-"`
}

var matchRank = map[string]int{MatchExactAlias: 0, MatchPrefix: 1, MatchFuzzyClose: 2}

// Candidates returns the terms subject may have meant, best first.
func (l *Lexicon) Candidates(subject string) []Candidate {
	key := config.TermKey(subject)
	folded := foldSeparators(key)
	limit := max(MinFuzzyDistance, len([]rune(key))/fuzzyDivisor)
	var out []Candidate
	for _, t := range l.terms {
		best := Candidate{MatchKind: ""}
		bestRank := matchRankNoneValue
		for _, name := range append([]string{t.Term}, aliasesOf(t.Entry)...) {
			nk := config.TermKey(name)
			d := Levenshtein(key, nk)
			kind := ""
			nf := foldSeparators(nk)
			switch {
			case nf == folded:
				kind = MatchExactAlias
			case min(len([]rune(nf)), len([]rune(folded))) >= MinPrefixLen && (strings.HasPrefix(nf, folded) || strings.HasPrefix(folded, nf)):
				kind = MatchPrefix
			case d <= limit:
				kind = MatchFuzzyClose
			default:
				continue
			}
			if r := matchRank[kind]; r < bestRank || (r == bestRank && d < best.Distance) {
				bestRank = r
				best = Candidate{Term: t.Term, Distance: d, MatchKind: kind}
			}
		}
		if best.MatchKind == "" {
			continue
		}
		best.DefinitionPreview = preview(t.Entry.DefinitionShort)
		best.BoundedContext = t.Entry.BoundedContext
		out = append(out, best)
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(matchRank[a.MatchKind], matchRank[b.MatchKind]), cmp.Compare(a.Distance, b.Distance), strings.Compare(a.Term, b.Term))
	})
	if len(out) > MaxCandidates {
		out = out[:MaxCandidates]
	}
	return out
}

// foldSeparators drops the separators a term may contain.
func foldSeparators(key string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '.', '/', '\'':
			return -1
		}
		return r
	}, key)
}

// preview shortens a definition to PreviewLen runes, marking a cut with an
// ellipsis.
func preview(s string) string {
	r := []rune(s)
	if len(r) <= PreviewLen {
		return s
	}
	return strings.TrimSpace(string(r[:PreviewLen-1])) + "…"
}

// Levenshtein returns the edit distance of a and b in runes: the fewest
// insertions, deletions and substitutions that turn one into the other.
func Levenshtein(a, b string) int {
	return editdist.Distance([]rune(a), []rune(b))
}
