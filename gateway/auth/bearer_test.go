package auth

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestExtractBearer(t *testing.T) {
	const tok = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"
	type want struct {
		token  string
		err    error
		reason string
	}
	tests := []struct {
		name    string
		build   func() *http.Request
		headers []string // Authorization field lines
		want    want
	}{
		{name: "valid", headers: []string{"Bearer " + tok}, want: want{token: tok}},
		{name: "scheme is case-insensitive", headers: []string{"bearer " + tok}, want: want{token: tok}},
		{name: "extra spaces", headers: []string{"Bearer   " + tok}, want: want{token: tok}},
		{name: "b64token padding", headers: []string{"Bearer abc+/~-._=="}, want: want{token: "abc+/~-._=="}},
		{name: "no header", want: want{err: ErrNoToken}},
		{name: "Basic", headers: []string{"Basic dXNlcjpwYXNz"}, want: want{err: ErrNoToken}},
		{name: "Bearer alone", headers: []string{"Bearer"}, want: want{err: ErrNoToken}},
		{name: "Bearer and a space", headers: []string{"Bearer "}, want: want{err: ErrNoToken}},
		{name: "Bearer-invalid", headers: []string{"Bearer-invalid"}, want: want{err: ErrNoToken}},
		{name: "Bearer-invalid with a value", headers: []string{"Bearer-invalid " + tok}, want: want{err: ErrNoToken}},
		{name: "empty header", headers: []string{""}, want: want{err: ErrNoToken}},
		{name: "two tokens in one header", headers: []string{"Bearer a b"}, want: want{err: ErrInvalidToken, reason: ReasonMalformed}},
		{name: "bad characters", headers: []string{"Bearer a,b"}, want: want{err: ErrInvalidToken, reason: ReasonMalformed}},
		{name: "padding in the middle", headers: []string{"Bearer a=b"}, want: want{err: ErrInvalidToken, reason: ReasonMalformed}},
		{name: "header twice", headers: []string{"Bearer " + tok, "Bearer " + tok}, want: want{err: ErrInvalidRequest, reason: ReasonRepeatedHeader}},
		{name: "header twice, one empty", headers: []string{"Bearer " + tok, ""}, want: want{err: ErrInvalidRequest, reason: ReasonRepeatedHeader}},
		{name: "64 KiB token", headers: []string{"Bearer " + strings.Repeat("a", 64<<10)}, want: want{err: ErrInvalidRequest, reason: ReasonTooLarge}},
		{name: "token at the size bound", headers: []string{"Bearer " + strings.Repeat("a", MaxTokenBytes)}, want: want{token: strings.Repeat("a", MaxTokenBytes)}},
		{name: "token in the query only", build: func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/v8/missions/x?access_token="+tok, nil)
		}, want: want{err: ErrInvalidRequest, reason: ReasonTokenInQuery}},
		{name: "token in the query and the header", build: func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/v8/missions/x?a=1&access_token="+tok, nil)
		}, headers: []string{"Bearer " + tok}, want: want{err: ErrInvalidRequest, reason: ReasonTokenInQuery}},
		{name: "encoded access_token name in the query", build: func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/v8/x?access%5Ftoken=1", nil)
		}, headers: []string{"Bearer " + tok}, want: want{err: ErrInvalidRequest, reason: ReasonTokenInQuery}},
		{name: "empty access_token in the query", build: func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/v8/x?access_token", nil)
		}, want: want{err: ErrInvalidRequest, reason: ReasonTokenInQuery}},
		{name: "other query parameters", build: func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/v8/x?token=1&access_tokens=2", nil)
		}, headers: []string{"Bearer " + tok}, want: want{token: tok}},
		{name: "token in a form body", build: func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/v8/x", strings.NewReader("a=1&access_token="+tok))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		}, want: want{err: ErrInvalidRequest, reason: ReasonTokenInBody}},
		{name: "token in a form body and the header", build: func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/v8/x", strings.NewReader("access_token="+tok))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
			return r
		}, headers: []string{"Bearer " + tok}, want: want{err: ErrInvalidRequest, reason: ReasonTokenInBody}},
		{name: "JSON body naming access_token", build: func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/v8/x", strings.NewReader(`{"access_token":"x"}`))
			r.Header.Set("Content-Type", "application/json")
			return r
		}, headers: []string{"Bearer " + tok}, want: want{token: tok}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/v8/missions/x", nil)
			if tc.build != nil {
				r = tc.build()
			}
			for _, h := range tc.headers {
				r.Header.Add("Authorization", h)
			}
			got, err := ExtractBearer(r)
			if tc.want.err == nil {
				if err != nil || got != tc.want.token {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want.token)
				}
				return
			}
			if !errors.Is(err, tc.want.err) || got != "" {
				t.Fatalf("got %q, %v; want %v", got, err, tc.want.err)
			}
			if Reason(err) != tc.want.reason {
				t.Fatalf("reason %q, want %q", Reason(err), tc.want.reason)
			}
		})
	}
}

func TestExtractBearerRestoresFormBody(t *testing.T) {
	body := "a=1&b=" + strings.Repeat("x", maxFormPeek+100)
	r := httptest.NewRequest(http.MethodPost, "/v8/x", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Authorization", "Bearer abc")
	if _, err := ExtractBearer(r); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != body {
		t.Fatalf("body changed: %d bytes, want %d", len(got), len(body))
	}
}

// An oversized token is refused before any key fetch, whichever way it
// arrives.
func TestOversizedTokenFetchesNothing(t *testing.T) {
	e := newEnv(t, nil)
	big := e.token(t) + strings.Repeat("A", 64<<10)
	r := httptest.NewRequest(http.MethodGet, "/v8/x", nil)
	r.Header.Set("Authorization", "Bearer "+big)
	_, _, err := e.v.Authenticate(r)
	if !errors.Is(err, ErrInvalidRequest) || Reason(err) != ReasonTooLarge {
		t.Fatalf("Authenticate: %v", err)
	}
	_, err = e.v.Verify(r.Context(), big)
	wantRefusal(t, err, ReasonTooLarge)
	if n := e.transport.count(""); n != 0 {
		t.Fatalf("%d fetches for an oversized token", n)
	}
	if e.refusals.last() != ReasonTooLarge {
		t.Fatalf("OnRefusal saw %q", e.refusals.last())
	}

	r.Header.Set("Authorization", "Bearer "+e.token(t))
	if _, _, err := e.v.Authenticate(r); err != nil {
		t.Fatal(err)
	}
	r.Header.Del("Authorization")
	if _, _, err := e.v.Authenticate(r); !errors.Is(err, ErrNoToken) {
		t.Fatalf("no token: %v", err)
	}
}
