package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"
)

// MarshalJSON renders doc as indented JSON ending in a newline. Object keys
// come out sorted, so the output is deterministic.
func MarshalJSON(doc *openapi3.T) ([]byte, error) {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi: marshal JSON: %w", err)
	}
	return append(b, '\n'), nil
}

// MarshalYAML renders doc as YAML with two-space indentation. Mapping keys
// come out sorted, so the output is deterministic.
func MarshalYAML(doc *openapi3.T) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("openapi: marshal YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("openapi: marshal YAML: %w", err)
	}
	return buf.Bytes(), nil
}
