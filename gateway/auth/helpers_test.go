package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/issuer"
)

const resource = "https://gateway.test/"

// fakeClock is a settable clock shared by the issuers and the verifier.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// countingTransport counts requests by path, including failed ones.
type countingTransport struct {
	mu    sync.Mutex
	paths map[string]int
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	if t.paths == nil {
		t.paths = make(map[string]int)
	}
	t.paths[r.URL.Path]++
	t.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (t *countingTransport) count(suffix string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for p, c := range t.paths {
		if strings.HasSuffix(p, suffix) {
			n += c
		}
	}
	return n
}

// revocations is an in-memory Revocations.
type revocations struct {
	mu      sync.Mutex
	revoked map[string]bool
	err     error
	calls   atomic.Int64
}

func (r *revocations) Revoked(_ context.Context, jti string) (bool, error) {
	r.calls.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.revoked[jti], r.err
}

func (r *revocations) revoke(jti string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.revoked == nil {
		r.revoked = make(map[string]bool)
	}
	r.revoked[jti] = true
}

// env is a verifier trusting two real issuers served over HTTP: A through
// OIDC discovery (RS256 and ES256 keys), B through a configured JWKS URL
// (an EdDSA key).
type env struct {
	clock     *fakeClock
	a, b      *issuer.Issuer
	aSrv      *httptest.Server
	bSrv      *httptest.Server
	transport *countingTransport
	rev       *revocations
	v         *Verifier
	refusals  *reasonLog
}

type reasonLog struct {
	mu      sync.Mutex
	reasons []string
}

func (l *reasonLog) add(r string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reasons = append(l.reasons, r)
}

func (l *reasonLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.reasons) == 0 {
		return ""
	}
	return l.reasons[len(l.reasons)-1]
}

func newIssuerPair(t testing.TB, clock *fakeClock) (*issuer.Issuer, *issuer.Issuer) {
	t.Helper()
	a, err := issuer.New(issuer.Options{Algorithms: []string{issuer.RS256, issuer.ES256}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	b, err := issuer.New(issuer.Options{Algorithms: []string{issuer.EdDSA}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// newEnv builds an env; edit may change the configuration and options.
func newEnv(t testing.TB, edit func(*config.Auth, *Options)) *env {
	t.Helper()
	e := &env{clock: newClock(), transport: &countingTransport{}, rev: &revocations{}, refusals: &reasonLog{}}
	e.a, e.b = newIssuerPair(t, e.clock)
	e.aSrv = httptest.NewServer(e.a)
	t.Cleanup(e.aSrv.Close)
	e.a.SetIssuer(e.aSrv.URL)
	e.bSrv = httptest.NewServer(e.b)
	t.Cleanup(e.bSrv.Close)
	e.b.SetIssuer(e.bSrv.URL)

	cfg := config.Config{Auth: config.Auth{
		Resource: resource,
		Issuers: []config.Issuer{
			{Issuer: e.aSrv.URL, Algorithms: []string{"RS256", "ES256"}},
			{Issuer: e.bSrv.URL, JWKSURL: e.bSrv.URL + issuer.JWKSPath, Algorithms: []string{"EdDSA"}},
		},
	}}
	cfg.Defaults("")
	opts := &Options{
		HTTPClient:  &http.Client{Transport: e.transport},
		Now:         e.clock.Now,
		Revocations: e.rev,
		OnRefusal:   e.refusals.add,
	}
	if edit != nil {
		edit(&cfg.Auth, opts)
	}
	v, err := NewVerifier(context.Background(), cfg.Auth, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.v = v
	return e
}

// claims returns standard claims from issuer A for tenant acme.
func (e *env) claims() map[string]any {
	return e.a.Claims("", resource, "alice", "acme", []string{"missions:read", "missions:write"}, 5*time.Minute)
}

// sign signs claims with issuer A.
func (e *env) sign(t testing.TB, claims map[string]any, opts ...issuer.SignOption) string {
	t.Helper()
	tok, err := e.a.Sign(claims, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// token is a valid token of issuer A.
func (e *env) token(t testing.TB, opts ...issuer.SignOption) string {
	t.Helper()
	return e.sign(t, e.claims(), opts...)
}

// wantRefusal checks that err is a token refusal with reason.
func wantRefusal(t testing.TB, err error, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want refusal %q", reason)
	}
	var r *RefusalError
	if !errors.As(err, &r) || r.Err != ErrInvalidToken {
		t.Fatalf("error %v is not an invalid-token refusal", err)
	}
	if r.Reason != reason {
		t.Fatalf("reason %q (%v), want %q", r.Reason, err, reason)
	}
}
