package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// SchemaDialect is the JSON Schema dialect of every contract schema.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// ErrRemoteReference is returned, wrapped, when a schema refers to anything
// outside itself: contract schemas resolve local references only.
var ErrRemoteReference = errors.New("contracts: remote schema references are refused")

// refusingLoader refuses every resource that is not embedded in the compiler.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: %s", ErrRemoteReference, url)
}

// CompileSchema compiles a JSON Schema 2020-12 document the way the contract
// compiles its own: the dialect defaults to 2020-12, formats are asserted,
// and any reference outside the document is refused. name identifies the
// document in errors.
func CompileSchema(name string, schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("contracts: schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refusingLoader{})
	url := "urn:praxa:schema:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("contracts: schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		var lue *jsonschema.LoadURLError
		if errors.As(err, &lue) {
			err = &loadError{err: err, cause: lue.Err}
		}
		return nil, fmt.Errorf("contracts: schema %s: %w", name, err)
	}
	return s, nil
}

// loadError keeps a compile error whose chain holds a
// *jsonschema.LoadURLError and also exposes the loader's own error, which
// LoadURLError does not unwrap, so that errors.Is(err, ErrRemoteReference)
// holds for a refused reference.
type loadError struct {
	err, cause error
}

func (e *loadError) Error() string   { return e.err.Error() }
func (e *loadError) Unwrap() []error { return []error{e.err, e.cause} }

// compiledTool holds the input and output schemas of one tool or operator
// endpoint, compiled on first use.
type compiledTool struct {
	once          sync.Once
	in, out       json.RawMessage // the schemas to compile
	input, output *jsonschema.Schema
	err           error
}

// schemaSet holds the schemas of every tool, or of every operator endpoint,
// by name, each compiled on first use.
type schemaSet struct {
	what   string // the kind of entry, "tool" or "endpoint", as errors name it
	byName map[string]*compiledTool
}

// newSchemaSet prepares, for every entry of items, its schemas under its name.
func newSchemaSet[T any](what string, items []T, schemas func(T) (name string, in, out json.RawMessage)) schemaSet {
	m := make(map[string]*compiledTool, len(items))
	for _, it := range items {
		name, in, out := schemas(it)
		m[name] = &compiledTool{in: in, out: out}
	}
	return schemaSet{what: what, byName: m}
}

// check validates v against the output schema of name when output is set,
// its input schema otherwise, reporting a violation under message.
func (s schemaSet) check(name string, output bool, v any, message string) error {
	ct, ok := s.byName[name]
	if !ok {
		return fmt.Errorf("contracts: unknown %s %q", s.what, name)
	}
	ct.once.Do(func() {
		if ct.input, ct.err = CompileSchema(name+".input", ct.in); ct.err != nil {
			return
		}
		ct.output, ct.err = CompileSchema(name+".output", ct.out)
	})
	if ct.err != nil {
		return ct.err
	}
	if output {
		return validate(ct.output, v, message)
	}
	return validate(ct.input, v, message)
}

var toolSchemas = newSchemaSet("tool", catalogue, func(t Tool) (string, json.RawMessage, json.RawMessage) {
	return t.Name, t.InputSchema, t.OutputSchema
})

// ValidateInput checks decoded JSON arguments (map[string]any, []any,
// string, float64 or json.Number, bool, nil) against the tool's input schema.
// A violation is an *Error with code INVALID_PARAMS listing every field
// error, sorted by pointer, with messages that never echo the value.
func ValidateInput(tool string, args any) error {
	return toolSchemas.check(tool, false, args, "the arguments do not match the input schema of "+tool)
}

// ValidateOutput checks a decoded successful response against the tool's
// output schema; tests use it to hold real responses to the contract.
func ValidateOutput(tool string, result any) error {
	return toolSchemas.check(tool, true, result, "the result does not match the output schema of "+tool)
}

// Validate checks a decoded JSON value against a schema compiled with
// CompileSchema and reports violations the way ValidateInput does.
func Validate(s *jsonschema.Schema, v any, message string) error {
	return validate(s, v, message)
}

func validate(s *jsonschema.Schema, v any, message string) error {
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Error{Code: CodeInvalidParams, Message: message, Cause: err}
	}
	// The validator's own error text quotes the offending values; the field
	// errors say the same without them, so it is not kept as the cause.
	return &Error{Code: CodeInvalidParams, Message: message, Fields: fieldErrors(ve)}
}

func fieldErrors(ve *jsonschema.ValidationError) []FieldError {
	var out []FieldError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, describe(e)...)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.SortFunc(out, func(a, b FieldError) int {
		if c := strings.Compare(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		if c := strings.Compare(a.Keyword, b.Keyword); c != 0 {
			return c
		}
		return strings.Compare(a.Detail, b.Detail)
	})
	return slices.CompactFunc(out, func(a, b FieldError) bool { return a == b })
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// members reports one FieldError per named member of the object at e's
// location: a missing or unknown member is itself the location of the error.
func members(fe FieldError, e *jsonschema.ValidationError, names []string, detail string) []FieldError {
	out := make([]FieldError, len(names))
	for i, n := range names {
		fe.Pointer = pointer(append(slices.Clone(e.InstanceLocation), n))
		fe.Detail = detail
		out[i] = fe
	}
	return out
}

// describe turns one leaf violation into FieldErrors whose details name the
// rule, never the offending value.
func describe(e *jsonschema.ValidationError) []FieldError {
	fe := FieldError{Pointer: pointer(e.InstanceLocation)}
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		fe.Keyword = kp[len(kp)-1]
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return members(fe, e, k.Missing, "is required")
	case *kind.AdditionalProperties:
		return members(fe, e, k.Properties, "is not a known field")
	case *kind.Type:
		fe.Detail = fmt.Sprintf("must be of type %s", strings.Join(k.Want, " or "))
	case *kind.MinLength:
		fe.Detail = fmt.Sprintf("must be at least %d characters long", k.Want)
	case *kind.MaxLength:
		fe.Detail = fmt.Sprintf("must be at most %d characters long", k.Want)
	case *kind.Pattern:
		fe.Detail = fmt.Sprintf("must match the pattern %s", k.Want)
	case *kind.Enum:
		fe.Detail = "must be one of the allowed values"
	case *kind.Const:
		fe.Detail = "must equal the constant value"
	case *kind.Format:
		fe.Detail = fmt.Sprintf("must be a valid %s", k.Want)
	case *kind.Minimum:
		fe.Detail = "must be at least " + k.Want.RatString()
	case *kind.Maximum:
		fe.Detail = "must be at most " + k.Want.RatString()
	case *kind.ExclusiveMinimum:
		fe.Detail = "must be greater than " + k.Want.RatString()
	case *kind.ExclusiveMaximum:
		fe.Detail = "must be less than " + k.Want.RatString()
	case *kind.MinItems:
		fe.Detail = fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.MaxItems:
		fe.Detail = fmt.Sprintf("must have at most %d items", k.Want)
	case *kind.MinProperties:
		fe.Detail = fmt.Sprintf("must have at least %d properties", k.Want)
	case *kind.MaxProperties:
		fe.Detail = fmt.Sprintf("must have at most %d properties", k.Want)
	case *kind.UniqueItems:
		fe.Detail = "must not contain duplicate items"
	case *kind.MultipleOf:
		fe.Detail = "must be a multiple of the declared step"
	case *kind.FalseSchema:
		fe.Detail = "is not allowed"
	default:
		fe.Detail = "violates the " + fe.Keyword + " rule"
	}
	return []FieldError{fe}
}

// schema is a JSON Schema under construction. The helpers below keep every
// contract schema in one consistent, strict style.
type schema map[string]any

func (s schema) with(k string, v any) schema {
	s[k] = v
	return s
}

func (s schema) desc(d string) schema { return s.with("description", d) }

// object is a closed object: only the listed properties, the named ones
// required.
func object(required []string, props map[string]schema) schema {
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// openObject is a free-form JSON object bounded in its number of members.
func openObject(maxProps int) schema {
	return schema{"type": "object", "maxProperties": maxProps}
}

// record is an output object: the listed properties typed, the named ones
// required, further members tolerated so that responses can grow without
// breaking readers.
func record(required []string, props map[string]schema) schema {
	s := schema{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(minLen, maxLen int) schema {
	return schema{"type": "string", "minLength": minLen, "maxLength": maxLen}
}

func integer(minimum, maximum int64) schema {
	return schema{"type": "integer", "minimum": minimum, "maximum": maximum}
}

func array(items schema, maxItems int) schema {
	return schema{"type": "array", "items": items, "maxItems": maxItems}
}

func enum(values ...string) schema {
	return schema{"type": "string", "enum": values}
}

func outString() schema  { return schema{"type": "string"} }
func outInteger() schema { return schema{"type": "integer"} }
func outNumber() schema  { return schema{"type": "number"} }
func outObject() schema  { return schema{"type": "object"} }
func outArray(items schema) schema {
	return schema{"type": "array", "items": items}
}

// root marks s as a top-level document of the 2020-12 dialect and renders it.
func root(s schema) json.RawMessage {
	s["$schema"] = SchemaDialect
	b, err := json.Marshal(s)
	if err != nil {
		panic("contracts: schema does not marshal: " + err.Error())
	}
	return b
}
