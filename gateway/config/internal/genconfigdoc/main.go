// Command genconfigdoc writes docs/configuration.md, the configuration
// reference, from the JSON Schema of praxec.yaml (gateway/config/schema.json):
// one table of members for the top level and for each of the schema's
// definitions, in the order a reader meets them, with the descriptions the
// schema gives. It runs through go generate in gateway/config, so CI's
// regenerate-and-diff check keeps the page in step with the schema.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	schema := flag.String("schema", "schema.json", "the JSON Schema of praxec.yaml")
	out := flag.String("o", "configuration.md", "file to write")
	flag.Parse()
	if err := run(*schema, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genconfigdoc:", err)
		os.Exit(1)
	}
}

func run(schemaPath, outPath string) error {
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	root, err := parse(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", schemaPath, err)
	}
	doc, err := render(root)
	if err != nil {
		return fmt.Errorf("%s: %w", schemaPath, err)
	}
	return os.WriteFile(outPath, doc, 0o644)
}

// node is a JSON value that keeps the order of an object's members, which
// is the order the schema presents them in.
type node struct {
	keys   []string         // an object's member names, in order
	fields map[string]*node // an object's members
	items  []*node          // an array's items
	value  any              // a scalar (string, json.Number, bool or nil)
	object bool
	array  bool
}

// get returns the member name of an object, or nil.
func (n *node) get(name string) *node {
	if n == nil || !n.object {
		return nil
	}
	return n.fields[name]
}

// str returns the member name as a string, or "".
func (n *node) str(name string) string {
	s, _ := n.get(name).scalar().(string)
	return s
}

func (n *node) scalar() any {
	if n == nil {
		return nil
	}
	return n.value
}

// parse decodes a JSON document into nodes.
func parse(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := decode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the document")
	}
	return n, nil
}

func decode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &node{object: true, fields: map[string]*node{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name := k.(string)
			v, err := decode(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := n.fields[name]; dup {
				return nil, fmt.Errorf("member %q named twice", name)
			}
			n.keys = append(n.keys, name)
			n.fields[name] = v
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := &node{array: true}
		for dec.More() {
			v, err := decode(dec)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		_, err := dec.Token()
		return n, err
	default:
		return &node{value: tok}, nil
	}
}

// doc renders the reference.
type doc struct {
	defs  *node
	order []string        // definitions in the order they are first met
	seen  map[string]bool // definitions already in order
}

const defPrefix = "#/$defs/"

func render(root *node) ([]byte, error) {
	d := &doc{defs: root.get("$defs"), seen: map[string]bool{}}
	if d.defs == nil {
		return nil, fmt.Errorf("no $defs")
	}
	var b bytes.Buffer
	b.WriteString("# Configuration reference\n\n")
	b.WriteString("<!-- Generated from gateway/config/schema.json by go generate ./gateway/config (internal/genconfigdoc); do not edit. -->\n\n")
	fmt.Fprintf(&b, "%s\n\n", text(root.str("description")))
	b.WriteString("`praxa config validate FILE` checks a file against this schema (and against what a schema cannot say: " +
		"references between sections, evidence that something produces), naming each problem's file, line, column and " +
		"member; `praxa config schema` prints the schema itself. A member marked required must be present; every other " +
		"takes the default its description names. [Connections and capabilities](connections.md) and " +
		"[operators](operators.md) show the sections at work.\n\n")

	b.WriteString("## Top level\n\n")
	if err := d.members(&b, root); err != nil {
		return nil, err
	}
	for i := 0; i < len(d.order); i++ { // d.order grows while it is walked
		name := d.order[i]
		def := d.defs.get(name)
		fmt.Fprintf(&b, "## %s\n\n", name)
		if desc := text(def.str("description")); desc != "" {
			fmt.Fprintf(&b, "%s\n\n", desc)
		}
		if err := d.members(&b, def); err != nil {
			return nil, fmt.Errorf("$defs/%s: %w", name, err)
		}
	}
	for _, name := range d.defs.keys {
		if !d.seen[name] {
			return nil, fmt.Errorf("$defs/%s is referenced by nothing", name)
		}
	}
	return b.Bytes(), nil
}

// row is one member of a table.
type row struct{ path, typ, desc string }

// members writes the table of s's members, with the members of inline
// objects beneath them as dotted paths, and what each kind allows where
// the schema says so with if/then; a definition without members gets its
// type alone.
func (d *doc) members(b *bytes.Buffer, s *node) error {
	var rows []row
	if err := d.collect(&rows, "", s); err != nil {
		return err
	}
	if len(rows) == 0 {
		if ap := s.get("additionalProperties"); ap != nil && ap.object && s.get("properties") == nil {
			v, err := d.typeOf(ap)
			if err != nil {
				return err
			}
			keys := "any name"
			if rule := nameRule(d, s); rule != "" {
				keys = rule
			}
			fmt.Fprintf(b, "A map whose keys match %s and whose values are each a %s.\n\n", keys, v)
			return nil
		}
		typ, err := d.typeOf(s)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "Type: %s.\n\n", typ)
		return nil
	}
	b.WriteString("| member | type | description |\n| --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", r.path, r.typ, cell(r.desc))
	}
	b.WriteString("\n")
	if kinds := variants(s); kinds != "" {
		b.WriteString(kinds)
	}
	return nil
}

// collect appends a row for each property of s under prefix, descending
// into inline objects (never into references, which have sections of their
// own).
func (d *doc) collect(rows *[]row, prefix string, s *node) error {
	props := s.get("properties")
	if props == nil {
		return nil
	}
	required := map[string]bool{}
	if req := s.get("required"); req != nil {
		for _, r := range req.items {
			required[r.value.(string)] = true
		}
	}
	for _, name := range props.keys {
		p := props.get(name)
		if !p.object { // true: allowed, described elsewhere
			continue
		}
		typ, err := d.typeOf(p)
		if err != nil {
			return fmt.Errorf("%s%s: %w", prefix, name, err)
		}
		if required[name] {
			typ += ", required"
		}
		desc := p.str("description")
		if desc == "" {
			if ref := p.str("$ref"); ref != "" {
				desc = d.defs.get(strings.TrimPrefix(ref, defPrefix)).str("description")
			}
		}
		path := prefix + name
		*rows = append(*rows, row{path: path, typ: typ, desc: desc})
		switch {
		case p.get("properties") != nil:
			if err := d.collect(rows, path+".", p); err != nil {
				return err
			}
		case p.str("type") == "array" && p.get("items").get("properties") != nil:
			if err := d.collect(rows, path+"[].", p.get("items")); err != nil {
				return err
			}
		}
	}
	return nil
}

// nameRule links the definition a map's keys must match, when the schema
// names one.
func nameRule(d *doc, s *node) string {
	if ref := s.get("propertyNames").str("$ref"); ref != "" {
		name := strings.TrimPrefix(ref, defPrefix)
		d.use(name)
		return fmt.Sprintf("[%s](#%s)", name, anchor(name))
	}
	return ""
}

// use puts a definition in the order of sections the first time it is met.
func (d *doc) use(name string) {
	if !d.seen[name] {
		d.seen[name] = true
		d.order = append(d.order, name)
	}
}

// typeOf describes a schema's type in a few words, linking definitions.
func (d *doc) typeOf(s *node) (string, error) {
	if s == nil || !s.object {
		return "any", nil
	}
	if ref := s.str("$ref"); ref != "" {
		name, ok := strings.CutPrefix(ref, defPrefix)
		if !ok || d.defs.get(name) == nil {
			return "", fmt.Errorf("reference %q is not one of $defs", ref)
		}
		d.use(name)
		return fmt.Sprintf("[%s](#%s)", name, anchor(name)), nil
	}
	if e := s.get("enum"); e != nil {
		var vs []string
		for _, v := range e.items {
			vs = append(vs, "`"+literal(v)+"`")
		}
		return "one of " + strings.Join(vs, ", "), nil
	}
	if c := s.get("const"); c != nil {
		return "`" + literal(c) + "`", nil
	}
	for _, alt := range []string{"anyOf", "oneOf"} {
		if a := s.get(alt); a != nil && s.get("type") == nil {
			var ts []string
			for _, v := range a.items {
				t, err := d.typeOf(v)
				if err != nil {
					return "", err
				}
				ts = append(ts, t)
			}
			return strings.Join(ts, " or "), nil
		}
	}
	var types []string
	switch t := s.get("type"); {
	case t == nil:
		return "any", nil
	case t.array:
		for _, v := range t.items {
			types = append(types, v.value.(string))
		}
	default:
		types = []string{t.value.(string)}
	}
	var out []string
	for _, t := range types {
		switch t {
		case "array":
			item, err := d.typeOf(s.get("items"))
			if err != nil {
				return "", err
			}
			if s.get("items").get("properties") != nil {
				item = "object"
			}
			out = append(out, "list of "+item)
		case "object":
			ap := s.get("additionalProperties")
			if ap != nil && ap.object && s.get("properties") == nil {
				v, err := d.typeOf(ap)
				if err != nil {
					return "", err
				}
				keys := "name"
				if rule := nameRule(d, s); rule != "" {
					keys = rule
				}
				out = append(out, "map of "+keys+" to "+v)
				continue
			}
			out = append(out, "object")
		case "integer", "number":
			out = append(out, t+bounds(s))
		default:
			out = append(out, t)
		}
	}
	return strings.Join(out, " or "), nil
}

// bounds gives a number's range, when the schema bounds it.
func bounds(s *node) string {
	lo, hi := literal(s.get("minimum")), literal(s.get("maximum"))
	switch {
	case s.get("minimum") != nil && s.get("maximum") != nil:
		return fmt.Sprintf(", %s to %s", lo, hi)
	case s.get("minimum") != nil:
		return ", at least " + lo
	case s.get("maximum") != nil:
		return ", at most " + hi
	}
	return ""
}

// variants lists what each kind allows, from allOf entries of the form
// if {properties: {P: {const: V}}} then {properties: {...}, required: [...]}.
func variants(s *node) string {
	all := s.get("allOf")
	if all == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range all.items {
		cond, then := c.get("if").get("properties"), c.get("then")
		if cond == nil || then == nil || len(cond.keys) != 1 {
			continue
		}
		prop := cond.keys[0]
		val := cond.get(prop).get("const")
		if val == nil {
			continue
		}
		var allowed, required []string
		if ps := then.get("properties"); ps != nil {
			for _, k := range ps.keys {
				if k != prop {
					allowed = append(allowed, "`"+k+"`")
				}
			}
		}
		if req := then.get("required"); req != nil {
			for _, r := range req.items {
				required = append(required, "`"+r.value.(string)+"`")
			}
		}
		line := fmt.Sprintf("- `%s: %s`:", prop, literal(val))
		switch {
		case then.get("properties") == nil && len(required) > 0:
			line += " requires " + strings.Join(required, ", ")
		case len(allowed) == 0:
			line += " no other member"
		default:
			line += " " + strings.Join(allowed, ", ")
			if len(required) > 0 {
				line += " (required: " + strings.Join(required, ", ") + ")"
			}
		}
		if anyOf := then.get("anyOf"); anyOf != nil {
			var alts []string
			for _, a := range anyOf.items {
				for _, r := range a.get("required").items {
					alts = append(alts, "`"+r.value.(string)+"`")
				}
			}
			line += "; at least one of " + strings.Join(alts, ", ")
		}
		b.WriteString(line + "\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return "What each value allows:\n\n" + b.String() + "\n"
}

// literal renders a scalar as JSON would.
func literal(n *node) string {
	if n == nil {
		return ""
	}
	switch v := n.value.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return fmt.Sprint(v)
	case nil:
		return "null"
	}
	return "?"
}

// anchor is the fragment GitHub gives a heading of name: lower case, with
// punctuation other than - and _ dropped.
func anchor(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// text makes a description fit Markdown prose: < and > are escaped, so
// that placeholders such as <name> show.
func text(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// cell makes a description fit a table cell.
func cell(s string) string {
	s = text(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}
