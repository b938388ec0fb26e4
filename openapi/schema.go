package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// ErrUnembeddableSchema is returned, wrapped, by Build when a contract schema
// uses a keyword that cannot be copied into the document as is: "$defs",
// "$id", "$ref" and their kin. kin-openapi resolves a schema's local
// references against the document root, not against the schema, so such a
// schema would first need its definitions lifted into components.
var ErrUnembeddableSchema = errors.New("openapi: contract schema cannot be embedded")

// idempotencyKeyProperty is the tool argument that travels in the
// Idempotency-Key header over REST.
const idempotencyKeyProperty = "idempotencyKey"

// jsonObject is a decoded JSON object.
type jsonObject = map[string]any

// unembeddable lists the keywords ErrUnembeddableSchema refuses.
var unembeddable = []string{
	"$defs", "definitions", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor",
	"$recursiveRef", "$recursiveAnchor",
}

// Keywords whose values are subschemas, by shape.
var (
	schemaMapKeywords = []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
	schemaKeywords    = []string{
		"items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
	}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
)

// decodeSchema decodes a contract schema, drops its "$schema" (the document's
// jsonSchemaDialect says the same) and checks that it can be embedded.
func decodeSchema(raw json.RawMessage) (jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var s jsonObject
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if s == nil {
		return nil, errors.New("decode: the schema is not an object")
	}
	delete(s, "$schema")
	if err := checkEmbeddable(s, ""); err != nil {
		return nil, err
	}
	return s, nil
}

// checkEmbeddable walks every subschema of s, refusing the keywords of
// unembeddable. Values of data keywords (enum, const, default, examples)
// and property names are not schemas and are not inspected.
func checkEmbeddable(s jsonObject, pointer string) error {
	for _, k := range unembeddable {
		if _, ok := s[k]; ok {
			return fmt.Errorf("%w: %q at %q", ErrUnembeddableSchema, k, pointer+"/"+k)
		}
	}
	sub := func(v any, at string) error {
		if m, ok := v.(map[string]any); ok {
			return checkEmbeddable(m, at)
		}
		return nil // a boolean schema
	}
	for _, k := range schemaMapKeywords {
		m, _ := s[k].(map[string]any)
		for _, name := range sortedKeys(m) {
			if err := sub(m[name], pointer+"/"+k+"/"+escapePointer(name)); err != nil {
				return err
			}
		}
	}
	for _, k := range schemaKeywords {
		if err := sub(s[k], pointer+"/"+k); err != nil {
			return err
		}
	}
	for _, k := range schemaListKeywords {
		list, _ := s[k].([]any)
		for i, v := range list {
			if err := sub(v, fmt.Sprintf("%s/%s/%d", pointer, k, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// withoutProperties returns a copy of the object schema s without the named
// properties, in properties and in required alike. Empty names are ignored.
func withoutProperties(s jsonObject, names ...string) jsonObject {
	out := maps.Clone(s)
	if props, ok := s["properties"].(map[string]any); ok {
		props = maps.Clone(props)
		for _, n := range names {
			delete(props, n)
		}
		out["properties"] = props
	}
	if req, ok := s["required"].([]any); ok {
		req = slices.DeleteFunc(slices.Clone(req), func(v any) bool {
			n, _ := v.(string)
			return slices.Contains(names, n)
		})
		if len(req) == 0 {
			delete(out, "required")
		} else {
			out["required"] = req
		}
	}
	return out
}

// scalar reports whether s describes a single scalar type, as a query
// parameter needs.
func scalar(s jsonObject) bool {
	t, _ := s["type"].(string)
	switch t {
	case "string", "integer", "number", "boolean":
		return true
	}
	return false
}

// toSchema converts a decoded JSON Schema to kin-openapi's model.
func toSchema(s jsonObject) (*openapi3.Schema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	out := openapi3.NewSchema()
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("convert schema: %w", err)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
