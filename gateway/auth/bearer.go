package auth

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// MaxTokenBytes bounds a bearer token. A longer Authorization header is
// refused by ExtractBearer (invalid_request) and a longer token by Verify
// (invalid_token), before any parsing or key fetch. Access tokens with large
// group claims stay well below it.
const MaxTokenBytes = 16 << 10

// maxFormPeek bounds how much of a form body ExtractBearer reads to look for
// an access_token parameter.
const maxFormPeek = 64 << 10

// ExtractBearer returns the bearer token of r's Authorization header
// (RFC 6750 §2.1), the only transmission method the gateway accepts.
//
// It returns ErrNoToken when there is no Authorization header, when the
// scheme is not Bearer ("Basic …", "Bearer-invalid") or when the token is
// empty ("Bearer"). It returns a *RefusalError wrapping ErrInvalidRequest
// when the request also or only carries an access_token in the query string
// or in an application/x-www-form-urlencoded body (RFC 6750 forbids more
// than one method, and the gateway accepts neither of the others), when the
// Authorization header appears more than once, and when the header is longer
// than MaxTokenBytes allows. A token with characters outside the b64token
// syntax is refused as ErrInvalidToken (malformed).
//
// To inspect a form body ExtractBearer reads up to 64 KiB of it and puts the
// bytes back, so r.Body still yields the whole body afterwards; a parameter
// beyond that prefix is not seen (no form token is ever accepted anyway).
func ExtractBearer(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	if len(values) > 1 {
		return "", invalidRequest(ReasonRepeatedHeader)
	}
	if queryHasToken(r.URL) {
		return "", invalidRequest(ReasonTokenInQuery)
	}
	if formHasToken(r) {
		return "", invalidRequest(ReasonTokenInBody)
	}
	if len(values) == 0 {
		return "", ErrNoToken
	}
	h := values[0]
	if len(h) > len("Bearer ")+MaxTokenBytes {
		return "", invalidRequest(ReasonTooLarge)
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", ErrNoToken
	}
	token = strings.Trim(token, " \t")
	if token == "" {
		return "", ErrNoToken
	}
	if !isB64Token(token) {
		return "", invalidToken(ReasonMalformed, "not a b64token", nil)
	}
	return token, nil
}

// queryHasToken reports whether u's query names access_token.
func queryHasToken(u *url.URL) bool {
	if u == nil || u.RawQuery == "" {
		return false
	}
	q, _ := url.ParseQuery(u.RawQuery) // a malformed pair elsewhere must not hide the token
	return q.Has("access_token")
}

// formHasToken reports whether r has a form-encoded body holding an
// access_token parameter within its first maxFormPeek bytes. It restores
// r.Body.
func formHasToken(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		return false // the usual body, without parsing its media type
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return false
	}
	buf, _ := io.ReadAll(io.LimitReader(r.Body, maxFormPeek))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
	for pair := range strings.SplitSeq(string(buf), "&") {
		name, _, _ := strings.Cut(pair, "=")
		if name == "access_token" {
			return true
		}
		if n, err := url.QueryUnescape(name); err == nil && n == "access_token" {
			return true
		}
	}
	return false
}

// readCloser joins a reader with the original body's Close.
type readCloser struct {
	io.Reader
	io.Closer
}

// b64tokenChars marks the bytes of RFC 6750's b64token before its
// padding: ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/".
var b64tokenChars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", byte(c)) >= 0
	}
	return t
}()

// isB64Token reports whether s matches RFC 6750's b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for i < len(s) && b64tokenChars[s[i]] {
		i++
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}
