package httpapi

import "testing"

// TestAcceptsAny: RFC 9110 section 12.5.1 as /v8 reads it, for its two
// answer types.
func TestAcceptsAny(t *testing.T) {
	for _, tc := range []struct {
		accept string
		ok     bool
	}{
		{"application/json", true},
		{"application/problem+json", true},
		{"*/*", true},
		{"application/*", true},
		{"APPLICATION/JSON", true},
		{"application/json; charset=utf-8", true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true}, // a browser
		{"application/xml", false},
		{"text/html", false},
		{"application/xml, text/*", false},
		{"application/vnd.api+json", false},
		{"application/json-seq", false},
		{"application/*+json", true}, // a structured syntax suffix matches problem+json
		{"application/*+xml", false},
		{"application/json;q=0", false},
		{"application/json;q=0, application/problem+json;q=0", false},
		{"*/*;q=0", false},
		{"application/*;q=0", false},
		{"application/*;q=0, application/json", true}, // the specific range wins
		{"application/json;q=0, */*", true},           // problem+json through */*
		{"application/json;q=0, application/*+json;q=0.1", true},
		{"*/*;q=0.001", true},
		{"application/json;q=0.000", false},
		{"application/json;Q=0", false},
		{"application/json;level=1;q=0", false},
		{"application/json;q=0;ext=1", false},
		{"application/json; q=0.5", true},
		// Elements that are no media range, or have a q out of grammar,
		// are ignored; a header of only those counts as absent.
		{"", true},
		{",", true},
		{"garbage", true},
		{"application/json;q=2", true},
		{"application/xml, garbage", false},
		{"application/xml, application/json;q=NaN", false},
		{"application/xml, application/json;q=1.5", false},
		{"application/xml, application/json;q=0.5000", false},
		{"application/xml, */json", false},
		{"application/xml, application/json;q=1.000", true},
		{"application/xml, application/json;q=.5", false},
	} {
		if got := acceptsAny([]string{tc.accept}, answerTypes); got != tc.ok {
			t.Errorf("Accept %q: %v, want %v", tc.accept, got, tc.ok)
		}
	}
	// Several fields are one list.
	if !acceptsAny([]string{"application/xml", "application/json"}, answerTypes) {
		t.Error("two Accept fields: the second's application/json is not seen")
	}
	if acceptsAny([]string{"application/xml", "application/json;q=0"}, answerTypes) {
		t.Error("two Accept fields: application/json;q=0 is not seen")
	}
}
