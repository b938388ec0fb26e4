package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/praxa/praxa/contracts"
)

// ErrDuplicateName is the cause (errors.Is) of the error Check returns for
// an object that names a member twice: a structural fault of a document
// that is otherwise well-formed, which a caller may answer apart from a
// syntax error (JSON-RPC: invalid request, not parse error).
var ErrDuplicateName = errors.New("strictjson: duplicate member name")

// manyNames is how many members an object holds before Check finds
// duplicates with a map rather than by comparing each name with the
// names before it.
const manyNames = 16

// Check reports whether data is exactly one JSON value under Decode's
// rules (well-formed, nothing after it, no duplicate member names compared
// after unescaping, valid UTF-8 and no unpaired surrogate escape), nested
// at most maxDepth deep (<= 0: DefaultMaxDepth), without building it and
// without counting its values. It walks data once, without recursion, and
// allocates only for objects of many members and for names with escapes:
// it is what a reader of a document's outer members (Members, String)
// runs first, so that it may then read them as plain text.
//
// Failures are *contracts.Error values: malformed-json for syntax, invalid
// UTF-8 and duplicate names (the last with ErrDuplicateName as cause),
// request-limits for nesting deeper than maxDepth.
func Check(data []byte, maxDepth int) error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if !utf8.Valid(data) {
		return malformed("the body is not valid UTF-8", -1)
	}
	s := scanner{data: data, max: maxDepth}
	return s.run()
}

// frame is an open object or array.
type frame struct {
	object bool
	// names is where this object's names start among the open objects'
	// names.
	names int
	// set holds the names once there are more than manyNames.
	set map[string]struct{}
}

// scanner is Check's state: where it is in data. The open objects and
// arrays, and the names of the open objects, are run's (on its stack
// while they are few).
type scanner struct {
	data []byte
	i    int
	max  int
}

func (s *scanner) syntax(what string) error {
	if s.i >= len(s.data) {
		return malformed("the body ends before the JSON value does", len(s.data))
	}
	return malformed(fmt.Sprintf("the body is not well-formed JSON: %s %q", what, s.data[s.i]), s.i)
}

func (s *scanner) space() { s.i = skipSpace(s.data, s.i) }

// run checks the whole document: a value, then only whitespace.
func (s *scanner) run() error {
	// Most documents nest a few levels and name a few dozen members: room
	// for them without a heap allocation. names are the member names of
	// the open objects, unescaped.
	var stackRoom [16]frame
	var namesRoom [64][]byte
	stack, names := stackRoom[:0], namesRoom[:0]
	var err error
	for {
		// A value begins at s.i (after whitespace).
		s.space()
		if s.i >= len(s.data) {
			return s.syntax("")
		}
		switch c := s.data[s.i]; {
		case c == '{' || c == '[':
			if len(stack)+1 > s.max {
				return &contracts.Error{Code: contracts.CodeRequestLimits,
					Message: fmt.Sprintf("JSON nesting exceeds %d levels", s.max)}
			}
			stack = append(stack, frame{object: c == '{', names: len(names)})
			s.i++
			s.space()
			if s.i < len(s.data) && (s.data[s.i] == '}' && c == '{' || s.data[s.i] == ']' && c == '[') {
				s.i++
				stack, names = pop(stack, names)
				break
			}
			if c == '{' {
				if names, err = s.name(names, &stack[len(stack)-1]); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if _, err := s.str(); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			if err := s.number(); err != nil {
				return err
			}
		case c == 't':
			if err := s.literal("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.literal("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.literal("null"); err != nil {
				return err
			}
		default:
			return s.syntax("unexpected character looking for a value:")
		}
		// A value ended: close what it ends, then expect the next one.
		for {
			s.space()
			if len(stack) == 0 {
				if s.i != len(s.data) {
					return malformed("unexpected data after the JSON value", s.i)
				}
				return nil
			}
			if s.i >= len(s.data) {
				return s.syntax("")
			}
			top := &stack[len(stack)-1]
			c := s.data[s.i]
			if c == '}' && top.object || c == ']' && !top.object {
				s.i++
				stack, names = pop(stack, names)
				continue
			}
			if c != ',' {
				return s.syntax("unexpected character after a value:")
			}
			s.i++
			if top.object {
				if names, err = s.name(names, top); err != nil {
					return err
				}
			}
			break
		}
	}
}

// pop closes the innermost object or array.
func pop(stack []frame, names [][]byte) ([]frame, [][]byte) {
	return stack[:len(stack)-1], names[:stack[len(stack)-1].names]
}

// name reads a member name of the open object top and the colon after it,
// refusing a name the object already holds; names are the open objects'
// names, to which it adds this one.
func (s *scanner) name(names [][]byte, top *frame) ([][]byte, error) {
	s.space()
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return names, s.syntax("an object member name is not a string:")
	}
	start := s.i
	escaped, err := s.str()
	if err != nil {
		return names, err
	}
	key := s.data[start+1 : s.i-1]
	if escaped {
		var ok bool
		if key, ok = appendUnquoted(make([]byte, 0, len(key)), key); !ok {
			return names, malformed("the body is not well-formed JSON: a member name Check read cannot be unescaped", start)
		}
	}
	dup := false
	switch held := names[top.names:]; {
	case top.set != nil:
		_, dup = top.set[string(key)]
		top.set[string(key)] = struct{}{}
	case len(held) >= manyNames:
		top.set = make(map[string]struct{}, 2*manyNames)
		for _, n := range held {
			top.set[string(n)] = struct{}{}
		}
		_, dup = top.set[string(key)]
		top.set[string(key)] = struct{}{}
	default:
		for _, n := range held {
			if bytes.Equal(n, key) {
				dup = true
				break
			}
		}
	}
	if dup {
		return names, &contracts.Error{Code: contracts.CodeMalformedJSON, Cause: ErrDuplicateName,
			Message: fmt.Sprintf("duplicate member name %q (at byte %d)", truncate(string(key)), s.i)}
	}
	if top.set == nil {
		names = append(names, key)
	}
	s.space()
	if s.i >= len(s.data) || s.data[s.i] != ':' {
		return names, s.syntax("a member name is not followed by a colon:")
	}
	s.i++
	return names, nil
}

// str reads a string from its opening quote at s.i to past its closing
// one; escaped reports whether it holds a backslash escape.
func (s *scanner) str() (escaped bool, err error) {
	s.i++
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return escaped, nil
		case c < 0x20:
			return false, s.syntax("a control character in a string:")
		case c == '\\':
			escaped = true
			_, n, lone := escape(s.data, s.i)
			switch {
			case n == 0 && s.i+1 >= len(s.data):
				s.i++
				return false, s.syntax("")
			case n == 0 && s.data[s.i+1] == 'u':
				s.i += 2
				return false, s.syntax("an invalid \\u escape:")
			case n == 0:
				s.i++
				return false, s.syntax("an invalid escape:")
			case lone:
				return false, malformed("a string holds an unpaired UTF-16 surrogate escape", s.i)
			}
			s.i += n
		default:
			s.i++
		}
	}
	return false, s.syntax("")
}

// escape reads the escape that begins at s[i], a backslash, as
// encoding/json reads it: the rune it stands for and its length in s (12
// for a surrogate pair's two \\u escapes, 6 for one, 2 for the others); n
// is 0 where no valid escape begins there. A \\u escape of half a
// surrogate pair not followed by the other half is lone and stands, as
// in encoding/json, for U+FFFD (Check refuses it).
func escape(s []byte, i int) (r rune, n int, lone bool) {
	if i+1 >= len(s) {
		return 0, 0, false
	}
	switch c := s[i+1]; c {
	case '"', '\\', '/':
		return rune(c), 2, false
	case 'b':
		return '\b', 2, false
	case 'f':
		return '\f', 2, false
	case 'n':
		return '\n', 2, false
	case 'r':
		return '\r', 2, false
	case 't':
		return '\t', 2, false
	case 'u':
	default:
		return 0, 0, false
	}
	r, ok := hex4(s, i+2)
	switch {
	case !ok:
		return 0, 0, false
	case r < 0xD800 || r > 0xDFFF:
		return r, 6, false
	case r <= 0xDBFF && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u':
		if lo, ok := hex4(s, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return utf16.DecodeRune(r, lo), 12, false
		}
	}
	return utf8.RuneError, 6, true
}

// appendUnquoted appends to dst the value of s, the text between a JSON
// string's quotes, as encoding/json decodes it: escapes replaced, and
// invalid UTF-8 and lone surrogate escapes each replaced by U+FFFD; ok is
// false where s is no string's text (a quote, a control character or an
// invalid escape in it). Check, Members and Decode's builder read every
// escaped string through it.
func appendUnquoted(dst, s []byte) (_ []byte, ok bool) {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		switch c := s[i]; {
		case c == '\\':
			r, n, _ := escape(s, i)
			if n == 0 {
				return dst, false
			}
			dst = utf8.AppendRune(dst, r)
			i += n
		case c == '"' || c < 0x20:
			return dst, false
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, r)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst, true
}

// number reads a number (RFC 8259: -? int frac? exp?).
func (s *scanner) number() error {
	if s.data[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.data) && s.data[s.i] == '0':
		s.i++
	case s.i < len(s.data) && s.data[s.i] >= '1' && s.data[s.i] <= '9':
		s.digits()
	default:
		return s.syntax("a number without digits:")
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if !s.digits() {
			return s.syntax("a fraction without digits:")
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return s.syntax("an exponent without digits:")
		}
	}
	return nil
}

// digits reads one or more decimal digits, reporting whether it read any.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.data[s.i:], []byte(word)) {
		return s.syntax("an invalid literal:")
	}
	s.i += len(word)
	return nil
}

// Members yields the members of obj, a JSON object that Check accepted,
// in order: each name, unescaped (a subslice of obj when it holds no
// escape: compare it as string(name), which copies nothing), and the raw
// text of its value. It reads nothing else: on a value that is not an
// object it yields nothing, and on text Check refused it stops where it
// loses its way, without panicking.
func Members(obj []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		i := skipSpace(obj, 0)
		if i >= len(obj) || obj[i] != '{' {
			return
		}
		i = skipSpace(obj, i+1)
		for i < len(obj) && obj[i] == '"' {
			end := skipValue(obj, i)
			name, ok := unquote(obj[i:end])
			if !ok {
				return
			}
			i = skipSpace(obj, end)
			if i >= len(obj) || obj[i] != ':' {
				return
			}
			start := skipSpace(obj, i+1)
			end = skipValue(obj, start)
			if end <= start || !yield(name, obj[start:end]) {
				return
			}
			i = skipSpace(obj, end)
			if i >= len(obj) || obj[i] != ',' {
				return
			}
			i = skipSpace(obj, i+1)
		}
	}
}

// Elements yields the raw text of each element of arr, a JSON array that
// Check accepted, in order; on anything else it behaves as Members does.
func Elements(arr []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		i := skipSpace(arr, 0)
		if i >= len(arr) || arr[i] != '[' {
			return
		}
		i = skipSpace(arr, i+1)
		for i < len(arr) && arr[i] != ']' {
			end := skipValue(arr, i)
			if end <= i || !yield(arr[i:end]) {
				return
			}
			i = skipSpace(arr, end)
			if i >= len(arr) || arr[i] != ',' {
				return
			}
			i = skipSpace(arr, i+1)
		}
	}
}

// String returns the value of raw, the text of a JSON string that Check
// accepted (as Members yields it); ok is false when raw is not a string.
func String(raw []byte) (s string, ok bool) {
	b, ok := unquote(raw)
	return string(b), ok
}

// unquote is String as bytes: a subslice of raw when it holds no escape.
func unquote(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], true
	}
	return appendUnquoted(make([]byte, 0, len(raw)), raw[1:len(raw)-1])
}

// skipValue returns the end of the value that starts at data[i], in text
// Check accepted: past a string's closing quote, an object's or array's
// closing bracket, or a number's or literal's last character.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(data)
	default:
		for i < len(data) && scalarByte(data[i]) {
			i++
		}
		return i
	}
}

// skipString returns the end of the string whose opening quote is at
// data[i].
func skipString(data []byte, i int) int {
	for i++; i < len(data); {
		switch data[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return len(data)
}

// scalarByte reports whether c may be part of a number or of a literal
// (true, false, null).
func scalarByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == 'E'
}
