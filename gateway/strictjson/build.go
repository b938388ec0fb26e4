package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/praxa/praxa/contracts"
)

// build returns the value of data, text Check accepted, as encoding/json
// decodes it into an any with UseNumber: map[string]any, []any (neither
// nil when empty), string, json.Number, bool and nil. It reads data once,
// without recursion, and refuses more than maxValues values (members'
// values, items and scalars through every level, the root included).
// With floats, numbers are float64s instead (Limits.Float64).
//
// It relies on Check's verdict: on text Check refuses it returns a
// malformed-json error where it loses its way (or a value for a text it
// happens to read), never a panic.
func build(data []byte, maxValues int, floats bool) (any, error) {
	b := builder{data: data}
	// The open objects and arrays, and their members and items read so
	// far: room for a few levels and a few dozen values on the stack. A
	// container is built, at its exact size, when it closes.
	var framesRoom [16]buildFrame
	var valuesRoom [32]any
	var namesRoom [32]string
	frames, values, names := framesRoom[:0], valuesRoom[:0], namesRoom[:0]
	count := 0
	for {
		// A value begins at b.i (after whitespace).
		b.i = skipSpace(data, b.i)
		if b.i >= len(data) {
			return nil, b.lost()
		}
		if count++; count > maxValues {
			return nil, tooManyValues(maxValues)
		}
		var v any
		switch c := data[b.i]; c {
		case '{', '[':
			frames = append(frames, buildFrame{object: c == '{', values: len(values), names: len(names)})
			b.i = skipSpace(data, b.i+1)
			if b.i < len(data) && (c == '{' && data[b.i] == '}' || c == '[' && data[b.i] == ']') {
				b.i++
				frames = frames[:len(frames)-1]
				if c == '{' {
					v = map[string]any{}
				} else {
					v = []any{}
				}
				break
			}
			if c == '{' {
				name, err := b.name()
				if err != nil {
					return nil, err
				}
				names = append(names, name)
			}
			continue
		case '"':
			s, err := b.str()
			if err != nil {
				return nil, err
			}
			v = s
		case 't':
			if !b.literal("true") {
				return nil, b.lost()
			}
			v = true
		case 'f':
			if !b.literal("false") {
				return nil, b.lost()
			}
			v = false
		case 'n':
			if !b.literal("null") {
				return nil, b.lost()
			}
		default:
			start := b.i
			for b.i < len(data) && numberByte(data[b.i]) {
				b.i++
			}
			if b.i == start {
				return nil, b.lost()
			}
			if !floats {
				v = json.Number(data[start:b.i])
				break
			}
			f, err := strconv.ParseFloat(string(data[start:b.i]), 64)
			if err != nil {
				return nil, malformed("a number is beyond the range of a float64", start)
			}
			v = f
		}
		// A value ended: add it to the container it is in, and close what
		// it ends.
		for {
			b.i = skipSpace(data, b.i)
			if len(frames) == 0 {
				if b.i != len(data) {
					return nil, b.lost()
				}
				return v, nil
			}
			values = append(values, v)
			if b.i >= len(data) {
				return nil, b.lost()
			}
			top := frames[len(frames)-1]
			c := data[b.i]
			b.i++
			switch {
			case c == ',' && top.object:
				name, err := b.name()
				if err != nil {
					return nil, err
				}
				names = append(names, name)
			case c == ',':
			case c == '}' && top.object:
				held := values[top.values:]
				obj := make(map[string]any, len(held))
				for j, name := range names[top.names:] {
					obj[name] = held[j]
				}
				v = obj
			case c == ']' && !top.object:
				v = append(make([]any, 0, len(values)-top.values), values[top.values:]...)
			default:
				b.i--
				return nil, b.lost()
			}
			if c == ',' {
				break
			}
			clear(values[top.values:])
			frames, values, names = frames[:len(frames)-1], values[:top.values], names[:top.names]
		}
	}
}

// buildFrame is an open object or array: where its members' values (or
// its items) and its members' names start among the open ones'.
type buildFrame struct {
	object        bool
	values, names int
}

// builder is build's place in its text, and the room it unescapes
// strings in.
type builder struct {
	data []byte
	i    int
	buf  []byte
}

// literal reads word, reporting whether it stands at b.i.
func (b *builder) literal(word string) bool {
	if !bytes.HasPrefix(b.data[b.i:], []byte(word)) {
		return false
	}
	b.i += len(word)
	return true
}

// numberByte reports whether c may be part of a JSON number.
func numberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// lost is the error of a builder that met what Check should have refused.
func (b *builder) lost() error {
	return malformed("the body is not well-formed JSON", b.i)
}

// tooManyValues is the error of a value holding more than max values.
func tooManyValues(max int) error {
	return &contracts.Error{Code: contracts.CodeRequestLimits,
		Message: fmt.Sprintf("the JSON value holds more than %d values (members, items and scalars, through every level)", max),
		Hint:    "Send fewer items per call; the gateway's server.limits.maxElements sets the bound."}
}

// name reads a member name and the colon after it.
func (b *builder) name() (string, error) {
	b.i = skipSpace(b.data, b.i)
	if b.i >= len(b.data) || b.data[b.i] != '"' {
		return "", b.lost()
	}
	name, err := b.str()
	if err != nil {
		return "", err
	}
	b.i = skipSpace(b.data, b.i)
	if b.i >= len(b.data) || b.data[b.i] != ':' {
		return "", b.lost()
	}
	b.i++
	return name, nil
}

// str reads a string from its opening quote at b.i to past its closing
// one.
func (b *builder) str() (string, error) {
	start := b.i + 1
	end := bytes.IndexByte(b.data[start:], '"')
	if end < 0 {
		return "", b.lost()
	}
	end += start
	if bytes.IndexByte(b.data[start:end], '\\') < 0 {
		b.i = end + 1
		return string(b.data[start:end]), nil
	}
	end = skipString(b.data, b.i) - 1
	if end < start || b.data[end] != '"' {
		return "", b.lost()
	}
	var ok bool
	if b.buf, ok = appendUnquoted(b.buf[:0], b.data[start:end]); !ok {
		return "", b.lost()
	}
	b.i = end + 1
	return string(b.buf), nil
}
