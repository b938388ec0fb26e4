package discovery

import (
	"reflect"
	"testing"
)

func testLexicon() *Lexicon {
	base := map[string]Entry{
		"evidence-pack": {DefinitionShort: "A structured set of artefacts that justify a decision.", BoundedContext: "swe-agent",
			Refs: []string{"evidence-packs", "evidence pack"}, Governance: "human-only"},
		"mission":   {DefinitionShort: "One run of a workflow toward a goal.", BoundedContext: "gateway", Refs: []string{"run"}},
		"PR":        {DefinitionShort: "A pull request.", Aliases: []string{"pull request", "run"}},
		"guardrail": {DefinitionShort: "A check that stops a move; see evidence."},
	}
	return NewLexicon(base, nil)
}

func TestLexiconLookup(t *testing.T) {
	l := testLexicon()
	for _, tc := range []struct{ in, term string }{
		{"evidence-pack", "evidence-pack"},
		{"Evidence  Pack", "evidence-pack"}, // a ref, any case and spacing
		{"evidence-packs", "evidence-pack"},
		{"pr", "PR"},
		{"Pull Request", "PR"}, // an alias
		// Two terms claim run: the first in key order (mission < pr) wins.
		{"run", "mission"},
	} {
		got, ok := l.Lookup(tc.in)
		if !ok || got.Term != tc.term {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.in, got.Term, ok, tc.term)
		}
	}
	if _, ok := l.Lookup("evidence-foo"); ok {
		t.Error("an unknown term was found")
	}
	if owner, ok := l.AliasOf("evidence pack"); !ok || owner.Term != "evidence-pack" {
		t.Errorf("AliasOf(evidence pack) = %+v, %v", owner, ok)
	}
	if _, ok := l.AliasOf("mission"); ok {
		t.Error("a term is not an alias")
	}
}

// TestLexiconOverlay: an overlay term replaces the configuration's term
// of the same key, its aliases win a contested claim, and new terms join.
func TestLexiconOverlay(t *testing.T) {
	base := map[string]Entry{
		"mission": {DefinitionShort: "config", Refs: []string{"run"}},
		"PR":      {DefinitionShort: "A pull request."},
	}
	l := NewLexicon(base, []Term{
		{Term: "Mission", Entry: Entry{DefinitionShort: "overlay"}},
		{Term: "workflow", Entry: Entry{DefinitionShort: "A state machine.", Aliases: []string{"run", "pr"}}},
	})
	if l.Len() != 3 {
		t.Errorf("Len = %d, want 3", l.Len())
	}
	if got, _ := l.Lookup("mission"); got.Entry.DefinitionShort != "overlay" || !got.Overlay || got.Term != "Mission" {
		t.Errorf("mission = %+v", got)
	}
	if got, _ := l.Lookup("run"); got.Term != "workflow" {
		t.Errorf("run answers %q, want the overlay's workflow", got.Term)
	}
	// A term name is never an alias, even when the overlay claims it.
	if got, _ := l.Lookup("PR"); got.Term != "PR" {
		t.Errorf("PR answers %q", got.Term)
	}
}

func TestLexiconSearch(t *testing.T) {
	l := testLexicon()
	terms := func(hs []LexiconHit) []string {
		out := []string{}
		for _, h := range hs {
			out = append(out, h.Term)
		}
		return out
	}
	for _, tc := range []struct {
		query string
		limit int
		want  []string
	}{
		// evidence-pack: term tokens, refs and definition; guardrail: its
		// definition only.
		{"evidence", 0, []string{"evidence-pack", "guardrail"}},
		{"evidence pack", 0, []string{"evidence-pack", "guardrail"}},
		{"pull request", 0, []string{"PR"}},
		{"gateway", 0, []string{"mission"}},
		{"", 0, []string{"evidence-pack", "guardrail", "mission", "PR"}},
		{"", 2, []string{"evidence-pack", "guardrail"}},
		{"nothing", 0, []string{}},
	} {
		if got := terms(l.Search(tc.query, tc.limit)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Search(%q, %d) = %v, want %v", tc.query, tc.limit, got, tc.want)
		}
	}
	// A hit is the entry with its term.
	h := l.Search("human-only evidence", 1)[0]
	if h.Term != "evidence-pack" || h.BoundedContext != "swe-agent" || h.Governance != "human-only" || len(h.Refs) != 2 {
		t.Errorf("hit %+v", h)
	}
}
