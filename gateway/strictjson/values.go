package strictjson

import (
	"encoding/json"
	"math"
)

// Plain reports whether v is made only of the Go values encoding/json
// decodes a JSON document into an any as (nil, booleans, strings, finite
// float64s, []any and map[string]any): v is then what ViaJSON would give,
// and can be kept as it is.
func Plain(v any) bool {
	switch v := v.(type) {
	case nil, bool, string:
		return true
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case map[string]any:
		for _, x := range v {
			if !Plain(x) {
				return false
			}
		}
		return true
	case []any:
		for _, x := range v {
			if !Plain(x) {
				return false
			}
		}
		return true
	}
	return false
}

// ViaJSON returns v as encoding/json decodes v's encoding into an any
// (ok false when v cannot be encoded).
func ViaJSON(v any) (any, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var out any
	return out, json.Unmarshal(b, &out) == nil
}
