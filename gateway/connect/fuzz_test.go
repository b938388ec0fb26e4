package connect

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
)

// configAuth is an auth of kind for the fuzz targets.
func configAuth(kind string) config.ConnectionAuth {
	return config.ConnectionAuth{Kind: kind, TokenEndpoint: "https://as.test/token", ClientID: "gw", Audience: "https://api.test"}
}

// FuzzRetryAfter: any Retry-After value is refused or read as a wait that
// is never negative.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", " 5 ", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if d, ok := retryAfter(v); ok && d < 0 {
			t.Fatalf("%q: a negative wait %v", v, d)
		}
	})
}

// FuzzResolvePath: a path argument resolves to a clean absolute path, or
// is refused; ".." is always refused; nothing panics.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"a/b", "/etc/passwd", "../x", "a/../../b", "", ".", "./x", "a//b/", "\x00"} {
		f.Add(s)
	}
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, p string) {
		got, err := resolvePath(p, base)
		if err != nil {
			return
		}
		for _, el := range strings.Split(filepath.ToSlash(p), "/") {
			if el == ".." {
				t.Fatalf("%q: accepted with ..", p)
			}
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("%q: resolved to %q, not a clean absolute path", p, got)
		}
	})
}

// FuzzParseChatCompletion: any body a model server answers is read as a
// chat completion or refused with an error; nothing panics, and token
// counts are never negative.
func FuzzParseChatCompletion(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"image_url"},{"text":"b"}]}}]}`,
		`{"choices":[{"message":{"content":null}}]}`,
		`{"choices":[]}`,
		`{"error":{"message":"bad key sk-123"}}`,
		`{"error":"overloaded"}`,
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":-1}}`,
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1e40}}`,
		`{} {}`, `[]`, `null`, ``, `{"choices":[{"message":{"content":7}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := parseChatCompletion(body)
		if err != nil {
			if a != (chatAnswer{}) {
				t.Fatalf("an error (%v) with an answer %+v", err, a)
			}
			return
		}
		if a.Usage.Prompt < 0 || a.Usage.Completion < 0 || a.Usage.Total < 0 {
			t.Fatalf("negative usage %+v", a.Usage)
		}
	})
}

// FuzzAnswerJSON: a model's text is read as one JSON value or refused;
// what is read encodes back to JSON that reads the same.
func FuzzAnswerJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "```json\n{\"a\":1}\n```", "```\n[1,2]\n```", "```{\"a\":1}```", `"x"`, `1 2`, "Sure! {\"a\":1}", "``````", "```", "   "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, ok := answerJSON(text)
		if !ok {
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%q read as %v, which does not encode: %v", text, v, err)
		}
		w, ok := answerJSON(string(b))
		if !ok || !reflect.DeepEqual(v, w) {
			t.Fatalf("%q read as %s, which reads back as %v", text, b, w)
		}
	})
}

// FuzzParseJSON: what a cli command prints on stdout, or a REST upstream
// answers as its body, becomes the move's output json / body only when it
// is exactly one JSON object or array; what is accepted is valid JSON,
// marshals again (the run's context is stored as JSON) and reads back the
// same; nothing panics.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2,3]`, ` {"n": 12345678901234567890123} `, `{"a":1}{"b":2}`, `{"a":1} x`,
		`"str"`, `42`, `null`, `[`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `[[[[[[[[[[]]]]]]]]]]`, `{"a":1e999}`, `{"a":-0}`, "\ufeff{}", ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := parseJSON(b)
		if !ok {
			return
		}
		if !json.Valid(bytes.TrimSpace(b)) {
			t.Fatalf("%q: accepted, but it is not valid JSON", b)
		}
		switch v.(type) {
		case map[string]any, []any:
		default:
			t.Fatalf("%q: accepted as %T, want an object or an array", b, v)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%q: the value does not marshal: %v", b, err)
		}
		again, ok := parseJSON(out)
		if !ok {
			t.Fatalf("%q: its marshalled form %q is refused", b, out)
		}
		if out2, _ := json.Marshal(again); !bytes.Equal(out, out2) {
			t.Fatalf("%q: not stable: %s then %s", b, out, out2)
		}
	})
}

// FuzzTokenAnswer: whatever a token endpoint answers, a token is taken
// only from a 200 answer, and an error text never carries the caller's
// token or the client's secret, even when the answer echoes them.
func FuzzTokenAnswer(f *testing.F) {
	const subject, secret = "subject-token-0123456789", "client-secret-0123456789"
	for _, s := range []struct {
		status int
		body   string
	}{
		{200, `{"access_token":"x","token_type":"Bearer","expires_in":300}`},
		{200, `{"token_type":"Bearer"}`},
		{200, `{"access_token":"x","token_type":"` + secret + `"}`},
		{400, `{"error":"invalid_grant","error_description":"` + subject + ` refused"}`},
		{401, `{"error":"` + secret + `"}`},
		{503, `not json`},
		{200, `{"access_token":"x","expires_in":-5}`},
		{200, `{"access_token":"x","expires_in":99999999999999999}`},
	} {
		f.Add(s.status, s.body)
	}
	tokens := NewTokens(nil)
	f.Fuzz(func(t *testing.T, status int, body string) {
		for _, kind := range []string{"token-exchange", "client-credentials"} {
			a := &tokenAuth{conn: "api", kind: "rest", cfg: configAuth(kind)}
			tok, expiry, err := tokens.answer(a, status, []byte(body), secretList(subject, secret))
			switch {
			case err != nil:
				if tok != "" {
					t.Fatalf("a token with an error")
				}
				if strings.Contains(err.Error(), subject) || strings.Contains(err.Error(), secret) {
					t.Fatalf("the error carries a secret: %v", err)
				}
			case status != 200 || tok == "":
				t.Fatalf("status %d gave token %q", status, tok)
			case !expiry.IsZero() && expiry.Before(time.Now()):
				t.Fatalf("an expiry in the past: %v", expiry)
			}
		}
	})
}

// FuzzParsePrivateKey: any bytes are read as a supported private key or
// refused with an error that does not quote them; nothing panics.
func FuzzParsePrivateKey(f *testing.F) {
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"))
	f.Add([]byte("not pem"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParsePrivateKey(data)
		if err != nil {
			if k != nil {
				t.Fatal("a key with an error")
			}
			if len(data) > 8 && strings.Contains(err.Error(), string(data)) {
				t.Fatalf("the error quotes the input: %v", err)
			}
		}
	})
}
