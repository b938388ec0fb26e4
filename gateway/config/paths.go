package config

import (
	"strings"
	"sync"

	"github.com/theory/jsonpath"
)

// Paths in executor values, set and prefill are JSONPath queries (RFC 9535,
// github.com/theory/jsonpath) evaluated against one document whose members
// are the scopes: {"arguments": …, "context": …, "input": …, "output": …}.
// A simple dotted path such as $.arguments.title (members of letters,
// digits, '_' and '-', separated by dots) keeps its historical reading: it
// walks objects member by member, so $.context.branch-name works although
// RFC 9535's shorthand does not admit '-'.

// simplePath reports whether member (what follows $.ROOT.) is a plain
// dotted path.
func simplePath(member string) bool {
	if member == "" {
		return false
	}
	for _, seg := range strings.Split(member, ".") {
		if seg == "" || strings.ContainsAny(seg, "[]*?'\"()@$ \t\n,:!=<>&|") {
			return false
		}
	}
	return true
}

// IsSimplePath reports whether the path s ($.ROOT.a.b) is a plain dotted
// path, which is resolved member by member without a JSONPath parser.
func IsSimplePath(s string) bool {
	rest, ok := strings.CutPrefix(s, "$.")
	if !ok {
		return false
	}
	_, member, found := strings.Cut(rest, ".")
	return found && simplePath(member)
}

// parsed caches the compiled JSONPath queries by text.
var parsed sync.Map // string -> *jsonpath.Path or error

// ParseJSONPath compiles a JSONPath query, caching the result.
func ParseJSONPath(s string) (*jsonpath.Path, error) {
	if v, ok := parsed.Load(s); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*jsonpath.Path), nil
	}
	p, err := jsonpath.Parse(s)
	if err != nil {
		parsed.Store(s, err)
		return nil, err
	}
	parsed.Store(s, p)
	return p, nil
}

// CheckJSONPath reports whether s is a valid JSONPath query.
func CheckJSONPath(s string) error {
	_, err := ParseJSONPath(s)
	return err
}
