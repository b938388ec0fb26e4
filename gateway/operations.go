package gateway

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"strings"
)

// operations maps each implemented operationId (or praxec dispatch
// operation) to its implementation. An operation missing here answers
// not-implemented.
func (s *Service) operations() map[string]operation {
	return map[string]operation{
		"submitIntent": {mutate: s.submitIntent},
		"getTrace":     {read: s.getTrace},
	}
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID mints an identifier: prefix, underscore, 26 random base32 letters
// (128 bits).
func newID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// NewIdempotencyKey mints a fresh key for the links the gateway hands out.
func NewIdempotencyKey() string {
	return newID("idem")
}

func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// stringArg returns a string argument, "" when absent.
func stringArg(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

// stringsArg returns a string-array argument.
func stringsArg(args map[string]any, name string) []string {
	raw, _ := args[name].([]any)
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
