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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

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
		// The empty object, the body of most reads: what the decoder
		// below answers for it (one value at depth one, within any
		// limits), without a decoder's allocations.
		return map[string]any{}, nil
	}
	// Check is the one judge of what is well formed, in document order:
	// the first fault a reader meets is the one reported, whichever kind
	// it is. The decoder below only builds what Check accepted (and
	// counts its values); its own syntax errors are a second guard.
	if err := Check(data, maxDepth); err != nil {
		return nil, err
	}
	d := &decoder{dec: json.NewDecoder(bytes.NewReader(data)), max: maxDepth, maxValues: l.MaxElements}
	d.dec.UseNumber()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, malformed("unexpected data after the JSON value", int(d.dec.InputOffset()))
	}
	return v, nil
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

type decoder struct {
	dec *json.Decoder
	max int
	// maxValues bounds values, the values decoded so far.
	maxValues, values int
}

func malformed(msg string, offset int) *contracts.Error {
	if offset >= 0 {
		msg = fmt.Sprintf("%s (at byte %d)", msg, offset)
	}
	return &contracts.Error{Code: contracts.CodeMalformedJSON, Message: msg}
}

func (d *decoder) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return malformed("the body is not well-formed JSON: "+se.Error(), int(se.Offset))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return malformed("the body ends before the JSON value does", int(d.dec.InputOffset()))
	}
	return malformed("the body is not well-formed JSON", int(d.dec.InputOffset()))
}

func (d *decoder) value(depth int) (any, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(err)
	}
	if d.values++; d.values > d.maxValues {
		return nil, &contracts.Error{Code: contracts.CodeRequestLimits,
			Message: fmt.Sprintf("the JSON value holds more than %d values (members, items and scalars, through every level)", d.maxValues),
			Hint:    "Send fewer items per call; the gateway's server.limits.maxElements sets the bound."}
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth+1 > d.max {
			return nil, &contracts.Error{Code: contracts.CodeRequestLimits,
				Message: fmt.Sprintf("JSON nesting exceeds %d levels", d.max)}
		}
		switch t {
		case '{':
			obj := map[string]any{}
			for d.dec.More() {
				kt, err := d.dec.Token()
				if err != nil {
					return nil, d.syntax(err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, malformed("an object member name is not a string", int(d.dec.InputOffset()))
				}
				if _, dup := obj[k]; dup {
					return nil, &contracts.Error{Code: contracts.CodeMalformedJSON,
						Message: fmt.Sprintf("duplicate member name %q (at byte %d)", truncate(k), d.dec.InputOffset())}
				}
				v, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				obj[k] = v
			}
			if _, err := d.dec.Token(); err != nil {
				return nil, d.syntax(err)
			}
			return obj, nil
		case '[':
			arr := []any{}
			for d.dec.More() {
				v, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := d.dec.Token(); err != nil {
				return nil, d.syntax(err)
			}
			return arr, nil
		default:
			return nil, malformed("unexpected "+t.String(), int(d.dec.InputOffset()))
		}
	default:
		return t, nil
	}
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
