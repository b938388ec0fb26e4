package httpapi

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// FuzzParseKeyHeader: an Idempotency-Key field is refused as
// idempotency-key-invalid or yields a key without the sf-string's quotes
// and escapes (its length and alphabet are the contract's check, which
// follows); nothing panics.
func FuzzParseKeyHeader(f *testing.F) {
	for _, s := range []string{`"abcdefghijklmnop"`, "abcdefghijklmnop", `""`, `"a"`, "abc;v=1", `"abcdefghijklmnop";x`} {
		f.Add(s, "")
	}
	f.Add("abcdefghijklmnop", "qrstuvwxyzabcdefg")
	f.Fuzz(func(t *testing.T, first, second string) {
		h := http.Header{}
		h.Add("Idempotency-Key", first)
		if second != "" {
			h.Add("Idempotency-Key", second)
		}
		key, sent, err := parseKeyHeader(h)
		if !sent && err == nil && key != "" {
			t.Fatalf("%q: a key %q from no header", first, key)
		}
		if err == nil && second == "" {
			// The key is the field itself, or the inside of its quotes
			// with no quote or escape left in it.
			v := strings.TrimSpace(first)
			want := v
			if strings.HasPrefix(v, `"`) {
				want = strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)
			}
			if key != want || strings.HasPrefix(v, `"`) && strings.ContainsAny(key, "\"\\") {
				t.Fatalf("%q: key %q", first, key)
			}
		}
		if err != nil && err.Code != contracts.CodeIdempotencyKeyInvalid {
			t.Fatalf("%q %q: refused with %s", first, second, err.Code)
		}
	})
}

// FuzzParseQuery: a query string is refused or parsed; what it parses
// encodes back to a query that parses the same.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"a=1&b=2", "a=1&a=2", "status=pending", "%zz", "a=%20b+c", ";x=1", "=v", "k="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := parseQuery(raw)
		if err != nil {
			return
		}
		again, err := parseQuery(url.Values(got).Encode())
		if err != nil || !reflect.DeepEqual(normalQuery(got), normalQuery(again)) {
			t.Fatalf("%q: %v, re-encoded %v (%v)", raw, got, again, err)
		}
	})
}

func normalQuery(m map[string][]string) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// FuzzAccept: an Accept field is untrusted. Reading it never panics; a
// field that parses to nothing admits the answer types, and so does any
// field followed by application/json (the most specific range, q=1);
// a range's q is from 0 to 1.
func FuzzAccept(f *testing.F) {
	for _, s := range []string{"application/json", "*/*;q=0", "application/*+json;q=0.5, text/html", "a/b;q=1.000;x=y", ",,;", "*/json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		got := acceptsAny([]string{accept}, answerTypes)
		if !acceptsAny([]string{accept + ", application/json"}, answerTypes) {
			t.Fatalf("%q, application/json admits nothing", accept)
		}
		if strings.Trim(accept, " ,") == "" && !got {
			t.Fatalf("%q admits nothing", accept)
		}
		if mr, ok := parseMediaRange(accept); ok && (mr.q < 0 || mr.q > 1 || mr.typ == "" || mr.sub == "") {
			t.Fatalf("%q parses to %+v", accept, mr)
		}
	})
}
