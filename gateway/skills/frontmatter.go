package skills

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
)

// Bounds of the front matter.
const (
	maxTitleLen       = 200
	maxDescriptionLen = 2000
	maxTags           = 16
	maxTagLen         = 64
	maxReviewers      = 16
	maxReviewerLen    = 256
	maxRefs           = 32
	maxRefLen         = 2048
	maxIDLen          = 128
)

var idRE = regexp.MustCompile(contracts.IdentifierPattern)

// frontMatter collects the problems of one file. off is what to add to a
// line of the front matter's YAML to get the line of the file.
type frontMatter struct {
	off      int
	problems []config.Problem
}

func (f *frontMatter) report(line, col int, field, format string, args ...any) {
	f.problems = append(f.problems, config.Problem{Line: line, Column: col, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (f *frontMatter) at(n *yaml.Node, field, format string, args ...any) {
	f.report(n.Line+f.off, n.Column, field, format, args...)
}

// parseFile reads one skill file. name is how problems name it.
func parseFile(name string, data []byte) (v *Version, problems []config.Problem) {
	f := &frontMatter{off: 1}
	if !utf8.Valid(data) {
		f.report(0, 0, "", "the file is not valid UTF-8")
		return nil, f.problems
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	lines := strings.SplitAfter(text, "\n")
	trim := func(l string) string { return strings.TrimRight(l, " \t\r\n") }
	if len(lines) == 0 || trim(lines[0]) != "---" {
		f.report(1, 1, "", "a skill starts with YAML front matter: a line ---, the fields (id, version, title, evidence, ...), and a closing line ---")
		return nil, f.problems
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := trim(lines[i]); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		f.report(1, 1, "", "the front matter is not closed: end it with a line ---")
		return nil, f.problems
	}
	root := f.decode(strings.Join(lines[1:end], ""))
	if root == nil {
		return nil, f.problems
	}
	v = f.version(root)
	body := strings.TrimRight(strings.TrimLeft(strings.Join(lines[end+1:], ""), "\r\n"), " \t\r\n")
	if body == "" {
		f.report(end+2, 1, "", "the skill has no body: write its markdown after the front matter")
	}
	if len(f.problems) > 0 {
		return nil, f.problems
	}
	v.Body, v.File = body, name
	return v, nil
}

// decode parses the front matter into its root mapping node.
func (f *frontMatter) decode(src string) (root *yaml.Node) {
	defer func() {
		if r := recover(); r != nil {
			root = nil
			f.report(0, 0, "", "the YAML parser failed: %v", r)
		}
	}()
	dec, err := config.NewYAMLLoader([]byte(src))
	if err != nil {
		f.report(0, 0, "", "the YAML parser failed: %v", err)
		return nil
	}
	var doc yaml.Node
	if err := dec.Load(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			f.report(1, 1, "", "the front matter is empty: it needs at least id, version, title and evidence")
			return nil
		}
		p := config.YAMLSyntaxProblem(err)
		if p.Line > 0 {
			p.Line += f.off
		}
		f.problems = append(f.problems, p)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		f.report(1, 1, "", "the front matter must be one YAML mapping")
		return nil
	}
	root = doc.Content[0]
	if root.Kind != yaml.MappingNode {
		f.at(root, "", "the front matter must be a YAML mapping of fields (id, version, title, evidence, ...)")
		return nil
	}
	return root
}

// version reads the root mapping.
func (f *frontMatter) version(root *yaml.Node) *Version {
	v := &Version{}
	fields := f.fields(root, "", []string{"id", "version", "title", "description", "tags", "evidence"}, []string{"id", "version", "title", "evidence"})
	if n := fields["id"]; n != nil {
		if s, ok := f.str(n, "id", 1, maxIDLen); ok {
			if !idRE.MatchString(s) {
				f.at(n, "id", "must be an identifier: 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit")
			}
			v.ID = s
		}
	}
	if n := fields["version"]; n != nil {
		if s, ok := f.str(n, "version", 1, maxVersionLen); ok {
			p, valid := parseVersion(s)
			if !valid {
				f.at(n, "version", "must be a version such as 1.2.0: numbers separated by dots, without leading zeros, then an optional -pre.release and +build (at most %d characters)", maxVersionLen)
			}
			v.Version, v.parsed = s, p
			v.versionLine, v.versionColumn = n.Line+f.off, n.Column
		}
	}
	if n := fields["title"]; n != nil {
		v.Title, _ = f.str(n, "title", 1, maxTitleLen)
	}
	if n := fields["description"]; n != nil {
		v.Description, _ = f.str(n, "description", 1, maxDescriptionLen)
	}
	v.Tags = []string{}
	if n := fields["tags"]; n != nil {
		v.Tags = f.strs(n, "tags", maxTags, 1, maxTagLen, true)
	}
	if n := fields["evidence"]; n != nil {
		v.Evidence = f.evidence(n)
	}
	return v
}

func (f *frontMatter) evidence(n *yaml.Node) Evidence {
	var e Evidence
	if !f.plain(n, "evidence") {
		return e
	}
	if n.Kind != yaml.MappingNode {
		f.at(n, "evidence", "must be a mapping with at least state (%s)", strings.Join(states, ", "))
		return e
	}
	fields := f.fields(n, "evidence", []string{"state", "reviewedBy", "reviewedAt", "summary", "refs"}, []string{"state"})
	if s := fields["state"]; s != nil {
		if st, ok := f.str(s, "evidence.state", 1, 32); ok {
			if !slices.Contains(states, st) {
				f.at(s, "evidence.state", "must be one of %s", strings.Join(states, ", "))
			}
			e.State = st
		}
	}
	if s := fields["reviewedBy"]; s != nil {
		e.ReviewedBy = f.strs(s, "evidence.reviewedBy", maxReviewers, 1, maxReviewerLen, true)
	}
	if s := fields["reviewedAt"]; s != nil {
		if at, ok := f.str(s, "evidence.reviewedAt", 1, 64); ok {
			if !validDate(at) {
				f.at(s, "evidence.reviewedAt", "must be a date (2025-05-02) or an RFC 3339 time (2025-05-02T10:00:00Z)")
			}
			e.ReviewedAt = at
		}
	}
	if s := fields["summary"]; s != nil {
		e.Summary, _ = f.str(s, "evidence.summary", 1, maxDescriptionLen)
	}
	if s := fields["refs"]; s != nil {
		e.Refs = f.strs(s, "evidence.refs", maxRefs, 1, maxRefLen, true)
	}
	return e
}

func validDate(s string) bool {
	if _, err := time.Parse(time.DateOnly, s); err == nil {
		return true
	}
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// plain refuses anchors, aliases and explicit tags, which a skill has no use
// for; it reports whether n is free of them.
func (f *frontMatter) plain(n *yaml.Node, field string) bool {
	switch {
	case n.Kind == yaml.AliasNode:
		f.at(n, field, "aliases are not allowed in skill front matter")
		return false
	case n.Anchor != "":
		f.at(n, field, "anchors are not allowed in skill front matter")
		return false
	case n.Style&yaml.TaggedStyle != 0:
		f.at(n, field, "explicit tags (%s) are not allowed in skill front matter", n.Tag)
		return false
	}
	return true
}

// fields reads a mapping: unknown and duplicate keys are reported, and so
// is every required field that is missing.
func (f *frontMatter) fields(m *yaml.Node, prefix string, known, required []string) map[string]*yaml.Node {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, val := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || !f.plain(k, prefix) {
			if k.Kind != yaml.AliasNode && k.Anchor == "" {
				f.at(k, prefix, "a key must be a plain string")
			}
			continue
		}
		name := k.Value
		switch {
		case !slices.Contains(known, name):
			f.at(k, join(name), "is not a known field; known fields: %s", strings.Join(known, ", "))
		case out[name] != nil:
			f.at(k, join(name), "is given twice (first at line %d)", out[name].Line+f.off)
		default:
			out[name] = val
		}
	}
	for _, r := range required {
		if out[r] == nil {
			f.at(m, join(r), "is required")
		}
	}
	return out
}

// str reads a string scalar of minLen to maxLen characters. Numbers and
// dates are taken as written (version: 1.2, reviewedAt: 2025-05-02);
// booleans and null are refused.
func (f *frontMatter) str(n *yaml.Node, field string, minLen, maxLen int) (string, bool) {
	if !f.plain(n, field) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		f.at(n, field, "must be a string")
		return "", false
	}
	switch n.Tag {
	case "!!str", "!!int", "!!float", "!!timestamp":
	case "!!null":
		f.at(n, field, "must not be empty")
		return "", false
	case "!!bool":
		f.at(n, field, "must be a string, not the boolean %s: write it in quotes", n.Value)
		return "", false
	default:
		f.at(n, field, "must be a string")
		return "", false
	}
	s := n.Value
	switch l := utf8.RuneCountInString(s); {
	case l < minLen || strings.TrimSpace(s) == "":
		f.at(n, field, "must not be empty")
		return "", false
	case l > maxLen:
		f.at(n, field, "must be at most %d characters long", maxLen)
		return "", false
	}
	return s, true
}

// strs reads a sequence of at most maxItems strings.
func (f *frontMatter) strs(n *yaml.Node, field string, maxItems, minLen, maxLen int, unique bool) []string {
	out := []string{}
	if !f.plain(n, field) {
		return out
	}
	if n.Kind != yaml.SequenceNode {
		f.at(n, field, "must be a list of strings")
		return out
	}
	if len(n.Content) > maxItems {
		f.at(n, field, "must have at most %d items", maxItems)
		return out
	}
	for i, item := range n.Content {
		name := field + "[" + strconv.Itoa(i) + "]"
		s, ok := f.str(item, name, minLen, maxLen)
		if !ok {
			continue
		}
		if unique && slices.Contains(out, s) {
			f.at(item, name, "repeats %q", s)
			continue
		}
		out = append(out, s)
	}
	return out
}

// ParseFile parses one skill file on its own, for tools that check a file
// before it is deployed; name is how problems name it. A file with problems
// yields a *config.LoadError.
func ParseFile(name string, data []byte) (*Version, error) {
	v, problems := parseFile(name, data)
	if len(problems) > 0 {
		return nil, &config.LoadError{File: name, Problems: problems}
	}
	return v, nil
}
