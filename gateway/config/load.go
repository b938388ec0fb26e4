package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/internal/editdist"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxFileSize bounds the size of a configuration file, in bytes.
const MaxFileSize = 4 << 20

// Problem is one thing wrong with a configuration file.
type Problem struct {
	// File is the file the problem is in when it is not the one the
	// LoadError names (a manifest the configuration lists).
	File string
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
	if p.File != "" {
		file = p.File
	}
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

// Lines returns each problem formatted as FILE:LINE:COLUMN: FIELD: MESSAGE,
// in order.
func (e *LoadError) Lines() []string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.format(e.File)
	}
	return lines
}

// maxProblems bounds the problems one LoadError lists; a file that has more
// gets a last problem counting the rest.
const maxProblems = 100

// newLoadError sorts, deduplicates and bounds problems.
func newLoadError(file string, problems []Problem) *LoadError {
	slices.SortStableFunc(problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column),
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
	cfg, _, err := LoadData(path)
	return cfg, err
}

// LoadData is Load that also returns the bytes it read (at most
// MaxFileSize+1 of them), whether or not they make a valid configuration,
// so that a caller can digest what it was given (a reload's audit event).
// The bytes are nil when the file could not be read.
func LoadData(path string) (*Config, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("config: reading %s: %w", path, err)
	}
	cfg, err := Parse(path, data)
	if err != nil {
		return nil, data, err
	}
	cfg.Source = path
	cfg.resolveKeyFiles()
	return cfg, data, nil
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
	problems, reported, badKeys, err := schemaProblems(s, doc)
	if err != nil {
		return nil, fmt.Errorf("config: validating %s: %w", name, err)
	}
	problems = append(problems, semanticProblems(doc, reported)...)
	if badKeys && len(problems) == 0 {
		// The key checks mirror every propertyNames of the schema, so this
		// should not happen; if it does, the file must still be refused.
		problems = append(problems, Problem{Message: "a mapping key does not match the pattern its section requires"})
	}
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
	if root, ok := doc.value.(map[string]any); ok {
		if conns, ok := root["connections"].(map[string]any); ok && len(conns) > 0 {
			cfg.SetConnectionNames(slices.Collect(maps.Keys(conns)))
		}
	}
	if len(cfg.Manifests) > 0 {
		if problems := cfg.loadManifests(name, doc); len(problems) > 0 {
			return nil, newLoadError(name, problems)
		}
	}
	if problems := cfg.evidenceProblems(doc); len(problems) > 0 {
		return nil, newLoadError(name, problems)
	}
	return &cfg, nil
}

// schemaProblems validates doc against s and locates every violation. It
// also returns the pointers it reported, so later checks do not repeat them,
// and whether a mapping key broke a propertyNames rule. Those violations
// arrive without the key's location (the validator reports them relative to
// the key itself), so they are left to the semantic checks, which test the
// same keys against the same patterns and report them at the key.
func schemaProblems(s *jsonschema.Schema, doc *document) (problems []Problem, reported map[string]bool, badKeys bool, err error) {
	reported = map[string]bool{}
	err = contracts.Validate(s, doc.value, "the file does not match the configuration schema")
	if err == nil {
		return nil, reported, false, nil
	}
	var ce *contracts.Error
	if !errors.As(err, &ce) || len(ce.Fields) == 0 {
		return nil, nil, false, err
	}
	for _, fe := range ce.Fields {
		if propertyNameViolation(fe) {
			badKeys = true
			continue
		}
		for _, p := range locate(doc, fe) {
			problems = append(problems, p.Problem)
			reported[p.pointer] = true
		}
	}
	return problems, reported, badKeys, nil
}

// propertyNameViolation reports whether fe comes from a propertyNames rule.
// The root is an object whose own members are never checked by pattern or
// length, so such a violation at the root can only concern a key.
func propertyNameViolation(fe contracts.FieldError) bool {
	switch fe.Keyword {
	case "propertyNames":
		return true
	case "pattern", "minLength", "maxLength":
		return fe.Pointer == ""
	}
	return false
}

type locatedProblem struct {
	Problem
	pointer string
}

// locate turns one schema violation into problems at file positions.
func locate(doc *document, fe contracts.FieldError) []locatedProblem {
	ptr := fe.Pointer
	switch {
	case fe.Keyword == "additionalProperties" && unsupportedExecutor(doc, parentPointer(ptr)):
		// What an executor of a kind this gateway does not run may have is
		// moot: its kind is reported.
		return nil
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
		msg := fe.Detail
		if kind, ok := executorKindAt(doc, parentPointer(ptr)); ok && fe.Detail == "is required" {
			msg = "is required by " + kind.article() + " " + string(kind) + " executor"
		}
		if kind, ok := guardKindAt(doc, parentPointer(ptr)); ok && fe.Detail == "is required" {
			if alts := guardAlternatives[kind]; slices.Contains(alts, lastToken(ptr)) {
				// One problem for the guard, not one per alternative.
				return []locatedProblem{{Problem{Line: line, Column: col, Field: fieldPath(doc.value, parent),
					Message: "needs at least one of " + joinOr(alts)}, ptr}}
			}
		}
		return []locatedProblem{{Problem{Line: line, Column: col, Field: fieldPath(doc.value, ptr), Message: msg}, ptr}}
	}
	pos := doc.at(ptr)
	line, col := pos.Line, pos.Column
	if pos.implicitNull && pos.KeyLine > 0 {
		line, col = pos.KeyLine, pos.KeyColumn
	}
	return []locatedProblem{{Problem{Line: line, Column: col, Field: fieldPath(doc.value, ptr), Message: explain(doc, fe, pos, ptr)}, ptr}}
}

// unsupportedExecutor reports whether ptr is an executor whose kind is a
// string this gateway does not run.
func unsupportedExecutor(doc *document, ptr string) bool {
	if typeAt(ptr) != reflect.TypeFor[Executor]() {
		return false
	}
	v, _ := lookup(doc.value, ptr+"/kind")
	kind, ok := v.(string)
	return ok && !Kind(kind).Known()
}

// explain words a violation for the reader of the file.
func explain(doc *document, fe contracts.FieldError, pos position, ptr string) string {
	switch fe.Detail {
	case "must be at least 1 characters long", "must have at least 1 items", "must have at least 1 properties":
		return "must not be empty"
	}
	switch fe.Keyword {
	case "pattern":
		switch fe.Detail {
		case "must match the pattern " + durationPattern:
			return "must be a Go duration such as 30s, 5m or 1h30m"
		case "must match the pattern " + identifierPattern:
			return "must be an identifier: 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit"
		case "must match the pattern " + evidenceNamePattern:
			return "must be an evidence name: 1 to 64 lowercase letters, digits, '_', '.' or '-', starting with a letter"
		case "must match the pattern " + apiKeyPattern:
			return "must be a reference ${NAME} to an environment variable of the gateway that holds the key, never the key itself"
		case "must match the pattern " + hourWindowPattern:
			return "must be a window HH:MM-HH:MM such as 09:00-17:00"
		case "must match the pattern " + recordPathPattern:
			return "must be a path into the call's arguments or output: $.arguments or $.output, then .MEMBER steps of letters, digits, '_' and '-' (such as $.arguments.title or $.output.url)"
		case "must match the pattern ^/":
			return "must be an absolute path (starting with /)"
		case "must match the pattern " + termPattern:
			return "must be a term: a letter or a digit, then up to 127 letters, digits, spaces and . _ ' / + -"
		}
	case "format":
		if fe.Detail == "must be a valid uri" {
			return "must be an absolute URI such as https://host.example"
		}
	case "type":
		if ptr == "/version" {
			return "must be a string: quote it, as in version: \"1.0.0\""
		}
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
		switch values := enumValues(ptr); len(values) {
		case 0:
		case 1:
			return "must be " + values[0]
		default:
			return "must be one of " + strings.Join(values, ", ")
		}
	}
	return fe.Detail
}

// enumValues lists the values the schema allows at ptr, when it is an enum
// of strings.
func enumValues(ptr string) []string {
	s := schemaAt(ptr)
	list, _ := s["enum"].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// schemaDoc is schema.json decoded, for looking up what a member allows.
var schemaDoc = sync.OnceValue(func() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(schemaJSON, &m); err != nil {
		return nil
	}
	return m
})

// schemaAt returns the subschema of schema.json that governs the value at
// ptr, following properties, items, additionalProperties and local $refs;
// nil when there is none (the subschemas under allOf are not consulted).
func schemaAt(ptr string) map[string]any {
	root := schemaDoc()
	defs, _ := root["$defs"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		for i := 0; s != nil && i < 16; i++ {
			ref, ok := s["$ref"].(string)
			if !ok {
				return s
			}
			s, _ = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		return s
	}
	s := resolve(root)
	for _, tok := range splitPointer(ptr) {
		if s == nil {
			return nil
		}
		props, _ := s["properties"].(map[string]any)
		switch next := props[tok]; {
		case next != nil:
			s, _ = next.(map[string]any)
		case s["items"] != nil:
			s, _ = s["items"].(map[string]any)
		default:
			s, _ = s["additionalProperties"].(map[string]any)
		}
		s = resolve(s)
	}
	return s
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
	var msg string
	parent := parentPointer(ptr)
	if kind, ok := executorKindAt(doc, parent); ok {
		msg = unknownExecutorMember(kind, name)
	} else if kind, ok := guardKindAt(doc, parent); ok {
		msg = unknownGuardMember(kind, name)
	} else if kind, ok := connectionKindAt(doc, parent); ok {
		msg = unknownConnectionMember(kind, name)
	} else if kind, ok := auditSinkKindAt(doc, parent); ok {
		msg = unknownAuditSinkMember(kind, name)
	} else {
		msg = "is not a known " + what
		if known := knownFields(parent); len(known) > 0 {
			if s, ok := suggest(name, known); ok {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else {
				msg += "; known " + what + "s: " + strings.Join(known, ", ")
			}
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

// typeAt returns the Go type of the value at ptr, following the Config
// types (which the schema mirrors; a test holds them together), or nil when
// ptr leaves them.
func typeAt(ptr string) reflect.Type {
	t := reflect.TypeFor[Config]()
	for _, tok := range splitPointer(ptr) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := jsonField(t, tok)
			if !ok {
				return nil
			}
			t = f.Type
		case reflect.Slice, reflect.Map:
			t = t.Elem()
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// knownFields lists the members the object at ptr may have, from the Config
// types.
func knownFields(ptr string) []string {
	t := typeAt(ptr)
	if t == nil || t.Kind() != reflect.Struct {
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
	return editdist.Distance([]byte(a), []byte(b))
}
