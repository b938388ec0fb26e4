// Package redact is the one rule of what an audit event never shows
// outside the store: a member whose name suggests a secret (a token, a
// password, an authorization header, an idempotency key, ...) reads as
// Redacted, at any depth, inside objects and lists alike. aura_get_trace,
// the audit sinks and praxa audit export show events through it
// (op.TraceEventOf), and a capability's audit block records the
// arguments and output it names through it before the event is written
// (workflow), so such a value never reaches the store either.
//
// It imports only the standard library; anything may import it.
package redact

import "strings"

// Redacted is what a redacted value reads as.
const Redacted = "[redacted]"

// sensitiveWords are the words whose presence in a member's name, in any
// case, makes its value secret.
var sensitiveWords = []string{"token", "secret", "password", "authorization", "credential", "cookie", "apikey", "api_key", "api-key", "idempotencykey", "private"}

// Sensitive reports whether a member named name holds a secret by its name.
func Sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range sensitiveWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Attributes returns a copy of attrs with every sensitive member, at any
// depth, replaced by Redacted; nil for nil. attrs is not changed.
func Attributes(attrs map[string]any) map[string]any {
	if attrs == nil {
		return nil
	}
	out := make(map[string]any, len(attrs))
	for k, v := range attrs {
		if Sensitive(k) {
			out[k] = Redacted
			continue
		}
		out[k] = Value(v)
	}
	return out
}

// Value returns v with the sensitive members of the objects it holds, at
// any depth and inside lists, replaced by Redacted: a copy where anything
// changes below, v itself for a scalar. v is not changed.
func Value(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return Attributes(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = Value(x)
		}
		return out
	case []map[string]any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = Attributes(x)
		}
		return out
	default:
		return v
	}
}
