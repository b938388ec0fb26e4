package op

import "encoding/json"

// StringArg returns a string argument, "" when absent or not a string.
func StringArg(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

// StringsArg returns the strings of a string-array argument (none when
// absent; elements that are not strings are left out).
func StringsArg(args map[string]any, name string) []string {
	raw, _ := args[name].([]any)
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Int64Arg returns an integer argument (decoded as a json.Number or a
// float64), 0 when absent.
func Int64Arg(args map[string]any, name string) int64 {
	switch v := args[name].(type) {
	case json.Number:
		n, _ := v.Int64()
		return n
	case float64:
		return int64(v)
	}
	return 0
}
