// Package jsonvalue holds helpers for decoded JSON values: the
// map[string]any, []any and scalars (string, float64, bool, nil and the
// like) that encoding/json produces.
package jsonvalue

// Clone returns a deep copy of v: every map[string]any and []any it
// holds, at any depth, is copied, so changing the copy never changes v.
// A nil map or list held below v is copied as an empty one. Any other
// value is returned as it is: decoded JSON scalars are immutable.
func Clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = Clone(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = Clone(x)
		}
		return out
	default:
		return v
	}
}

// CloneMap returns a deep copy of the object m, as Clone does; nil for
// nil.
func CloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return Clone(m).(map[string]any)
}
