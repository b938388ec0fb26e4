// Package plainjson encodes the values a decoded JSON document is made of
// (nil, booleans, strings, float64s, ints, map[string]any, []any), and the
// json.RawMessage and contracts.Link values the gateway's results and
// events hold among them, to json.Marshal's bytes in one pass without
// reflection; any other value inside them goes through json.Marshal. The
// MCP edge encodes tool results with it (mcpadapter) and the stores an
// event's attributes (sqltx).
package plainjson

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/praxa/praxa/contracts"
)

// Append appends json.Marshal(v)'s bytes to b. It reports false, having
// appended part of v (the caller truncates b), where json.Marshal fails:
// a value that does not encode, or a cycle (v nests deeper than
// maxDepth; json.Marshal reports it).
func Append(b *bytes.Buffer, v any) bool {
	return appendPlain(b, v, 0)
}

// Marshal is json.Marshal(v).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if appendPlain(&b, v, 0) {
		return b.Bytes(), nil
	}
	return json.Marshal(v) // its error
}

// appendRaw appends raw as json.Marshal encodes a json.RawMessage:
// compacted and HTML-escaped.
func appendRaw(b *bytes.Buffer, raw json.RawMessage) bool {
	mark := b.Len()
	if err := json.Compact(b, raw); err != nil {
		b.Truncate(mark)
		return false
	}
	if bytes.ContainsAny(b.Bytes()[mark:], "<>&\u2028\u2029") {
		compact := bytes.Clone(b.Bytes()[mark:])
		b.Truncate(mark)
		json.HTMLEscape(b, compact)
	}
	return true
}

// appendPlain appends json.Marshal(v)'s bytes, in one pass without
// reflection over the values a decoded JSON document is made of (nil,
// booleans, strings, float64s, ints, map[string]any, []any) and through
// json.Marshal for any other value inside them. It reports false, having
// appended part of v, when a value does not encode (as json.Marshal fails)
// or v nests deeper than maxDepth (a cycle: json.Marshal reports it).
func appendPlain(b *bytes.Buffer, v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.Write(strconv.AppendBool(b.AvailableBuffer(), v))
	case string:
		b.Write(AppendString(b.AvailableBuffer(), v))
	case float64:
		out, ok := appendFloat(b.AvailableBuffer(), v)
		if !ok {
			return false
		}
		b.Write(out)
	case int:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), int64(v), 10))
	case int64:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), v, 10))
	case map[string]any:
		if v == nil {
			b.WriteString("null")
			return true
		}
		var room [16]string
		keys := room[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(AppendString(b.AvailableBuffer(), k))
			b.WriteByte(':')
			if !appendPlain(b, v[k], depth+1) {
				return false
			}
		}
		b.WriteByte('}')
	case []any:
		if v == nil {
			b.WriteString("null")
			return true
		}
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if !appendPlain(b, x, depth+1) {
				return false
			}
		}
		b.WriteByte(']')
	case json.RawMessage:
		if v == nil {
			b.WriteString("null")
			return true
		}
		return appendRaw(b, v)
	case []contracts.Link:
		if v == nil {
			b.WriteString("null")
			return true
		}
		b.WriteByte('[')
		for i := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if !appendLink(b, &v[i], depth+1) {
				return false
			}
		}
		b.WriteByte(']')
	default:
		out, err := json.Marshal(v)
		if err != nil {
			return false
		}
		b.Write(out)
	}
	return true
}

// appendLink appends json.Marshal(*l)'s bytes: contracts.Link's members
// in its fields' order, those tagged omitempty left out when empty
// (TestAppendLink holds it to json.Marshal with every field set).
func appendLink(b *bytes.Buffer, l *contracts.Link, depth int) bool {
	member := func(name string) {
		b.WriteString(`,"`)
		b.WriteString(name)
		b.WriteString(`":`)
	}
	b.WriteString(`{"rel":`)
	b.Write(AppendString(b.AvailableBuffer(), l.Rel))
	if l.Title != "" {
		member("title")
		b.Write(AppendString(b.AvailableBuffer(), l.Title))
	}
	if len(l.Description) > 0 {
		member("description")
		if !appendRaw(b, l.Description) {
			return false
		}
	}
	member("method")
	b.Write(AppendString(b.AvailableBuffer(), l.Method))
	if l.Actor != "" {
		member("actor")
		b.Write(AppendString(b.AvailableBuffer(), l.Actor))
	}
	member("args")
	if !appendPlain(b, l.Args, depth+1) {
		return false
	}
	if len(l.InputSchema) > 0 {
		member("inputSchema")
		if !appendRaw(b, l.InputSchema) {
			return false
		}
	}
	if len(l.InputSchemaSnake) > 0 {
		member("input_schema")
		if !appendRaw(b, l.InputSchemaSnake) {
			return false
		}
	}
	if l.Hint != "" {
		member("hint")
		b.Write(AppendString(b.AvailableBuffer(), l.Hint))
	}
	b.WriteByte('}')
	return true
}

// maxDepth bounds appendPlain's nesting, as json.Marshal's own
// bound finds a cycle.
const maxDepth = 1000

// appendFloat appends f as encoding/json encodes a float64; ok is false
// for a value it refuses (NaN, ±Inf).
func appendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 as e-9, as encoding/json writes it.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// AppendString appends s as encoding/json encodes a string, HTML escaping
// on: quoted, \b \f \n \r \t and \" \\ as such, other control bytes,
// <, > and & as \u00XX, U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
