package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Cookie names. The session cookie is SameSite=Strict; the sign-in
// cookie, which only carries the sign-in attempt to the callback, is
// SameSite=Lax because the issuer's redirect back is a cross-site
// navigation on which a Strict cookie is not sent.
const (
	sessionCookie = "praxa_console"
	loginCookie   = "praxa_console_login"
)

// Bounds of the in-memory stores.
const (
	maxSessions   = 10000
	maxLogins     = 10000
	loginTTL      = 10 * time.Minute
	sessionMaxAge = 12 * time.Hour
)

// newSecret returns 256 random bits, base64url: session ids, CSRF tokens,
// state, nonce and the PKCE verifier.
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// pkceChallenge is the S256 code challenge of a verifier (RFC 7636 §4.2).
func pkceChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// equalSecret compares two secrets in constant time; an empty one never
// matches.
func equalSecret(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// session is a signed-in person. The access token stays here, on the
// server: the browser holds only the session id. Every request verifies
// the token again (expiry, revocation), so the session is never more than
// the token.
type session struct {
	id     string
	csrf   string
	access string
	// name is what the ID token calls the person (display only: the
	// principal comes from the access token).
	name    string
	expires time.Time
	// flash is a message shown once on the next page.
	flash string
}

// login is a sign-in attempt between the redirect to the issuer and the
// callback.
type login struct {
	state, nonce, verifier string
	next                   string
	expires                time.Time
}

// sessions holds the sessions and sign-in attempts in memory: one replica
// only (another replica does not know the session; see the README).
type sessions struct {
	mu     sync.Mutex
	now    func() time.Time
	byID   map[string]*session
	logins map[string]*login
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, byID: map[string]*session{}, logins: map[string]*login{}}
}

// sweepLocked drops what has expired; when a map is still full it drops
// the entries that expire first. The caller holds mu.
func (s *sessions) sweepLocked() {
	now := s.now()
	sweep(s.byID, now, maxSessions, func(v *session) time.Time { return v.expires })
	sweep(s.logins, now, maxLogins, func(v *login) time.Time { return v.expires })
}

// sweep drops the entries of m that expired before now and, while m
// still holds limit or more, the one that expires first.
func sweep[V any](m map[string]V, now time.Time, limit int, expires func(V) time.Time) {
	for id, v := range m {
		if now.After(expires(v)) {
			delete(m, id)
		}
	}
	for len(m) >= limit {
		var oldest string
		for id, v := range m {
			if oldest == "" || expires(v).Before(expires(m[oldest])) {
				oldest = id
			}
		}
		delete(m, oldest)
	}
}

// startLogin records a new sign-in attempt and returns its id (the sign-in
// cookie's value) and the attempt.
func (s *sessions) startLogin(next string) (string, *login) {
	l := &login{state: newSecret(), nonce: newSecret(), verifier: newSecret(), next: next}
	id := newSecret()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	l.expires = s.now().Add(loginTTL)
	s.logins[id] = l
	return id, l
}

// takeLogin removes and returns the sign-in attempt id names if it has not
// expired and state is its own: an attempt is used once, whatever the
// outcome.
func (s *sessions) takeLogin(id, state string) (*login, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.logins[id]
	if !ok {
		return nil, false
	}
	delete(s.logins, id)
	if s.now().After(l.expires) || !equalSecret(l.state, state) {
		return nil, false
	}
	return l, true
}

// create starts a session holding the access token, until expires (at
// most sessionMaxAge from now).
func (s *sessions) create(access, name string, expires time.Time) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	if limit := s.now().Add(sessionMaxAge); expires.IsZero() || expires.After(limit) {
		expires = limit
	}
	v := &session{id: newSecret(), csrf: newSecret(), access: access, name: name, expires: expires}
	s.byID[v.id] = v
	return v
}

// get returns a copy of the live session id names.
func (s *sessions) get(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byID[id]
	if !ok || id == "" {
		return session{}, false
	}
	if s.now().After(v.expires) {
		delete(s.byID, id)
		return session{}, false
	}
	return *v, true
}

// takeFlash returns and clears the session's flash message.
func (s *sessions) takeFlash(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byID[id]
	if !ok {
		return ""
	}
	f := v.flash
	v.flash = ""
	return f
}

// setFlash sets the message the session's next page shows.
func (s *sessions) setFlash(id, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.byID[id]; ok {
		v.flash = msg
	}
}

// drop ends a session.
func (s *sessions) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

// cookie builds one of the console's cookies: HttpOnly, Secure unless the
// console is served over plain HTTP on a loopback address, path /console.
func (c *Console) cookie(name, value string, maxAge int, site http.SameSite) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true, Secure: c.secure, SameSite: site}
}
