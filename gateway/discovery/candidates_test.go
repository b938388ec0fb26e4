package discovery

import (
	"fmt"
	"testing"
)

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"evidence-foo", "evidence-pack", 4}, {"flaw", "lawn", 2}, {"über", "uber", 1},
	} {
		if got := Levenshtein(c.a, c.b); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Levenshtein(c.b, c.a); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}

func TestCandidates(t *testing.T) {
	lex := NewLexicon(map[string]Entry{
		"evidence-pack": {DefinitionShort: "A structured set of artefacts that justify a decision, kept with the mission so that a reviewer can follow it.", BoundedContext: "swe-agent", Refs: []string{"evidence pack"}},
		"mission":       {DefinitionShort: "One run of a workflow.", BoundedContext: "gateway", Refs: []string{"workflow instance"}},
		"zebra":         {DefinitionShort: "Unrelated."},
	}, nil)
	show := func(cs []Candidate) string {
		s := ""
		for _, c := range cs {
			s += fmt.Sprintf("%s/%d/%s ", c.Term, c.Distance, c.MatchKind)
		}
		return s
	}
	for _, c := range []struct{ subject, want string }{
		{"evidence_pack", "evidence-pack/1/exact_alias "},
		{"Evidence", "evidence-pack/5/prefix "},
		{"evidence-foo", "evidence-pack/4/fuzzy_close "},
		{"misson", "mission/1/fuzzy_close "},
		{"workflow instanse", "mission/1/fuzzy_close "},
		{"quantum", ""},
		{"ze", ""},
	} {
		if got := show(lex.Candidates(c.subject)); got != c.want {
			t.Errorf("Candidates(%q) = %q, want %q", c.subject, got, c.want)
		}
	}
	cs := lex.Candidates("evidence-foo")
	if len(cs) != 1 || cs[0].BoundedContext != "swe-agent" || len([]rune(cs[0].DefinitionPreview)) != PreviewLen || cs[0].DefinitionPreview[len(cs[0].DefinitionPreview)-len("…"):] != "…" {
		t.Errorf("preview = %q (%d runes)", cs[0].DefinitionPreview, len([]rune(cs[0].DefinitionPreview)))
	}
}

func TestIndexWithSkills(t *testing.T) {
	x, err := New([]Item{{ID: "deploy", Kind: KindWorkflow}})
	if err != nil {
		t.Fatal(err)
	}
	y, skipped, err := x.With([]Item{{ID: "deploy", Kind: KindSkill}, {ID: "checklist", Kind: KindSkill, Title: "Deploy checklist"}, {ID: "checklist", Kind: KindSkill}})
	if err != nil || fmt.Sprint(skipped) != "[deploy checklist]" || y.Len() != 2 || x.Len() != 1 {
		t.Fatalf("With: %v %v %d", skipped, err, y.Len())
	}
	if it, ok := y.Lookup("deploy"); !ok || it.Kind != KindWorkflow {
		t.Errorf("the first claim of an id lost: %+v", it)
	}
	hits := y.Search(Query{Text: "deploy", Kinds: []Kind{KindSkill}})
	if len(hits) != 1 || hits[0].Item.ID != "checklist" {
		t.Errorf("skill search: %+v", hits)
	}
	if SkillItems(nil) != nil {
		t.Error("a nil catalogue has items")
	}
}
