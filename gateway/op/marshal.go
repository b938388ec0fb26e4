package op

import (
	"encoding/json"
	"strings"
)

// Marshal encodes v as the service encodes its answers and the documents
// it stores: without HTML escaping and without a trailing newline. A
// json.RawMessage is taken as encoded already.
func Marshal(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}
