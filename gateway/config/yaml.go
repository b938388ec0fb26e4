package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// maxNesting bounds how deeply mappings and sequences may nest in the file.
const maxNesting = 64

// position is where the node of one JSON Pointer starts in the file. Key
// positions are set for members of a mapping and are zero otherwise.
type position struct {
	Line, Column       int
	KeyLine, KeyColumn int
	// implicitNull marks an empty value ("server:" and nothing after it),
	// which is better reported at its key.
	implicitNull bool
	// yaml11Bool marks an unquoted scalar that YAML 1.1 would have read as a
	// boolean (yes, no, on, off, y, n) and that this loader keeps a string.
	yaml11Bool bool
}

// document is a YAML file converted to a JSON-compatible value, with the
// position of every JSON Pointer in it.
type document struct {
	value     any
	positions map[string]position
}

// at returns the position of ptr, or of its nearest recorded ancestor.
func (d *document) at(ptr string) position {
	for {
		if p, ok := d.positions[ptr]; ok {
			return p
		}
		if ptr == "" {
			return position{}
		}
		ptr = parentPointer(ptr)
	}
}

// parseYAML reads exactly one YAML document into a JSON-compatible value. It
// refuses what the configuration has no use for and what makes a YAML file
// mean something else than it reads: duplicate keys, anchors and aliases,
// merge keys, non-string keys, non-standard tags, YAML 1.1 octal integers
// and more than one document. An empty file is an empty mapping.
func parseYAML(data []byte) (doc *document, problems []Problem) {
	defer func() {
		// The parser reports errors by panicking internally and recovering;
		// anything that escapes it must not take the process down.
		if r := recover(); r != nil {
			doc, problems = nil, []Problem{{Message: fmt.Sprintf("the YAML parser failed: %v", r)}}
		}
	}()
	dec, err := NewYAMLLoader(data)
	if err != nil {
		return nil, []Problem{{Message: fmt.Sprintf("the YAML parser failed: %v", err)}}
	}
	var root yaml.Node
	if err := dec.Load(&root); err != nil {
		if errors.Is(err, io.EOF) {
			// No document at all: an empty file, or comments only.
			return &document{value: map[string]any{}, positions: map[string]position{"": {Line: 1, Column: 1}}}, nil
		}
		return nil, []Problem{secondDocumentProblem(err)}
	}
	var extra yaml.Node
	switch err := dec.Load(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, []Problem{YAMLSyntaxProblem(err)}
	case len(extra.Content) == 1 && extra.Content[0].Line == extra.Line && extra.Content[0].Column == extra.Column:
		// A document that starts where its content does, without "---",
		// after a "..." that ended the first: YAML 1.2 reads a second
		// document, go-yaml v3 refused it there with a syntax error.
		return nil, []Problem{{Line: extra.Line, Message: "YAML syntax: did not find expected <document start>"}}
	default:
		return nil, []Problem{{Line: extra.Line, Column: extra.Column,
			Message: secondDocument}}
	}

	c := converter{positions: map[string]position{}}
	node := &root
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	v := c.convert(node, "", "", position{}, 0)
	if len(c.problems) > 0 {
		return nil, c.problems
	}
	if v == nil {
		// "---" alone, or "~": no configuration, the same as an empty file.
		v = map[string]any{}
	}
	return &document{value: v, positions: c.positions}, nil
}

// secondDocument is the problem of a file that holds more than one YAML
// document.
const secondDocument = "a second YAML document starts here; the file must hold exactly one (remove the --- separator)"

// errControlCharacter is what yamlInput fails a read with.
var errControlCharacter = errors.New("control characters are not allowed")

// A YAMLLoader reads the YAML documents of one file the way go-yaml v3 did,
// with go-yaml v4; YAMLSyntaxProblem reports its errors.
type YAMLLoader struct {
	loader *yaml.Loader
}

// NewYAMLLoader returns a loader of the YAML documents in data. Like
// go-yaml v3, it refuses a character U+007F to U+009F other than U+0085
// anywhere in the file, where go-yaml v4 lets them through (YAML 1.2 allows
// them in quoted scalars, for JSON).
func NewYAMLLoader(data []byte) (*YAMLLoader, error) {
	l, err := yaml.NewLoader(&yamlInput{data: data, stop: controlCharacterEnd(data)})
	if err != nil {
		return nil, err
	}
	return &YAMLLoader{loader: l}, nil
}

// Load reads the next document into n; it returns io.EOF when there is
// none. A plain scalar with the non-specific tag ("! 1") gets the tag its
// value resolves to, as if it had none (!!int here), as go-yaml v3 gave it;
// YAML 1.2 and go-yaml v4 make it a string.
func (l *YAMLLoader) Load(n *yaml.Node) error {
	if err := l.loader.Load(n); err != nil {
		return err
	}
	resolveNonSpecific(n)
	return nil
}

// resolveNonSpecific gives every plain scalar under n tagged "!" the tag an
// untagged plain scalar of its value has.
func resolveNonSpecific(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!" && n.Style == 0 {
		n.Tag = plainTag(n.Value)
	}
	for _, c := range n.Content {
		resolveNonSpecific(c)
	}
}

// plainTag returns the tag go-yaml resolves an untagged plain scalar of
// value to. A value that does not read back as the same plain scalar (it
// spans lines) is a string: every other tag resolves from one line.
func plainTag(value string) string {
	if value == "" {
		return "!!null"
	}
	l, err := yaml.NewLoader(strings.NewReader(value))
	if err != nil {
		return "!!str"
	}
	var doc yaml.Node
	if l.Load(&doc) != nil || len(doc.Content) != 1 {
		return "!!str"
	}
	if c := doc.Content[0]; c.Kind == yaml.ScalarNode && c.Style == 0 && c.Value == value && c.Tag != "!" {
		return c.Tag
	}
	return "!!str"
}

// yamlInput is data, read by the YAML library 512 bytes at a time. The read
// that would hand over the last byte of the first character at stop fails
// instead, which is when go-yaml v3's reader refused it: an error the
// library finds in what it read before still comes first, one after it
// does not.
type yamlInput struct {
	data      []byte
	pos, stop int // stop is -1 when data has no such character
}

func (r *yamlInput) Read(p []byte) (int, error) {
	if r.stop >= 0 && r.pos+len(p) >= r.stop {
		return 0, errControlCharacter
	}
	if r.pos == len(r.data) {
		return 0, io.EOF
	}
	n := copy(p, r.data[r.pos:])
	r.pos += n
	return n, nil
}

// controlCharacterEnd returns the offset just past the first character of
// data in U+007F to U+009F other than U+0085, or -1. It stops at the first
// byte that is not UTF-8, which the library refuses on its own, and leaves
// UTF-16 files (a byte order mark) to the library and the converter.
func controlCharacterEnd(data []byte) int {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return -1
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return -1
		case r >= 0x7f && r <= 0x9f && r != 0x85:
			return i + size
		}
		i += size
	}
	return -1
}

// YAMLSyntaxProblem turns an error of a loader from NewYAMLLoader into a
// problem at the line it names: where the construct the error is about
// starts (an unclosed collection) when that is below the first line, else
// where the error was found when that is; on the first line, a parser error
// names line 1 and a scanner error no line; a reader error (the bytes are
// not text) and an unknown anchor name none. These are the lines go-yaml v3
// named, kept so that no message moves (docs/decisions.md).
func YAMLSyntaxProblem(err error) Problem {
	var le *yaml.LoadError
	if !errors.As(err, &le) {
		return Problem{Message: "YAML syntax: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	msg := le.Message
	switch le.Stage {
	case yaml.ReaderStage:
		if errors.Is(err, errControlCharacter) {
			msg = errControlCharacter.Error()
		}
		// "invalid leading UTF-8 octet (value: 255)": v3 did not show the
		// byte, and a file that is not text cannot show it either.
		if i := strings.Index(msg, " (value: "); i >= 0 {
			msg = msg[:i]
		}
		return Problem{Message: "YAML syntax: " + msg}
	case yaml.ComposerStage:
		return Problem{Message: "YAML syntax: " + msg}
	}
	line := 0
	switch {
	case le.ContextMark.Line > 1:
		line = le.ContextMark.Line
	case le.Mark.Line > 1:
		line = le.Mark.Line
	case le.Stage == yaml.ParserStage:
		line = 1
	}
	return Problem{Line: line, Message: "YAML syntax: " + msg}
}

// secondDocumentProblem reports the error of the first document's load. A
// directive right after the first document (without "..." before it) is,
// to go-yaml v4, a first document without its end; to v3 it began a second
// document, and the file is told so as before.
func secondDocumentProblem(err error) Problem {
	var le *yaml.LoadError
	if errors.As(err, &le) && le.Stage == yaml.ParserStage && le.Message == "did not find expected <document end> before directive" {
		return Problem{Line: le.Mark.Line, Column: le.Mark.Column,
			Message: secondDocument}
	}
	return YAMLSyntaxProblem(err)
}

type converter struct {
	positions map[string]position
	problems  []Problem
}

// fail records a problem at n; field names the value it concerns.
func (c *converter) fail(n *yaml.Node, field, format string, args ...any) {
	c.problems = append(c.problems, Problem{Line: n.Line, Column: n.Column, Field: field, Message: fmt.Sprintf(format, args...)})
}

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans and YAML 1.2,
// which this loader follows, reads as strings.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
}

// convert returns the JSON-compatible value of n, recording its position
// under ptr. pos carries the key position when n is a mapping member.
func (c *converter) convert(n *yaml.Node, ptr, field string, pos position, depth int) any {
	pos.Line, pos.Column = n.Line, n.Column
	if n.Anchor != "" {
		c.fail(n, field, "anchors (&%s) are not supported; write the value out", n.Anchor)
		return nil
	}
	if n.Style&yaml.TaggedStyle != 0 && (n.Tag == "!" || !standardTag(n)) {
		c.fail(n, field, "the tag %s is not supported; only the standard YAML tags are", n.Tag)
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		c.fail(n, field, "aliases (*%s) are not supported; write the value out", n.Value)
		return nil
	case yaml.DocumentNode:
		// An empty document inside a document cannot happen; be safe.
		c.fail(n, field, "unexpected YAML document node")
		return nil
	case yaml.MappingNode:
		if !c.enter(n, ptr, field, pos, depth, "!!map") {
			return nil
		}
		m := make(map[string]any, len(n.Content)/2)
		first := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key, ok := c.key(k, field)
			if !ok {
				continue
			}
			childPtr, childField := ptr+"/"+escapePointer(key), memberField(field, key)
			if prev, dup := first[key]; dup {
				c.fail(k, childField, "duplicate key (first at line %d)", prev.Line)
				continue
			}
			first[key] = k
			m[key] = c.convert(v, childPtr, childField, position{KeyLine: k.Line, KeyColumn: k.Column}, depth+1)
		}
		return m
	case yaml.SequenceNode:
		if !c.enter(n, ptr, field, pos, depth, "!!seq") {
			return nil
		}
		s := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			s = append(s, c.convert(item, ptr+"/"+strconv.Itoa(i), indexField(field, i), position{}, depth+1))
		}
		return s
	case yaml.ScalarNode:
		v, ok := c.scalar(n, field)
		if !ok {
			return nil
		}
		if v == nil && n.Value == "" && n.Style == 0 {
			pos.implicitNull = true
		}
		if _, isString := v.(string); isString && n.Style == 0 && yaml11Bools[n.Value] {
			pos.yaml11Bool = true
		}
		c.positions[ptr] = pos
		return v
	default:
		c.fail(n, field, "unexpected YAML node")
		return nil
	}
}

// enter checks the mapping or sequence n (tag is its standard tag, !!map or
// !!seq) before convert reads its members: it records a problem and
// answers false when n nests deeper than maxNesting or carries another
// tag, and otherwise records n's position under ptr.
func (c *converter) enter(n *yaml.Node, ptr, field string, pos position, depth int, tag string) bool {
	if depth >= maxNesting {
		c.fail(n, field, "nesting is deeper than %d levels", maxNesting)
		return false
	}
	if n.ShortTag() != tag {
		c.fail(n, field, "the tag %s is not supported; only the standard YAML tags are", n.Tag)
		return false
	}
	c.positions[ptr] = pos
	return true
}

// standardTag reports whether an explicit tag is one of the standard ones
// this loader understands.
func standardTag(n *yaml.Node) bool {
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float", "!!bool", "!!null", "!!timestamp":
		return n.Kind == yaml.ScalarNode
	case "!!map":
		return n.Kind == yaml.MappingNode
	case "!!seq":
		return n.Kind == yaml.SequenceNode
	}
	return false
}

// key returns the string of a mapping key, refusing every other kind of key.
func (c *converter) key(k *yaml.Node, parent string) (string, bool) {
	switch {
	case k.Kind == yaml.AliasNode:
		c.fail(k, parent, "aliases (*%s) are not supported; write the value out", k.Value)
		return "", false
	case k.Anchor != "":
		c.fail(k, parent, "anchors (&%s) are not supported; write the value out", k.Anchor)
		return "", false
	case k.Kind != yaml.ScalarNode:
		c.fail(k, parent, "mapping keys must be strings, not a %s", kindName(k))
		return "", false
	case k.Style&yaml.TaggedStyle != 0 && (k.Tag == "!" || !standardTag(k)):
		c.fail(k, parent, "the tag %s is not supported; only the standard YAML tags are", k.Tag)
		return "", false
	}
	switch tag := k.ShortTag(); tag {
	case "!!str":
		if !utf8.ValidString(k.Value) {
			c.fail(k, parent, "the key is not valid UTF-8")
			return "", false
		}
		if r, bad := unprintable(k.Value); bad {
			c.fail(k, parent, "the key holds the character %U, which the configuration does not accept (YAML cannot write it out as it is); remove it", r)
			return "", false
		}
		return k.Value, true
	case "!!merge":
		c.fail(k, parent, "merge keys (<<) are not supported; write the members out")
		return "", false
	default:
		c.fail(k, parent, "mapping keys must be strings; quote the key %q", k.Value)
		return "", false
	}
}

// unprintable returns the first character of s outside YAML 1.2's
// printable set (tab, line feed, carriage return, U+0020-U+007E,
// U+00A0-U+D7FF, U+E000-U+FFFD, U+10000 and above; U+0085 too, which YAML
// counts printable but the YAML library reads as a line break, so that a
// value holding it would come back as a space). A double-quoted scalar
// can still produce one through an escape such as "\x80"; refusing it keeps
// every accepted file one whose values can be written out as they are (the
// JSON encoding of a configuration, which leaves U+007F-U+009F and
// U+FFFE-U+FFFF unescaped, parses again) and keeps control characters out
// of claim names, connection names and everything else the file names.
func unprintable(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0x7e,
			r >= 0xa0 && r <= 0xd7ff,
			r >= 0xe000 && r <= 0xfffd,
			r >= 0x10000 && r <= unicode.MaxRune:
			continue
		}
		return r, true
	}
	return 0, false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	default:
		return "complex value"
	}
}

var (
	yamlDecimal = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
	yamlHex     = regexp.MustCompile(`^([-+]?)0x([0-9a-fA-F]+)$`)
	yamlOctal   = regexp.MustCompile(`^([-+]?)0o([0-7]+)$`)
	yamlFloat   = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	leadingZero = regexp.MustCompile(`^[-+]?0[0-9]`)
)

// scalar converts a scalar node: strings stay strings (so yes, no, on and
// off are strings, as in YAML 1.2), numbers become json.Number in canonical
// JSON form, and anything ambiguous between YAML versions is refused.
func (c *converter) scalar(n *yaml.Node, field string) (any, bool) {
	if !utf8.ValidString(n.Value) {
		c.fail(n, field, "the value is not valid UTF-8")
		return nil, false
	}
	if r, bad := unprintable(n.Value); bad {
		c.fail(n, field, "the value holds the character %U, which the configuration does not accept (YAML cannot write it out as it is); remove it", r)
		return nil, false
	}
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!merge":
		// Timestamps are strings to a JSON Schema, and a plain "<<" outside
		// a key is just text.
		return n.Value, true
	case "!!null":
		switch n.Value {
		case "", "~", "null", "Null", "NULL":
			return nil, true
		}
		c.fail(n, field, "is not a null value")
		return nil, false
	case "!!bool":
		switch n.Value {
		case "true", "True", "TRUE":
			return true, true
		case "false", "False", "FALSE":
			return false, true
		}
		c.fail(n, field, "is not a boolean; write true or false")
		return nil, false
	case "!!int":
		return c.integer(n, field)
	case "!!float":
		return c.float(n, field)
	default:
		c.fail(n, field, "the tag %s is not supported; only the standard YAML tags are", n.Tag)
		return nil, false
	}
}

func (c *converter) integer(n *yaml.Node, field string) (any, bool) {
	v := n.Value
	if yamlDecimal.MatchString(v) {
		return json.Number(strings.TrimPrefix(v, "+")), true
	}
	if leadingZero.MatchString(v) {
		c.fail(n, field, "a number with a leading zero is octal in YAML 1.1 and decimal in YAML 1.2; write it without the leading zero, or as 0o… for octal")
		return nil, false
	}
	base, m := 16, yamlHex.FindStringSubmatch(v)
	if m == nil {
		base, m = 8, yamlOctal.FindStringSubmatch(v)
	}
	if m == nil {
		c.fail(n, field, "is not a YAML 1.2 integer; write decimal digits (or 0x…, 0o…) without separators")
		return nil, false
	}
	i, ok := new(big.Int).SetString(m[2], base)
	if !ok {
		c.fail(n, field, "is not a valid integer")
		return nil, false
	}
	if m[1] == "-" {
		i.Neg(i)
	}
	return json.Number(i.String()), true
}

func (c *converter) float(n *yaml.Node, field string) (any, bool) {
	v := n.Value
	if !yamlFloat.MatchString(v) {
		c.fail(n, field, "must be a finite number")
		return nil, false
	}
	if leadingZero.MatchString(v) && !strings.ContainsAny(v, ".eE") {
		c.fail(n, field, "a number with a leading zero is octal in YAML 1.1 and decimal in YAML 1.2; write it without the leading zero")
		return nil, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		c.fail(n, field, "must be a finite number")
		return nil, false
	}
	return json.Number(formatFloat(f)), true
}

// formatFloat renders f as a JSON number, integral values without exponent
// or fraction so that integer fields decode.
func formatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// escapePointer escapes one JSON Pointer reference token (RFC 6901).
func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func unescapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// parentPointer returns the pointer of the value that contains ptr.
func parentPointer(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i >= 0 {
		return ptr[:i]
	}
	return ""
}

// splitPointer returns the unescaped reference tokens of ptr.
func splitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		toks[i] = unescapePointer(t)
	}
	return toks
}

// identifier matches keys that render as .key in a field path.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// fieldPath renders ptr the way a reader of the file names a field:
// auth.issuers[0].algorithms[1]. Whether a token is an index is decided by
// the value it steps into, so numeric keys of a mapping stay keys.
func fieldPath(root any, ptr string) string {
	field := ""
	cur := root
	for _, tok := range splitPointer(ptr) {
		switch v := cur.(type) {
		case []any:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(v) {
				field, cur = indexField(field, i), v[i]
				continue
			}
			cur = nil
		case map[string]any:
			cur = v[tok]
		default:
			cur = nil
		}
		field = memberField(field, tok)
	}
	return field
}

// memberField appends a mapping key to a field path.
func memberField(parent, key string) string {
	if !identifier.MatchString(key) {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// indexField appends a sequence index to a field path.
func indexField(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// lookup returns the value at ptr, if there is one.
func lookup(root any, ptr string) (any, bool) {
	cur := root
	for _, tok := range splitPointer(ptr) {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
