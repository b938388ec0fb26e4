package config

import (
	"regexp"
	"strings"
)

// LexiconEntry is one term of the lexicon section. The member names follow
// the stored lexicon entry of the praxec surface (snake case), so an entry
// reads the same in praxec.yaml and in a lookup answer.
type LexiconEntry struct {
	// DefinitionShort is the one-sentence definition; required.
	DefinitionShort string `json:"definition_short"`
	// BoundedContext names the context the term is defined in.
	BoundedContext string `json:"bounded_context,omitempty"`
	// Refs are synonyms: a lookup of any of them answers this term.
	Refs []string `json:"refs,omitempty"`
	// Governance says who may change the term (human-only, ...).
	Governance string `json:"governance,omitempty"`
	// Aliases are further names of the term, as link_as_alias adds them.
	Aliases []string `json:"aliases,omitempty"`
}

// termPattern is the pattern of schema.json's term: a lexicon term, ref or
// alias starts with a letter or a digit and goes on with letters, digits,
// spaces and . _ ' / + -, up to 128 characters.
const termPattern = `^[\p{L}\p{N}][\p{L}\p{N} ._'/+-]{0,127}$`

var termRE = regexp.MustCompile(termPattern)

// TermKey is the key lexicon terms are matched by: lower case, spaces
// trimmed and runs of spaces collapsed. "Evidence  Pack" and
// "evidence pack" name one term.
func TermKey(term string) string {
	return strings.ToLower(strings.Join(strings.Fields(term), " "))
}

// ValidTerm reports whether s may name a lexicon term, ref or alias.
func ValidTerm(s string) bool { return termRE.MatchString(s) }
