package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxFileSize bounds the size of a configuration file, in bytes.
const MaxFileSize = 4 << 20

// Problem is one thing wrong with a configuration file.
type Problem struct {
	// Line and Column locate the problem, 1-based; 0 when unknown.
	Line, Column int
	// Field is the path of the offending value as a reader names it
	// (auth.issuers[0].algorithms[1]); empty for the file as a whole.
	Field string
	// Message says what is wrong and, where it helps, how to fix it.
	Message string
}

// format renders p as "FILE:LINE:COLUMN: FIELD: MESSAGE", leaving out what is
// unknown.
func (p Problem) format(file string) string {
	var b strings.Builder
	b.WriteString(file)
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line))
		if p.Column > 0 {
			b.WriteString(":" + strconv.Itoa(p.Column))
		}
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// LoadError reports every problem found in a configuration file, sorted by
// position.
type LoadError struct {
	// File is the name the file was loaded under.
	File string
	// Problems lists what is wrong, sorted by line and column.
	Problems []Problem
}

// Error renders one problem per line.
func (e *LoadError) Error() string {
	if len(e.Problems) == 0 {
		return e.File + ": invalid configuration"
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.format(e.File)
	}
	return strings.Join(lines, "\n")
}

// maxProblems bounds the problems one LoadError lists; a file that has more
// gets a last problem counting the rest.
const maxProblems = 100

// newLoadError sorts, deduplicates and bounds problems.
func newLoadError(file string, problems []Problem) *LoadError {
	slices.SortStableFunc(problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column),
			strings.Compare(a.Field, b.Field), strings.Compare(a.Message, b.Message))
	})
	problems = slices.Compact(problems)
	if n := len(problems) - maxProblems; n > 0 {
		last := problems[maxProblems-1]
		problems = append(problems[:maxProblems:maxProblems], Problem{
			Line:    last.Line,
			Message: fmt.Sprintf("%d more problems not shown", n),
		})
	}
	return &LoadError{File: file, Problems: problems}
}

// Default returns the embedded default configuration: nothing set, no
// issuers, no Source. Like a loaded file, it takes its default values from
// Defaults, which the caller applies once the flags are known.
func Default() *Config { return &Config{} }

// Load reads, validates and decodes the configuration file at path. A file
// that is not valid yields a *LoadError naming every problem by file, line,
// column and field. Load does not apply Defaults.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: reading %s: %w", path, err)
	}
	cfg, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	cfg.Source = path
	return cfg, nil
}

// Parse validates and decodes the configuration in data; name is the file
// name problems are reported under. The YAML is read as YAML 1.2 (yes, no,
// on and off are strings), must hold one document, and may not use anchors,
// aliases, merge keys, non-string keys or non-standard tags. It is then
// checked against Schema and against the rules a schema cannot express. An
// empty file is a valid, empty configuration. Parse does not apply Defaults.
func Parse(name string, data []byte) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, newLoadError(name, []Problem{{Message: fmt.Sprintf("the file is larger than %d bytes", MaxFileSize)}})
	}
	doc, problems := parseYAML(data)
	if len(problems) > 0 {
		// The structure is not trustworthy: report it before its content.
		return nil, newLoadError(name, problems)
	}
	s, err := compiledSchema()
	if err != nil {
		return nil, err
	}
	problems, reported, err := schemaProblems(s, doc)
	if err != nil {
		return nil, fmt.Errorf("config: validating %s: %w", name, err)
	}
	problems = append(problems, semanticProblems(doc, reported)...)
	if len(problems) > 0 {
		return nil, newLoadError(name, problems)
	}
	b, err := json.Marshal(doc.value)
	if err != nil {
		return nil, fmt.Errorf("config: %s: re-encoding the validated file: %w", name, err)
	}
	var cfg Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("config: %s: decoding the validated file: %w", name, err)
	}
	return &cfg, nil
}

// schemaProblems validates doc against s and locates every violation. It
// also returns the pointers it reported, so later checks do not repeat them.
func schemaProblems(s *jsonschema.Schema, doc *document) ([]Problem, map[string]bool, error) {
	reported := map[string]bool{}
	err := contracts.Validate(s, doc.value, "the file does not match the configuration schema")
	if err == nil {
		return nil, reported, nil
	}
	var ce *contracts.Error
	if !errors.As(err, &ce) || len(ce.Fields) == 0 {
		return nil, nil, err
	}
	var out []Problem
	for _, fe := range ce.Fields {
		for _, p := range locate(doc, fe) {
			out = append(out, p.Problem)
			reported[p.pointer] = true
		}
	}
	return out, reported, nil
}

type locatedProblem struct {
	Problem
	pointer string
}

// locate turns one schema violation into problems at file positions.
func locate(doc *document, fe contracts.FieldError) []locatedProblem {
	ptr := fe.Pointer
	switch {
	case fe.Keyword == "additionalProperties" && fe.Detail == "is not a known field":
		return []locatedProblem{unknownField(doc, ptr)}
	case fe.Keyword == "additionalProperties":
		// Several unknown members of one object: one problem per key.
		if names, ok := unknownNames(doc, ptr, fe.Detail); ok {
			out := make([]locatedProblem, 0, len(names))
			for _, n := range names {
				out = append(out, unknownField(doc, ptr+"/"+escapePointer(n)))
			}
			return out
		}
	case fe.Keyword == "required":
		// Point at the object that lacks the member: its key if it has one.
		parent := ptr
		if fe.Detail == "is required" {
			parent = parentPointer(ptr)
		}
		pos := doc.at(parent)
		line, col := pos.Line, pos.Column
		if pos.KeyLine > 0 {
			line, col = pos.KeyLine, pos.KeyColumn
		}
		return []locatedProblem{{Problem{Line: line, Column: col, Field: fieldPath(doc.value, ptr), Message: fe.Detail}, ptr}}
	}
	pos := doc.at(ptr)
	line, col := pos.Line, pos.Column
	if pos.implicitNull && pos.KeyLine > 0 {
		line, col = pos.KeyLine, pos.KeyColumn
	}
	return []locatedProblem{{Problem{Line: line, Column: col, Field: fieldPath(doc.value, ptr), Message: explain(fe, pos, ptr)}, ptr}}
}

// explain words a violation for the reader of the file.
func explain(fe contracts.FieldError, pos position, ptr string) string {
	switch fe.Keyword {
	case "pattern":
		if fe.Detail == "must match the pattern "+durationPattern {
			return "must be a Go duration such as 30s, 5m or 1h30m"
		}
	case "format":
		if fe.Detail == "must be a valid uri" {
			return "must be an absolute URI such as https://host.example"
		}
	case "type":
		if slices.Contains(durationFields, ptr) {
			return "must be a Go duration string such as 30s, 5m or 1h30m (a bare number has no unit)"
		}
		if pos.yaml11Bool && strings.Contains(fe.Detail, "boolean") {
			return fe.Detail + "; yes, no, on and off are strings in YAML 1.2: write true or false"
		}
	case "enum":
		if toks := splitPointer(ptr); len(toks) == 5 && toks[0] == "auth" && toks[1] == "issuers" && toks[3] == "algorithms" {
			return fe.Detail + " (asymmetric JWS algorithms: " + strings.Join(algorithms, ", ") + ")"
		}
	}
	return fe.Detail
}

// algorithms are the signature algorithms an issuer may be configured with.
var algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// unknownField reports the member at ptr as unknown, at its key, with a
// suggestion when its name is close to a known one.
func unknownField(doc *document, ptr string) locatedProblem {
	pos := doc.at(ptr)
	line, col := pos.Line, pos.Column
	if pos.KeyLine > 0 {
		line, col = pos.KeyLine, pos.KeyColumn
	}
	toks := splitPointer(ptr)
	name := ""
	if len(toks) > 0 {
		name = toks[len(toks)-1]
	}
	what := "field"
	if len(toks) == 1 {
		what = "section"
	}
	msg := "is not a known " + what
	if known := knownFields(parentPointer(ptr)); len(known) > 0 {
		if s, ok := suggest(name, known); ok {
			msg += fmt.Sprintf("; did you mean %q?", s)
		} else {
			msg += "; known " + what + "s: " + strings.Join(known, ", ")
		}
	}
	return locatedProblem{Problem{Line: line, Column: col, Field: fieldPath(doc.value, ptr), Message: msg}, ptr}
}

// unknownNames splits the "unknown fields: a, b" detail of a violation at
// the object ptr into key names, trusting the split only when every name is
// a key of that object.
func unknownNames(doc *document, ptr, detail string) ([]string, bool) {
	list, ok := strings.CutPrefix(detail, "unknown fields: ")
	if !ok {
		return nil, false
	}
	v, _ := lookup(doc.value, ptr)
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	names := strings.Split(list, ", ")
	for _, n := range names {
		if _, ok := obj[n]; !ok {
			return nil, false
		}
	}
	return names, true
}

// knownFields lists the members the object at ptr may have, from the Config
// types (which the schema mirrors; a test holds them together).
func knownFields(ptr string) []string {
	t := reflect.TypeFor[Config]()
	for _, tok := range splitPointer(ptr) {
		switch t.Kind() {
		case reflect.Struct:
			f, ok := jsonField(t, tok)
			if !ok {
				return nil
			}
			t = f.Type
		case reflect.Slice:
			t = t.Elem()
		default:
			return nil
		}
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		if name := jsonName(f); name != "" {
			names = append(names, name)
		}
	}
	if ptr == "" {
		names = append(names, reservedSections...)
	}
	return names
}

// jsonName is the JSON member name of a struct field, "" when it has none.
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// suggest returns the known name closest to name, if one is close enough to
// be the intended spelling.
func suggest(name string, known []string) (string, bool) {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k, true
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestDist && d < len(k)/2 {
			best, bestDist = k, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
