// Package strictjson decodes request bodies and tool arguments strictly:
// one JSON value, no trailing data, no duplicate member names, valid UTF-8
// (raw bytes and \u escapes alike), and nesting no deeper than a bound.
// Go's encoding/json accepts all of these by default; every surface of the
// gateway decodes through this package so they refuse the same inputs.
//
// Numbers decode as json.Number, so no precision is lost and the JSON Schema
// validator sees them exactly.
package strictjson

import (
	"fmt"

	"github.com/praxa/praxa/contracts"
)

// The bounds used when none is given.
const (
	DefaultMaxDepth    = 32
	DefaultMaxElements = 20000
)

// Limits bound what one decoded value may hold: nesting (MaxDepth) and the
// number of JSON values through every level, members' values, items and
// the root included (MaxElements). Zero takes the default.
type Limits struct {
	MaxDepth, MaxElements int
	// Float64 decodes numbers as float64, as encoding/json decodes them
	// into an any without UseNumber (json.Number otherwise); a number
	// beyond float64's range is then refused as malformed-json, where
	// encoding/json fails too.
	Float64 bool
}

// Decode parses data as exactly one JSON value. Failures are
// *contracts.Error values: malformed-json for syntax, duplicate names and
// invalid UTF-8; request-limits for nesting deeper than maxDepth or more
// than DefaultMaxElements values.
func Decode(data []byte, maxDepth int) (any, error) {
	return DecodeWith(data, Limits{MaxDepth: maxDepth})
}

// DecodeWith is Decode under the limits l.
func DecodeWith(data []byte, l Limits) (any, error) {
	maxDepth := l.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if l.MaxElements <= 0 {
		l.MaxElements = DefaultMaxElements
	}
	if emptyObject(data) {
		// The empty object, the body of most reads: what Check and build
		// below answer for it (one value at depth one, within any
		// limits), without reading it twice.
		return map[string]any{}, nil
	}
	// Check is the one judge of what is well formed, in document order:
	// the first fault a reader meets is the one reported, whichever kind
	// it is. build only builds what Check accepted (and counts its
	// values); its own errors are a second guard.
	if err := Check(data, maxDepth); err != nil {
		return nil, err
	}
	return build(data, l.MaxElements, l.Float64)
}

// DecodeObject is Decode for a value that must be a JSON object.
func DecodeObject(data []byte, maxDepth int) (map[string]any, error) {
	return DecodeObjectWith(data, Limits{MaxDepth: maxDepth})
}

// DecodeObjectWith is DecodeWith for a value that must be a JSON object.
func DecodeObjectWith(data []byte, l Limits) (map[string]any, error) {
	v, err := DecodeWith(data, l)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the body must be a JSON object",
			Fields: []contracts.FieldError{{Pointer: "", Keyword: "type", Detail: "must be of type object"}}}
	}
	return m, nil
}

// emptyObject reports whether data is an empty JSON object: { and },
// with nothing but JSON whitespace around and between them.
func emptyObject(data []byte) bool {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i == len(data) || data[i] != '}' {
		return false
	}
	return skipSpace(data, i+1) == len(data)
}

// skipSpace returns the index of the first byte of data at or after i that
// is not JSON whitespace (RFC 8259: space, tab, line feed, carriage
// return), or len(data).
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

func malformed(msg string, offset int) *contracts.Error {
	if offset >= 0 {
		msg = fmt.Sprintf("%s (at byte %d)", msg, offset)
	}
	return &contracts.Error{Code: contracts.CodeMalformedJSON, Message: msg}
}

func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}
