package discovery

import (
	"maps"
	"slices"
	"strings"

	"github.com/praxa/praxa/gateway/config"
)

// Entry is a lexicon entry, stored and answered with the members of
// config.LexiconEntry (definition_short, bounded_context, refs, governance,
// aliases).
type Entry = config.LexiconEntry

// Term is a term with its entry.
type Term struct {
	// Term is the term as it was defined.
	Term  string
	Entry Entry
	// Overlay says the term comes from the run-time overlay rather than
	// the configuration.
	Overlay bool
}

// LexiconHit is one result of a lexicon search: the entry with its term
// added, as the praxec surface answers it.
type LexiconHit struct {
	Term string `json:"term"`
	Entry
}

// Lexicon is a merged, immutable view of the lexicon: the configuration's
// terms and the overlay's. It is safe for concurrent use.
type Lexicon struct {
	terms []Term           // by key
	keys  []string         // TermKey of terms[i]
	byKey map[string]int32 // term key -> index
	alias map[string]int32 // ref or alias key -> index of the term claiming it
	text  *textIndex
}

// NewLexicon merges the configuration's terms (base, keyed by term) with the
// overlay's: an overlay term replaces the base term of the same key.
func NewLexicon(base map[string]Entry, overlay []Term) *Lexicon {
	byKey := map[string]Term{}
	for t, e := range base {
		byKey[config.TermKey(t)] = Term{Term: t, Entry: e}
	}
	for _, t := range overlay {
		t.Overlay = true
		byKey[config.TermKey(t.Term)] = t
	}
	l := &Lexicon{byKey: make(map[string]int32, len(byKey)), alias: map[string]int32{}, text: newTextIndex(ExactTermWeight)}
	l.keys = slices.Sorted(maps.Keys(byKey))
	for i, k := range l.keys {
		l.terms = append(l.terms, byKey[k])
		l.byKey[k] = int32(i)
	}
	// Alias claims: the overlay's first, then the configuration's, each in
	// key order; a term name is never an alias.
	for _, overlayPass := range []bool{true, false} {
		for i, t := range l.terms {
			if t.Overlay != overlayPass {
				continue
			}
			for _, a := range aliasesOf(t.Entry) {
				ak := config.TermKey(a)
				if _, isTerm := l.byKey[ak]; isTerm {
					continue
				}
				if _, claimed := l.alias[ak]; !claimed {
					l.alias[ak] = int32(i)
				}
			}
		}
	}
	for i, t := range l.terms {
		exact := []string{t.Term}
		for _, a := range aliasesOf(t.Entry) {
			if j, ok := l.alias[config.TermKey(a)]; ok && j == int32(i) {
				exact = append(exact, a)
			}
		}
		l.text.add(int32(i), []field{
			{TermTokenWeight, []string{t.Term}},
			{RefTokenWeight, aliasesOf(t.Entry)},
			{ContextTokenWeight, []string{t.Entry.BoundedContext}},
			{DefinitionTokenWeight, []string{t.Entry.DefinitionShort}},
		}, exact)
	}
	return l
}

// aliasesOf returns the refs and aliases of e.
func aliasesOf(e Entry) []string {
	return append(slices.Clone(e.Refs), e.Aliases...)
}

// Len returns the number of terms.
func (l *Lexicon) Len() int { return len(l.terms) }

// Terms returns every term in key order.
func (l *Lexicon) Terms() []Term { return slices.Clone(l.terms) }

// Lookup returns the term that term names: itself, or the term one of whose
// refs or aliases it is.
func (l *Lexicon) Lookup(term string) (Term, bool) {
	k := config.TermKey(term)
	if i, ok := l.byKey[k]; ok {
		return l.terms[i], true
	}
	if i, ok := l.alias[k]; ok {
		return l.terms[i], true
	}
	return Term{}, false
}

// AliasOf returns the term that claims term as a ref or an alias, when term
// is not itself a term.
func (l *Lexicon) AliasOf(term string) (Term, bool) {
	k := config.TermKey(term)
	if _, isTerm := l.byKey[k]; isTerm {
		return Term{}, false
	}
	if i, ok := l.alias[k]; ok {
		return l.terms[i], true
	}
	return Term{}, false
}

// RankedTerm is a term a search found, with its score (see the package
// documentation; 0 in a blank query's listing).
type RankedTerm struct {
	Term
	Score float64
}

// Rank ranks the terms against query, best first, with their scores; a
// blank query lists the terms in key order. It is Search with the scores,
// for a search that ranks terms among the catalogue's items.
func (l *Lexicon) Rank(query string, limit int) []RankedTerm {
	limit = clampLimit(limit)
	var out []RankedTerm
	if strings.TrimSpace(query) == "" {
		for _, t := range l.terms[:min(limit, len(l.terms))] {
			out = append(out, RankedTerm{Term: t})
		}
		return out
	}
	for _, r := range l.text.search(query, nil, limit) {
		out = append(out, RankedTerm{Term: l.terms[r.doc], Score: float64(r.score)})
	}
	return out
}

// Search ranks the terms against query, best first (see the package
// documentation); a blank query lists the terms in key order.
func (l *Lexicon) Search(query string, limit int) []LexiconHit {
	var out []LexiconHit
	for _, r := range l.Rank(query, limit) {
		out = append(out, LexiconHit{Term: r.Term.Term, Entry: r.Entry})
	}
	return out
}
