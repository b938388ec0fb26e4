package httpapi

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/praxa/praxa/contracts"
)

// parseQuery parses a raw query string strictly: malformed escapes and
// invalid UTF-8 are refused, and the bearer-token parameter is never read
// as an argument (authentication refuses it first).
func parseQuery(raw string) (map[string][]string, error) {
	out := map[string][]string{}
	if raw == "" {
		return out, nil
	}
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || !utf8.ValidString(key) || !utf8.ValidString(val) {
			return nil, contracts.Errorf(contracts.CodeInvalidParams, "the query string is malformed")
		}
		out[key] = append(out[key], val)
	}
	return out, nil
}
