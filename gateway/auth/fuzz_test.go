package auth

import (
	"encoding/base64"
	"net/http"
	"testing"
)

// FuzzExtractBearer: any Authorization header is refused or yields a
// token that is an RFC 6750 b64token; nothing panics.
func FuzzExtractBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc.def.ghi", "bearer x", "Bearer ", "Basic Zm9v", "Bearer a b", "Bearer =", "Bearer a=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r, _ := http.NewRequest(http.MethodGet, "http://gw.test/v8/missions", nil)
		r.Header.Set("Authorization", h)
		tok, err := ExtractBearer(r)
		if err == nil && (tok == "" || !isB64Token(tok)) {
			t.Fatalf("%q: accepted token %q", h, tok)
		}
	})
}

// FuzzPeek: a JWT's header is read from any string without panicking; a
// string that is not three dot-separated parts is refused.
func FuzzPeek(f *testing.F) {
	hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","typ":"at+jwt","kid":"k1"}`))
	f.Add(hdr + ".e30.sig")
	f.Add("a.b")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "..")
	f.Fuzz(func(t *testing.T, raw string) {
		_, _, refusal := peek(raw)
		if refusal == nil && countDots(raw) != 2 {
			t.Fatalf("%q: accepted without three parts", raw)
		}
	})
}

func countDots(s string) int {
	n := 0
	for i := range len(s) {
		if s[i] == '.' {
			n++
		}
	}
	return n
}

// FuzzParseJWKS: any body is refused or yields keys that each hold a
// public key; nothing panics.
func FuzzParseJWKS(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"a"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`))
	f.Add([]byte(`{"keys":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		keys, err := parseJWKS(body)
		if err != nil {
			return
		}
		for _, k := range keys {
			if k == nil || k.pub == nil {
				t.Fatalf("%q: a key without a public key", body)
			}
		}
	})
}
