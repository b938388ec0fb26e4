package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/issuer"
)

func jwk(t *testing.T, key any, kid, alg, use string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: alg, Use: use})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseJWKS(t *testing.T) {
	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good, err := issuer.GenerateKey(issuer.ES256)
	if err != nil {
		t.Fatal(err)
	}
	ed, err := issuer.GenerateKey(issuer.EdDSA)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string][]json.RawMessage{"keys": {
		jwk(t, good.Public(), "good", "ES256", "sig"),
		jwk(t, ed, "private-ed", "", ""), // a private key: only its public half is kept
		jwk(t, good.Public(), "enc", "", "enc"),
		jwk(t, []byte("0123456789abcdef0123456789abcdef"), "hmac", "HS256", "sig"),
		jwk(t, rsa1024.Public(), "weak", "RS256", "sig"),
		jwk(t, p384.Public(), "mismatch", "ES256", "sig"),
		jwk(t, p384.Public(), "p384", "ES384", "sig"),
		json.RawMessage(`{"kty":"RSA","kid":"broken","n":"!!"}`),
		json.RawMessage(`"not an object"`),
	}}
	body, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := parseJWKS(body)
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range keys {
		kids = append(kids, k.kid)
		if _, private := k.pub.(crypto.Signer); private {
			t.Errorf("key %s kept its private half", k.kid)
		}
	}
	if strings.Join(kids, ",") != "good,private-ed,p384" {
		t.Fatalf("kept %v", kids)
	}

	if _, err := parseJWKS([]byte(`{"keys":`)); err == nil {
		t.Error("truncated JWKS accepted")
	}
	many := `{"keys":[` + strings.Repeat(`{},`, maxJWKSKeys) + `{}]}`
	if _, err := parseJWKS([]byte(many)); err == nil {
		t.Error("oversized key count accepted")
	}
}

// jwksServer serves whatever body and status the test sets.
type jwksServer struct {
	mu     sync.Mutex
	status int
	body   []byte
}

func (s *jwksServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.WriteHeader(s.status)
	_, _ = w.Write(s.body)
}

func (s *jwksServer) set(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func TestJWKSFetchFailures(t *testing.T) {
	clock := newClock()
	iss, err := issuer.New(issuer.Options{Issuer: "https://idp.test", Algorithms: []string{issuer.ES256}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	js := &jwksServer{}
	srv := httptest.NewServer(js)
	defer srv.Close()
	v, err := NewVerifier(context.Background(), config.Auth{
		Resource: resource,
		Issuers:  []config.Issuer{{Issuer: "https://idp.test", JWKSURL: srv.URL + "/keys", Algorithms: []string{"ES256"}}},
	}, &Options{Now: clock.Now, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := iss.Mint("", resource, "alice", "acme", nil, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, err := iss.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		status int
		body   []byte
	}{
		{"server error", http.StatusInternalServerError, good},
		{"not JSON", http.StatusOK, []byte("<html>")},
		{"too large", http.StatusOK, []byte(`{"keys":[],"pad":"` + strings.Repeat("x", maxJWKSBytes) + `"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js.set(tc.status, tc.body)
			clock.Add(31 * time.Second)
			_, err := v.Verify(context.Background(), tok)
			wantRefusal(t, err, ReasonIssuerUnavailable)
			var r *RefusalError
			if !errors.As(err, &r) || r.Cause == nil {
				t.Fatalf("no cause for the logs: %v", err)
			}
			if werr := v.Warm(context.Background()); werr == nil {
				t.Fatal("Warm succeeded")
			}
		})
	}
	js.set(http.StatusOK, good)
	clock.Add(31 * time.Second)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	// An empty key set after a successful fetch removes every key.
	js.set(http.StatusOK, []byte(`{"keys":[]}`))
	clock.Add(31 * time.Second)
	other, err := iss.Sign(iss.Claims("", resource, "alice", "acme", nil, time.Hour), issuer.WithKeyID("x"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), other)
	wantRefusal(t, err, ReasonUnknownKey)
	_, err = v.Verify(context.Background(), tok)
	wantRefusal(t, err, ReasonUnknownKey)
}

func TestDiscoveryFailures(t *testing.T) {
	clock := newClock()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var meta []byte
	var mu sync.Mutex
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(meta)
	})
	setMeta := func(m map[string]any) {
		b, _ := json.Marshal(m)
		mu.Lock()
		meta = b
		mu.Unlock()
	}
	v, err := NewVerifier(context.Background(), config.Auth{
		Resource: resource, Issuers: []config.Issuer{{Issuer: srv.URL}},
	}, &Options{Now: clock.Now, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	iss, err := issuer.New(issuer.Options{Issuer: srv.URL, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := iss.Mint("", resource, "alice", "acme", nil, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]map[string]any{
		"issuer mismatch (trailing slash)": {"issuer": srv.URL + "/", "jwks_uri": srv.URL + "/jwks"},
		"relative jwks_uri":                {"issuer": srv.URL, "jwks_uri": "/jwks"},
	} {
		t.Run(name, func(t *testing.T) {
			setMeta(m)
			clock.Add(31 * time.Second)
			_, err := v.Verify(context.Background(), tok)
			wantRefusal(t, err, ReasonIssuerUnavailable)
		})
	}
}

// keySet also serves as a plain oidc.KeySet.
func TestKeySetAsOIDCKeySet(t *testing.T) {
	clock := newClock()
	iss, err := issuer.New(issuer.Options{Issuer: "https://idp.test", Algorithms: []string{issuer.RS256}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	pk := iss.PublicKeys()[0]
	ti, err := staticIssuer(StaticIssuer{Issuer: "https://idp.test", Keys: []StaticKey{{KeyID: pk.KeyID, Key: pk.Key}}}, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	var ks oidc.KeySet = ti.keys
	tok, err := iss.Mint("", resource, "alice", "acme", nil, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.VerifySignature(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	bad, err := iss.Sign(iss.Claims("", resource, "a", "b", nil, time.Hour), issuer.WithTamperedSignature())
	if err != nil {
		t.Fatal(err)
	}
	_, err = ks.VerifySignature(context.Background(), bad)
	wantRefusal(t, err, ReasonBadSignature)
	v := oidc.NewVerifier("https://idp.test", ks, &oidc.Config{ClientID: resource, Now: clock.Now})
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("go-oidc with this key set: %v", err)
	}
	if got := defaultAlgorithm(pk.Key); got != "RS256" {
		t.Errorf("defaultAlgorithm = %s", got)
	}
}
