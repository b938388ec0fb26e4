package config

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/praxa/praxa/contracts"
)

// dialect2020 is the dialect of every tool schema; draft07 is accepted
// when it reads the same under 2020-12 (see CheckToolSchema).
const (
	dialect2020 = "https://json-schema.org/draft/2020-12/schema"
	draft07     = "http://json-schema.org/draft-07/schema"
	draft07s    = "https://json-schema.org/draft-07/schema"
)

// CheckToolSchema applies the declarative-manifest rules of seeds/002 to
// a tool's input schema from outside the configuration (an imported
// upstream tool, a manifest), or a manifest's output schema: the root is
// an object schema (type: object);
// the dialect is JSON Schema 2020-12 (a $schema naming any other is
// refused, except draft-07 when the schema uses none of the keywords whose
// meaning changed: it then reads the same as 2020-12 and is taken as
// such); references are local (#…) only; $id, $vocabulary and the
// legacy $recursiveRef and $recursiveAnchor are refused anywhere; and the
// schema compiles as the contract compiles its own. It returns a detached
// copy of the schema.
func CheckToolSchema(schema any) (map[string]any, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the schema is not a JSON object")
	}
	if m["type"] != "object" {
		return nil, fmt.Errorf("the schema's root must be an object schema (type: object), not %v", m["type"])
	}
	if err := checkSchemaKeywords(m, ""); err != nil {
		return nil, err
	}
	if d, ok := m["$schema"]; ok {
		switch strings.TrimSuffix(fmt.Sprint(d), "#") {
		case dialect2020:
		case draft07, draft07s:
			// Most MCP servers built on zod declare draft-07. A draft-07
			// schema that uses none of the keywords whose meaning changed
			// in 2020-12 means the same thing read as 2020-12: it is
			// accepted as 2020-12 (its $schema dropped); one that uses
			// them is refused, never evaluated under draft-07 rules.
			if k := legacyKeyword(m, ""); k != "" {
				return nil, fmt.Errorf("the schema declares draft-07 and uses %s, whose meaning differs in JSON Schema 2020-12, the only dialect accepted", k)
			}
			delete(m, "$schema")
			b, _ = json.Marshal(m)
		default:
			return nil, fmt.Errorf("the schema declares the dialect %v; only JSON Schema 2020-12 is accepted", d)
		}
	}
	if _, err := contracts.CompileSchema("tool", b); err != nil {
		return nil, fmt.Errorf("the schema does not compile: %v", strings.TrimPrefix(err.Error(), "contracts: schema tool: "))
	}
	return m, nil
}

// checkSchemaKeywords walks a schema refusing what could weaken it.
func checkSchemaKeywords(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "$recursiveRef", "$recursiveAnchor", "$vocabulary", "$id":
				return fmt.Errorf("%s/%s: %s is not accepted in a tool schema", at, k, k)
			case "$schema":
				if at != "" {
					return fmt.Errorf("%s/$schema: a nested $schema is not accepted", at)
				}
			case "$ref", "$dynamicRef":
				if s, _ := x.(string); !strings.HasPrefix(s, "#") {
					return fmt.Errorf("%s/%s: %v refers outside the schema; only local references (#…) are accepted", at, k, x)
				}
			}
			if err := checkSchemaKeywords(x, at+"/"+k); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range v {
			if err := checkSchemaKeywords(x, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// legacyKeyword returns the first keyword of a draft-07 schema whose
// meaning differs in 2020-12: items as an array, additionalItems,
// dependencies.
func legacyKeyword(v any, at string) string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "additionalItems", "dependencies":
				return at + "/" + k
			case "items":
				if _, isList := x.([]any); isList {
					return at + "/items (a list)"
				}
			}
			if s := legacyKeyword(x, at+"/"+k); s != "" {
				return s
			}
		}
	case []any:
		for i, x := range v {
			if s := legacyKeyword(x, fmt.Sprintf("%s/%d", at, i)); s != "" {
				return s
			}
		}
	}
	return ""
}
