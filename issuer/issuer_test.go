package issuer_test

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/praxa/praxa/issuer"
)

const audience = "https://gateway.test"

var allAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.ES256, jose.EdDSA, jose.HS256}

// serve starts iss on an httptest server and sets its issuer URL.
func serve(t *testing.T, iss *issuer.Issuer) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(iss)
	t.Cleanup(srv.Close)
	iss.SetIssuer(srv.URL)
	return srv
}

func newIssuer(t *testing.T, algs ...string) *issuer.Issuer {
	t.Helper()
	iss, err := issuer.New(issuer.Options{Algorithms: algs})
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

// parts decodes a compact token's header and signature.
func parts(t *testing.T, tok string) (map[string]any, []byte) {
	t.Helper()
	p := strings.Split(tok, ".")
	if len(p) != 3 {
		t.Fatalf("token has %d parts", len(p))
	}
	hb, err := base64.RawURLEncoding.DecodeString(p[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatal(err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(p[2])
	if err != nil {
		t.Fatal(err)
	}
	return h, sig
}

func publicKey(t *testing.T, iss *issuer.Issuer, kid string) crypto.PublicKey {
	t.Helper()
	for _, pk := range iss.PublicKeys() {
		if pk.KeyID == kid {
			return pk.Key
		}
	}
	t.Fatalf("no published key %q", kid)
	return nil
}

// verifyWith reports whether tok's signature verifies with pub.
func verifyWith(tok string, pub crypto.PublicKey) bool {
	jws, err := jose.ParseSigned(tok, allAlgs)
	if err != nil {
		return false
	}
	_, err = jws.Verify(pub)
	return err == nil
}

func TestDiscoveryWorksWithGoOIDC(t *testing.T) {
	for _, alg := range []string{issuer.RS256, issuer.ES256, issuer.EdDSA} {
		t.Run(alg, func(t *testing.T) {
			iss := newIssuer(t, alg)
			srv := serve(t, iss)
			ctx := oidc.ClientContext(context.Background(), srv.Client())
			p, err := oidc.NewProvider(ctx, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			var meta struct {
				JWKSURI string   `json:"jwks_uri"`
				Algs    []string `json:"id_token_signing_alg_values_supported"`
			}
			if err := p.Claims(&meta); err != nil {
				t.Fatal(err)
			}
			if meta.JWKSURI != srv.URL+issuer.JWKSPath || !slices.Equal(meta.Algs, []string{alg}) {
				t.Fatalf("discovery = %+v", meta)
			}
			tok, err := iss.Mint("", audience, "alice", "acme", []string{"missions:read"}, time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			v := p.VerifierContext(ctx, &oidc.Config{ClientID: audience, SupportedSigningAlgs: []string{alg}})
			idt, err := v.Verify(ctx, tok)
			if err != nil {
				t.Fatalf("go-oidc refused a minted token: %v", err)
			}
			if idt.Subject != "alice" {
				t.Fatalf("sub = %q", idt.Subject)
			}
			if iss.JWKSFetches() != 1 || iss.DiscoveryFetches() != 1 {
				t.Fatalf("fetches: jwks %d discovery %d", iss.JWKSFetches(), iss.DiscoveryFetches())
			}
		})
	}
}

func TestPathPrefix(t *testing.T) {
	iss, err := issuer.New(issuer.Options{PathPrefix: "/dev/issuer/"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/dev/issuer/", iss)
	mux.Handle("/stripped/", http.StripPrefix("/stripped", iss))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	iss.SetIssuer(srv.URL + "/dev/issuer/") // trailing slash dropped
	if got := iss.Issuer(); got != srv.URL+"/dev/issuer" {
		t.Fatalf("Issuer() = %q", got)
	}
	ctx := oidc.ClientContext(context.Background(), srv.Client())
	if _, err := oidc.NewProvider(ctx, srv.URL+"/dev/issuer"); err != nil {
		t.Fatalf("discovery under the prefix: %v", err)
	}
	for path, want := range map[string]int{
		"/dev/issuer/jwks":        200,
		"/stripped/jwks":          200,
		"/dev/issuer/nothing":     404,
		"/dev/issuer/token":       400,
		"/dev/issuerx/jwks":       404,
		"/dev/issuer/jwks/extra":  404,
		"/stripped/.well-known/x": 404,
	} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	resp, err := srv.Client().Post(srv.URL+"/dev/issuer/jwks", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST jwks = %d", resp.StatusCode)
	}
}

func TestKeyManagement(t *testing.T) {
	iss := newIssuer(t, issuer.RS256, issuer.ES256)
	srv := serve(t, iss)
	jwks := func() []string {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + issuer.JWKSPath)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var set jose.JSONWebKeySet
		if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
			t.Fatal(err)
		}
		var kids []string
		for _, k := range set.Keys {
			if !k.IsPublic() || k.Use != "sig" || k.Algorithm == "" {
				t.Fatalf("JWKS entry %+v is not a public signing key with alg", k)
			}
			kids = append(kids, k.KeyID)
		}
		return kids
	}
	first := iss.KeyIDs()
	if len(first) != 2 || iss.DefaultKeyID() != first[0] {
		t.Fatalf("KeyIDs = %v default %q", first, iss.DefaultKeyID())
	}
	if got := jwks(); !slices.Equal(got, first) {
		t.Fatalf("JWKS kids %v, want %v", got, first)
	}

	k3, err := iss.Rotate(issuer.EdDSA)
	if err != nil {
		t.Fatal(err)
	}
	if iss.DefaultKeyID() != k3 || !slices.Equal(jwks(), append(slices.Clone(first), k3)) {
		t.Fatalf("after rotate: default %q JWKS %v", iss.DefaultKeyID(), jwks())
	}
	tok, err := iss.Sign(map[string]any{"sub": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := parts(t, tok); h["kid"] != k3 || h["alg"] != issuer.EdDSA {
		t.Fatalf("default signing header %v", h)
	}

	if !iss.RemoveKey(first[0]) || iss.RemoveKey(first[0]) {
		t.Fatal("RemoveKey must report existence once")
	}
	if got := jwks(); !slices.Equal(got, []string{first[1], k3}) {
		t.Fatalf("after remove: %v", got)
	}
	if _, err := iss.Sign(map[string]any{}, issuer.WithKey(first[0])); err == nil {
		t.Fatal("a removed key still signs")
	}
	if err := iss.SetPublished(k3, false); err != nil {
		t.Fatal(err)
	}
	if got := jwks(); !slices.Equal(got, []string{first[1]}) {
		t.Fatalf("after unpublish: %v", got)
	}
	if _, err := iss.Sign(map[string]any{}, issuer.WithKey(k3)); err != nil {
		t.Fatalf("an unpublished key must still sign: %v", err)
	}
	if _, err := iss.AddKey(issuer.RS256, first[1]); err == nil {
		t.Fatal("duplicate kid accepted")
	}
	if _, err := iss.AddKey("HS256", ""); err == nil {
		t.Fatal("HS256 key accepted")
	}
	if n := iss.JWKSFetches(); n != 4 {
		t.Fatalf("JWKSFetches = %d, want 4", n)
	}
	iss.ResetCounters()
	if iss.JWKSFetches() != 0 {
		t.Fatal("ResetCounters")
	}
}

func TestConcurrentRotation(t *testing.T) {
	iss := newIssuer(t, issuer.ES256)
	srv := serve(t, iss)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			kid, err := iss.AddKey(issuer.ES256, "")
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := iss.Sign(map[string]any{"a": 1}, issuer.WithKey(kid)); err != nil {
				t.Error(err)
			}
			iss.RemoveKey(kid)
		})
		wg.Go(func() {
			resp, err := srv.Client().Get(srv.URL + issuer.JWKSPath)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	if len(iss.KeyIDs()) != 1 {
		t.Fatalf("keys left: %v", iss.KeyIDs())
	}
}

func TestSignOptions(t *testing.T) {
	iss := newIssuer(t, issuer.RS256, issuer.ES256)
	rsaKID, ecKID := iss.KeyIDs()[0], iss.KeyIDs()[1]
	rsaPub := publicKey(t, iss, rsaKID)
	claims := map[string]any{"sub": "alice"}

	tests := []struct {
		name     string
		opts     []issuer.SignOption
		alg      string
		kid      any // nil: absent
		typ      any
		verifies crypto.PublicKey // must verify with this key (nil: with none of the issuer's)
	}{
		{name: "default", alg: "RS256", kid: rsaKID, typ: "at+jwt", verifies: rsaPub},
		{name: "typ JWT", opts: []issuer.SignOption{issuer.WithType("JWT")}, alg: "RS256", kid: rsaKID, typ: "JWT", verifies: rsaPub},
		{name: "no typ", opts: []issuer.SignOption{issuer.WithType("")}, alg: "RS256", kid: rsaKID, verifies: rsaPub},
		{name: "other key", opts: []issuer.SignOption{issuer.WithKey(ecKID)}, alg: "ES256", kid: ecKID, typ: "at+jwt", verifies: publicKey(t, iss, ecKID)},
		{name: "by algorithm", opts: []issuer.SignOption{issuer.WithAlgorithm("ES256")}, alg: "ES256", kid: ecKID, typ: "at+jwt", verifies: publicKey(t, iss, ecKID)},
		{name: "RS384 with the RSA key", opts: []issuer.SignOption{issuer.WithAlgorithm("RS384")}, alg: "RS384", kid: rsaKID, typ: "at+jwt", verifies: rsaPub},
		{name: "unknown kid", opts: []issuer.SignOption{issuer.WithKeyID("nope")}, alg: "RS256", kid: "nope", typ: "at+jwt", verifies: rsaPub},
		{name: "no kid", opts: []issuer.SignOption{issuer.WithoutKeyID()}, alg: "RS256", typ: "at+jwt", verifies: rsaPub},
		{name: "alg none", opts: []issuer.SignOption{issuer.WithAlgNone()}, alg: "none", kid: rsaKID, typ: "at+jwt"},
		{name: "tampered", opts: []issuer.SignOption{issuer.WithTamperedSignature()}, alg: "RS256", kid: rsaKID, typ: "at+jwt"},
		{name: "foreign key", opts: []issuer.SignOption{issuer.WithForeignKey()}, alg: "RS256", kid: rsaKID, typ: "at+jwt"},
		{name: "foreign EC key", opts: []issuer.SignOption{issuer.WithKey(ecKID), issuer.WithForeignKey()}, alg: "ES256", kid: ecKID, typ: "at+jwt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := iss.Sign(claims, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			h, sig := parts(t, tok)
			if h["alg"] != tc.alg || h["kid"] != tc.kid || h["typ"] != tc.typ {
				t.Fatalf("header %v, want alg %v kid %v typ %v", h, tc.alg, tc.kid, tc.typ)
			}
			if tc.alg == "none" && len(sig) != 0 {
				t.Fatal("alg none carries a signature")
			}
			for _, pk := range iss.PublicKeys() {
				ok := verifyWith(tok, pk.Key)
				want := tc.verifies != nil && pk.Key.(interface{ Equal(crypto.PublicKey) bool }).Equal(tc.verifies)
				if ok != want {
					t.Errorf("verifies with %s = %v, want %v", pk.KeyID, ok, want)
				}
			}
		})
	}

	t.Run("HS256 keyed with the public key", func(t *testing.T) {
		tok, err := iss.Sign(claims, issuer.WithHMACPublicKey())
		if err != nil {
			t.Fatal(err)
		}
		h, sig := parts(t, tok)
		if h["alg"] != "HS256" || h["kid"] != rsaKID {
			t.Fatalf("header %v", h)
		}
		der, err := x509.MarshalPKIXPublicKey(rsaPub)
		if err != nil {
			t.Fatal(err)
		}
		mac := hmac.New(sha256.New, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
		mac.Write([]byte(tok[:strings.LastIndexByte(tok, '.')]))
		if !hmac.Equal(mac.Sum(nil), sig) {
			t.Fatal("MAC is not keyed with the PEM public key")
		}
	})
	t.Run("extra header", func(t *testing.T) {
		tok, err := iss.Sign(claims, issuer.WithHeader("x5u", "https://example.invalid"))
		if err != nil {
			t.Fatal(err)
		}
		if h, _ := parts(t, tok); h["x5u"] != "https://example.invalid" {
			t.Fatalf("header %v", h)
		}
	})
	t.Run("errors", func(t *testing.T) {
		if _, err := iss.Sign(claims, issuer.WithKey("missing")); err == nil {
			t.Error("unknown signing key accepted")
		}
		if _, err := iss.Sign(claims, issuer.WithAlgorithm("EdDSA")); err == nil {
			t.Error("no Ed25519 key, yet EdDSA signed")
		}
		if _, err := iss.Sign(map[string]any{"bad": func() {}}); err == nil {
			t.Error("unencodable claims accepted")
		}
	})
}

func TestMint(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	iss, err := issuer.New(issuer.Options{Issuer: "https://issuer.test", Algorithms: []string{issuer.EdDSA}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := iss.Mint("", audience, "alice", "acme", []string{"missions:read", "missions:write"}, time.Hour,
		map[string]any{"client_id": "cli", "nbf": nil, "compartments": []string{"c1"}})
	if err != nil {
		t.Fatal(err)
	}
	jws, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := jws.Verify(iss.PublicKeys()[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"iss": "https://issuer.test", "aud": audience, "sub": "alice", "client_id": "cli",
		"iat": float64(now.Unix()), "exp": float64(now.Add(time.Hour).Unix()),
		"scope": "missions:read missions:write", "tenant_id": "acme",
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %v, want %v", k, c[k], v)
		}
	}
	if _, ok := c["nbf"]; ok {
		t.Error("nbf not removed")
	}
	if jti, _ := c["jti"].(string); len(jti) < 20 {
		t.Errorf("jti %q", c["jti"])
	}
	other := iss.Claims("https://elsewhere.test", audience, "bob", "acme", nil, 0)
	if other["iss"] != "https://elsewhere.test" || other["jti"] == c["jti"] || other["exp"] != now.Add(issuer.DefaultTTL).Unix() {
		t.Errorf("Claims = %v", other)
	}
}

func TestUnavailable(t *testing.T) {
	iss := newIssuer(t, issuer.ES256)
	srv := serve(t, iss)
	iss.SetAvailable(false)
	ctx := oidc.ClientContext(context.Background(), srv.Client())
	if _, err := oidc.NewProvider(ctx, srv.URL); err == nil {
		t.Fatal("discovery succeeded while down")
	}
	iss.SetAvailable(true)
	if _, err := oidc.NewProvider(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if iss.DiscoveryFetches() != 1 {
		t.Fatalf("DiscoveryFetches = %d", iss.DiscoveryFetches())
	}
}

func TestLoadOrCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	a, err := issuer.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, issuer.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", fi.Mode().Perm())
	}
	// Dev mode: mounted under /dev/issuer on a shared listener.
	mux := http.NewServeMux()
	mux.Handle("/dev/issuer/", a)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	a.SetIssuer(srv.URL + "/dev/issuer")
	a.SetPathPrefix("/dev/issuer")
	if _, err := oidc.NewProvider(oidc.ClientContext(context.Background(), srv.Client()), a.Issuer()); err != nil {
		t.Fatalf("discovery of the persisted issuer: %v", err)
	}
	frozen := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a.SetClock(func() time.Time { return frozen })
	if got := a.Claims("", audience, "a", "b", nil, 0)["iat"]; got != frozen.Unix() {
		t.Fatalf("SetClock: iat %v", got)
	}
	a.SetClock(nil)
	tok, err := a.Mint("", audience, "alice", "acme", nil, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}

	b, err := issuer.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.DefaultKeyID() == "" || a.DefaultKeyID() != b.DefaultKeyID() {
		t.Fatalf("kid changed across restarts: %q vs %q", a.DefaultKeyID(), b.DefaultKeyID())
	}
	if !verifyWith(tok, b.PublicKeys()[0].Key) {
		t.Fatal("a token minted before the restart does not verify after it")
	}
	if h, _ := parts(t, tok); h["alg"] != issuer.EdDSA {
		t.Fatalf("alg %v", h["alg"])
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("stray files: %v", entries)
	}

	if err := os.Chmod(filepath.Join(dir, issuer.KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := issuer.LoadOrCreate(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable key accepted: %v", err)
	}

	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, issuer.KeyFile), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := issuer.LoadOrCreate(bad); err == nil {
		t.Fatal("garbage key file accepted")
	}
}

func TestLoadOrCreateConcurrent(t *testing.T) {
	dir := t.TempDir()
	kids := make([]string, 8)
	var wg sync.WaitGroup
	for n := range kids {
		wg.Go(func() {
			iss, err := issuer.LoadOrCreate(dir)
			if err != nil {
				t.Error(err)
				return
			}
			kids[n] = iss.DefaultKeyID()
		})
	}
	wg.Wait()
	for _, k := range kids {
		if k != kids[0] {
			t.Fatalf("concurrent starts disagree on the key: %v", kids)
		}
	}
}
