package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/issuer"
)

func TestVerify(t *testing.T) {
	e := newEnv(t, nil)
	now := e.clock.Now()
	edit := func(f func(c map[string]any)) func(t *testing.T) string {
		return func(t *testing.T) string {
			c := e.claims()
			f(c)
			return e.sign(t, c)
		}
	}
	signed := func(opts ...issuer.SignOption) func(t *testing.T) string {
		return func(t *testing.T) string { return e.token(t, opts...) }
	}
	raw := func(s string) func(t *testing.T) string { return func(*testing.T) string { return s } }
	b64 := base64.RawURLEncoding.EncodeToString

	tests := []struct {
		name   string
		token  func(t *testing.T) string
		reason string // "" means accepted
	}{
		// Accepted.
		{"typ at+jwt RS256", signed(), ""},
		{"typ application/at+jwt", signed(issuer.WithType("application/at+jwt")), ""},
		{"typ JWT accepted by default", signed(issuer.WithType("JWT")), ""},
		{"typ missing accepted by default", signed(issuer.WithType("")), ""},
		{"ES256 key", signed(issuer.WithAlgorithm("ES256")), ""},
		{"no kid, key found by type", signed(issuer.WithoutKeyID()), ""},
		{"issuer B through its JWKS URL (EdDSA)", func(t *testing.T) string {
			tok, err := e.b.Mint("", resource, "bob", "acme", nil, time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}, ""},
		{"aud array containing ours", edit(func(c map[string]any) { c["aud"] = []string{"https://other.test/", resource} }), ""},
		{"exp past but within leeway", edit(func(c map[string]any) { c["exp"] = now.Add(-10 * time.Second).Unix() }), ""},
		{"nbf ahead within leeway", edit(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Second).Unix() }), ""},
		{"fractional exp", edit(func(c map[string]any) { c["exp"] = float64(now.Add(time.Minute).Unix()) + 0.5 }), ""},
		{"client_id from azp", edit(func(c map[string]any) { delete(c, "client_id"); c["azp"] = "cli" }), ""},
		{"scp array", edit(func(c map[string]any) { delete(c, "scope"); c["scp"] = []string{"missions:read"} }), ""},
		{"scope as array", edit(func(c map[string]any) { c["scope"] = []string{"missions:read"} }), ""},
		{"null optional claim", edit(func(c map[string]any) { c["tools"] = nil }), ""},

		// Algorithms and signatures.
		{"alg none", signed(issuer.WithAlgNone()), ReasonUnsupportedAlg},
		{"HS256 keyed with the RSA public key", signed(issuer.WithHMACPublicKey()), ReasonUnsupportedAlg},
		{"RS384 when only RS256 and ES256 are allowed", signed(issuer.WithAlgorithm("RS384")), ReasonUnsupportedAlg},
		{"EdDSA not allowed for issuer A", func(t *testing.T) string {
			tok, err := e.b.Sign(e.claims())
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}, ReasonUnsupportedAlg},
		{"unknown kid", signed(issuer.WithKeyID("no-such-key")), ReasonUnknownKey},
		{"key not in the JWKS, known kid", signed(issuer.WithForeignKey()), ReasonBadSignature},
		{"ES256 key not in the JWKS, known kid", signed(issuer.WithAlgorithm("ES256"), issuer.WithForeignKey()), ReasonBadSignature},
		{"tampered signature", signed(issuer.WithTamperedSignature()), ReasonBadSignature},
		{"issuer B's iss, issuer A's kid", func(t *testing.T) string {
			c := e.b.Claims("", resource, "bob", "acme", nil, time.Minute)
			tok, err := e.b.Sign(c, issuer.WithKeyID(e.a.KeyIDs()[0]))
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}, ReasonUnknownKey},

		// Issuer.
		{"wrong iss", edit(func(c map[string]any) { c["iss"] = "https://elsewhere.test" }), ReasonUntrustedIssuer},
		{"iss with trailing slash", edit(func(c map[string]any) { c["iss"] = e.aSrv.URL + "/" }), ReasonUntrustedIssuer},
		{"iss in another case", edit(func(c map[string]any) { c["iss"] = strings.ToUpper(e.aSrv.URL) }), ReasonUntrustedIssuer},
		{"iss missing", edit(func(c map[string]any) { delete(c, "iss") }), ReasonMissingClaim},
		{"iss a number", edit(func(c map[string]any) { c["iss"] = 42 }), ReasonMalformedClaim},
		{"iss under another member case", edit(func(c map[string]any) { c["ISS"] = c["iss"]; delete(c, "iss") }), ReasonMissingClaim},

		// Audience.
		{"aud another resource", edit(func(c map[string]any) { c["aud"] = "https://other.test/" }), ReasonWrongAudience},
		{"aud missing", edit(func(c map[string]any) { delete(c, "aud") }), ReasonWrongAudience},
		{"aud without the trailing slash", edit(func(c map[string]any) { c["aud"] = strings.TrimSuffix(resource, "/") }), ReasonWrongAudience},
		{"aud array without ours", edit(func(c map[string]any) { c["aud"] = []string{"a", "b"} }), ReasonWrongAudience},
		{"aud a number", edit(func(c map[string]any) { c["aud"] = 7 }), ReasonMalformedClaim},
		{"aud array of numbers", edit(func(c map[string]any) { c["aud"] = []int{7} }), ReasonMalformedClaim},

		// Time.
		{"exp beyond leeway", edit(func(c map[string]any) { c["exp"] = now.Add(-31 * time.Second).Unix() }), ReasonExpired},
		{"exp long past", edit(func(c map[string]any) { c["exp"] = now.Add(-time.Hour).Unix() }), ReasonExpired},
		{"exp missing", edit(func(c map[string]any) { delete(c, "exp") }), ReasonMissingClaim},
		{"exp a string", edit(func(c map[string]any) { c["exp"] = fmt.Sprint(now.Add(time.Hour).Unix()) }), ReasonMalformedClaim},
		{"exp absurdly large", edit(func(c map[string]any) { c["exp"] = 1e300 }), ReasonMalformedClaim},
		{"nbf an hour ahead", edit(func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() }), ReasonNotYetValid},
		{"iat an hour ahead", edit(func(c map[string]any) { c["iat"] = now.Add(time.Hour).Unix() }), ReasonIssuedInFuture},
		{"iat a string", edit(func(c map[string]any) { c["iat"] = "yesterday" }), ReasonMalformedClaim},
		{"nbf a bool", edit(func(c map[string]any) { c["nbf"] = true }), ReasonMalformedClaim},

		// Type.
		{"typ of another JWT kind", signed(issuer.WithType("secevent+jwt")), ReasonWrongType},
		{"typ not a string", signed(issuer.WithType(""), issuer.WithHeader("typ", 1)), ReasonMalformed},

		// Required claims and types.
		{"sub missing", edit(func(c map[string]any) { delete(c, "sub") }), ReasonMissingClaim},
		{"jti missing", edit(func(c map[string]any) { delete(c, "jti") }), ReasonMissingClaim},
		{"client_id missing", edit(func(c map[string]any) { delete(c, "client_id") }), ReasonMissingClaim},
		{"tenant missing", edit(func(c map[string]any) { delete(c, "tenant_id") }), ReasonMissingClaim},
		{"tenant empty", edit(func(c map[string]any) { c["tenant_id"] = "" }), ReasonMissingClaim},
		{"tenant an array", edit(func(c map[string]any) { c["tenant_id"] = []string{"acme"} }), ReasonMalformedClaim},
		{"sub a number", edit(func(c map[string]any) { c["sub"] = 12 }), ReasonMalformedClaim},
		{"sub null", edit(func(c map[string]any) { c["sub"] = nil }), ReasonMissingClaim},
		{"scope an object", edit(func(c map[string]any) { c["scope"] = map[string]any{"missions:read": true} }), ReasonMalformedClaim},
		{"scp a number", edit(func(c map[string]any) { c["scp"] = 1 }), ReasonMalformedClaim},
		{"tools a string", edit(func(c map[string]any) { c["tools"] = "aura_get_mission" }), ReasonMalformedClaim},
		{"compartments mixed array", edit(func(c map[string]any) { c["compartments"] = []any{"a", 1} }), ReasonMalformedClaim},

		// Shape.
		{"empty", raw(""), ReasonMalformed},
		{"not a JWT", raw("not.a.jwt"), ReasonMalformed},
		{"one segment", raw("abc"), ReasonMalformed},
		{"JWE shape", raw("a.b.c.d.e"), ReasonMalformed},
		{"header not JSON", raw(b64([]byte("xx")) + "." + b64([]byte(`{}`)) + ".c2ln"), ReasonMalformed},
		{"alg not a string", raw(b64([]byte(`{"alg":1}`)) + "." + b64([]byte(`{}`)) + ".c2ln"), ReasonMalformed},
		{"payload not an object", raw(b64([]byte(`{"alg":"RS256"}`)) + "." + b64([]byte(`[1]`)) + ".c2ln"), ReasonMalformed},
		{"crit header", signed(issuer.WithHeader("crit", []string{"exp"})), ReasonMalformed},
		{"oversized", raw(strings.Repeat("a", MaxTokenBytes+1)), ReasonTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := e.v.Verify(context.Background(), tc.token(t))
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p == nil || p.Tenant != "acme" {
					t.Fatalf("principal %+v", p)
				}
				return
			}
			wantRefusal(t, err, tc.reason)
			if !errors.Is(err, ErrInvalidToken) || p != nil {
				t.Fatalf("err %v p %v", err, p)
			}
			if got := e.refusals.last(); got != tc.reason {
				t.Fatalf("OnRefusal saw %q", got)
			}
			// An untrusted issuer's refusal names the issuer, for the
			// token's holder (praxa mcp says so), never in the answer.
			var ie *IssuerError
			if tc.reason == ReasonUntrustedIssuer && (!errors.As(err, &ie) || ie.Issuer == "" || strings.Contains(err.Error(), ie.Issuer)) {
				t.Errorf("the refusal's cause does not name the issuer apart: %#v", err)
			}
		})
	}
	if n := e.a.DiscoveryFetches(); n != 1 {
		t.Errorf("issuer A discovery fetched %d times, want 1", n)
	}
	if n := e.a.JWKSFetches(); n != 1 {
		t.Errorf("issuer A JWKS fetched %d times, want 1 (unknown kids within the interval must not refetch)", n)
	}
	if n := e.b.DiscoveryFetches(); n != 0 {
		t.Errorf("issuer B (jwksURL) was discovered %d times", n)
	}
}

func TestPrincipal(t *testing.T) {
	e := newEnv(t, nil)
	c := e.claims()
	c["scope"] = "missions:read  Missions:write capabilities:read"
	c["scp"] = []string{"memory:read"}
	c["compartments"] = []string{"finance"}
	c["purposes"] = []string{"support", "audit"}
	c["tools"] = []string{"aura_get_mission"}
	c["client_id"] = "cli-1"
	tok := e.sign(t, c)
	p, err := e.v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	want := &Principal{
		Subject: "alice", ClientID: "cli-1", Tenant: "acme",
		Scopes:       NewScopeSet(contracts.ScopeMissionsRead, "Missions:write", contracts.ScopeCapabilitiesRead, contracts.ScopeMemoryRead),
		Compartments: []string{"finance"}, Purposes: []string{"support", "audit"}, Tools: []string{"aura_get_mission"},
		TokenID: c["jti"].(string), Issuer: e.aSrv.URL, Expiry: time.Unix(c["exp"].(int64), 0),
	}
	if fmt.Sprint(p) != fmt.Sprint(want) || !p.Expiry.Equal(want.Expiry) {
		t.Fatalf("principal\n got %+v\nwant %+v", p, want)
	}
	if p.HasScope(contracts.ScopeMissionsWrite) {
		t.Error("scope matching must be case-sensitive")
	}
	if got := p.MissingScopes(contracts.ScopeMissionsWrite, contracts.ScopeMissionsRead, contracts.ScopeMissionsWrite); !slices.Equal(got, []contracts.Scope{contracts.ScopeMissionsWrite}) {
		t.Errorf("MissingScopes = %v", got)
	}
	if !p.AllowsTool("aura_get_mission") || p.AllowsTool("aura_cancel_mission") {
		t.Error("tool allowlist")
	}

	// The cached copy is the caller's own: mutating it changes nothing.
	p.Scopes[contracts.ScopeTokensWrite] = struct{}{}
	p.Tools[0] = "x"
	again, err := e.v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if again.HasScope(contracts.ScopeTokensWrite) || again.Tools[0] != "aura_get_mission" {
		t.Fatal("a caller's mutation leaked into the cache")
	}
	if s := e.v.CacheStats(); s.Hits != 1 {
		t.Fatalf("cache stats %+v", s)
	}

	// No tools claim: no allowlist. An empty one: nothing allowed.
	c2 := e.claims()
	p2, err := e.v.Verify(context.Background(), e.sign(t, c2))
	if err != nil {
		t.Fatal(err)
	}
	if p2.Tools != nil || !p2.AllowsTool("anything") || p2.Compartments != nil {
		t.Errorf("absent claims: %+v", p2)
	}
	c2["tools"] = []string{}
	p3, err := e.v.Verify(context.Background(), e.sign(t, c2))
	if err != nil {
		t.Fatal(err)
	}
	if p3.Tools == nil || p3.AllowsTool("anything") {
		t.Errorf("empty allowlist: %+v", p3)
	}
}

func TestRequireAtJWT(t *testing.T) {
	e := newEnv(t, func(a *config.Auth, _ *Options) { a.RequireAtJWT = true })
	for typ, reason := range map[string]string{
		"at+jwt":             "",
		"AT+JWT":             "",
		"application/at+jwt": "",
		"JWT":                ReasonWrongType,
		"application/jwt":    ReasonWrongType,
		"":                   ReasonWrongType,
	} {
		t.Run("typ="+typ, func(t *testing.T) {
			_, err := e.v.Verify(context.Background(), e.token(t, issuer.WithType(typ)))
			if reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantRefusal(t, err, reason)
		})
	}
}

func TestCustomClaims(t *testing.T) {
	e := newEnv(t, func(a *config.Auth, _ *Options) {
		a.Claims.Tenant = "org"
		a.Claims.Tools = "allowed_tools"
		a.RequiredClaims = []string{"sub", "iat", "acr"}
	})
	c := e.claims()
	delete(c, "tenant_id")
	delete(c, "jti")
	delete(c, "client_id")
	c["org"] = "globex"
	c["acr"] = "mfa"
	c["allowed_tools"] = []string{"aura_get_mission"}
	p, err := e.v.Verify(context.Background(), e.sign(t, c))
	if err != nil {
		t.Fatal(err)
	}
	if p.Tenant != "globex" || !slices.Equal(p.Tools, []string{"aura_get_mission"}) || p.TokenID != "" {
		t.Fatalf("principal %+v", p)
	}
	for _, missing := range []string{"acr", "iat", "org"} {
		c2 := maps.Clone(c)
		delete(c2, missing)
		_, err := e.v.Verify(context.Background(), e.sign(t, c2))
		wantRefusal(t, err, ReasonMissingClaim)
		if !strings.HasSuffix(err.Error(), missing) {
			t.Errorf("error %q does not name %s", err, missing)
		}
	}
}

func TestUnknownKidRefetchIsRateLimited(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.v.Verify(ctx, e.token(t)); err != nil {
		t.Fatal(err)
	}
	if n := e.a.JWKSFetches(); n != 1 {
		t.Fatalf("initial fetches %d", n)
	}
	bogus := func(i int) string { return e.token(t, issuer.WithKeyID(fmt.Sprintf("bogus-%d", i))) }

	// Within the interval of the first fetch: no refetch at all.
	for i := range 20 {
		_, err := e.v.Verify(ctx, bogus(i))
		wantRefusal(t, err, ReasonUnknownKey)
	}
	if n := e.a.JWKSFetches(); n != 1 {
		t.Fatalf("20 bogus kids within the interval caused %d refetches", n-1)
	}

	// After the interval: 20 concurrent bogus kids share exactly one refetch.
	e.clock.Add(31 * time.Second)
	toks := make([]string, 20)
	for i := range toks {
		toks[i] = bogus(100 + i)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(toks))
	for i, tok := range toks {
		wg.Go(func() { _, errs[i] = e.v.Verify(ctx, tok) })
	}
	wg.Wait()
	for _, err := range errs {
		wantRefusal(t, err, ReasonUnknownKey)
	}
	if n := e.a.JWKSFetches(); n != 2 {
		t.Fatalf("20 bogus kids after the interval caused %d refetches, want 1", n-1)
	}
	// And sequentially afterwards, still none until the next interval.
	for i := range 20 {
		_, err := e.v.Verify(ctx, bogus(200+i))
		wantRefusal(t, err, ReasonUnknownKey)
	}
	if n := e.a.JWKSFetches(); n != 2 {
		t.Fatalf("refetched again within the interval: %d", n)
	}
}

func TestKeyRotation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	oldKID := e.a.DefaultKeyID()
	oldTok := e.token(t)
	if _, err := e.v.Verify(ctx, oldTok); err != nil {
		t.Fatal(err)
	}

	// A new key is published; within the interval its tokens are refused,
	// after it they are accepted, without a restart.
	newKID, err := e.a.Rotate(issuer.RS256)
	if err != nil {
		t.Fatal(err)
	}
	newTok := e.token(t)
	_, err = e.v.Verify(ctx, newTok)
	wantRefusal(t, err, ReasonUnknownKey)
	e.clock.Add(31 * time.Second)
	if _, err := e.v.Verify(ctx, newTok); err != nil {
		t.Fatalf("token of the rotated-in key %s: %v", newKID, err)
	}
	if n := e.a.JWKSFetches(); n != 2 {
		t.Fatalf("JWKS fetches %d, want 2", n)
	}

	// The old key is removed from the JWKS: trusted until the next fetch
	// (here triggered by an unknown kid after the interval), refused after,
	// including its cached token.
	freshOld := e.sign(t, e.claims(), issuer.WithKey(oldKID))
	e.a.RemoveKey(oldKID)
	if _, err := e.v.Verify(ctx, oldTok); err != nil {
		t.Fatalf("before any refetch the old key is still trusted: %v", err)
	}
	e.clock.Add(31 * time.Second)
	_, err = e.v.Verify(ctx, e.token(t, issuer.WithKeyID("trigger")))
	wantRefusal(t, err, ReasonUnknownKey)
	if n := e.a.JWKSFetches(); n != 3 {
		t.Fatalf("JWKS fetches %d, want 3", n)
	}
	_, err = e.v.Verify(ctx, oldTok)
	wantRefusal(t, err, ReasonUnknownKey)
	_, err = e.v.Verify(ctx, freshOld)
	wantRefusal(t, err, ReasonUnknownKey)
	if _, err := e.v.Verify(ctx, newTok); err != nil {
		t.Fatalf("the remaining key's cached token: %v", err)
	}
}

func TestKeysMaxAge(t *testing.T) {
	e := newEnv(t, func(_ *config.Auth, o *Options) { o.KeysMaxAge = 10 * time.Minute })
	ctx := context.Background()
	kid := e.a.DefaultKeyID()
	c := e.claims()
	c["exp"] = e.clock.Now().Add(time.Hour).Unix()
	tok := e.sign(t, c)
	if _, err := e.v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	e.a.RemoveKey(kid)
	e.clock.Add(9 * time.Minute)
	if _, err := e.v.Verify(ctx, tok); err != nil {
		t.Fatalf("within the max age: %v", err)
	}
	e.clock.Add(2 * time.Minute)
	_, err := e.v.Verify(ctx, tok)
	wantRefusal(t, err, ReasonUnknownKey)
	if n := e.a.JWKSFetches(); n != 2 {
		t.Fatalf("JWKS fetches %d, want 2", n)
	}
}

func TestIssuerDownAtStart(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.a.SetAvailable(false)
	tok := e.token(t)
	for range 5 {
		_, err := e.v.Verify(ctx, tok)
		wantRefusal(t, err, ReasonIssuerUnavailable)
	}
	if n := e.transport.count("/.well-known/openid-configuration"); n != 1 {
		t.Fatalf("discovery attempted %d times within the interval, want 1", n)
	}
	if err := e.v.Warm(ctx); err == nil {
		t.Fatal("Warm reported success while the issuer is down")
	}

	// Issuer B is independent of A.
	btok, err := e.b.Mint("", resource, "bob", "acme", nil, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.v.Verify(ctx, btok); err != nil {
		t.Fatalf("issuer B: %v", err)
	}

	e.a.SetAvailable(true)
	_, err = e.v.Verify(ctx, tok)
	wantRefusal(t, err, ReasonIssuerUnavailable) // still within the retry interval
	e.clock.Add(31 * time.Second)
	if _, err := e.v.Verify(ctx, tok); err != nil {
		t.Fatalf("after the issuer came back: %v", err)
	}
	if err := e.v.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.transport.count("/.well-known/openid-configuration"); n != 2 {
		t.Fatalf("discovery attempts %d, want 2", n)
	}
}

func TestWarm(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.v.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.a.JWKSFetches() != 1 || e.b.JWKSFetches() != 1 {
		t.Fatalf("fetches A %d B %d", e.a.JWKSFetches(), e.b.JWKSFetches())
	}
	if _, err := e.v.Verify(context.Background(), e.token(t)); err != nil {
		t.Fatal(err)
	}
	if e.a.JWKSFetches() != 1 {
		t.Fatal("Verify refetched after Warm")
	}
	if got := e.v.Issuers(); len(got) != 2 {
		t.Fatalf("Issuers = %v", got)
	}
}

func TestRevocation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	c := e.claims()
	jti := c["jti"].(string)
	tok := e.sign(t, c)
	if _, err := e.v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := e.v.Verify(ctx, tok); err != nil { // cached
		t.Fatal(err)
	}
	if s := e.v.CacheStats(); s.Entries != 1 || s.Hits != 1 {
		t.Fatalf("cache %+v", s)
	}
	e.rev.revoke(jti)
	_, err := e.v.Verify(ctx, tok)
	wantRefusal(t, err, ReasonRevoked) // revocation applies to the cached token at once

	// A second token with the same jti (a re-signed copy) is cached too;
	// Forget drops both.
	e.rev.mu.Lock()
	e.rev.revoked = nil
	e.rev.mu.Unlock()
	if _, err := e.v.Verify(ctx, e.sign(t, c, issuer.WithType("JWT"))); err != nil {
		t.Fatal(err)
	}
	if n := e.v.Forget(jti); n != 2 {
		t.Fatalf("Forget dropped %d entries, want 2", n)
	}
	if s := e.v.CacheStats(); s.Entries != 0 {
		t.Fatalf("cache %+v", s)
	}
	e.rev.revoke(jti)
	_, err = e.v.Verify(ctx, tok)
	wantRefusal(t, err, ReasonRevoked)

	// A failing revocation store is an error, not a refusal and not a pass.
	e.rev.mu.Lock()
	e.rev.err = errors.New("store down")
	e.rev.mu.Unlock()
	_, err = e.v.Verify(ctx, e.token(t))
	if err == nil || errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("revocation failure: %v", err)
	}
}

func TestCacheNeverPastExp(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	c := e.claims()
	c["exp"] = e.clock.Now().Add(time.Minute).Unix()
	tok := e.sign(t, c)
	if _, err := e.v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(59 * time.Second)
	if _, err := e.v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if s := e.v.CacheStats(); s.Hits != 1 {
		t.Fatalf("expected a cache hit before exp: %+v", s)
	}
	// At exp+10s (inside the 30s leeway): not served from the cache, but
	// verified afresh and accepted, and not cached again.
	e.clock.Add(11 * time.Second)
	if _, err := e.v.Verify(ctx, tok); err != nil {
		t.Fatalf("within leeway: %v", err)
	}
	if s := e.v.CacheStats(); s.Hits != 1 || s.Entries != 0 {
		t.Fatalf("served past exp from the cache: %+v", s)
	}
	e.clock.Add(21 * time.Second)
	_, err := e.v.Verify(ctx, tok)
	wantRefusal(t, err, ReasonExpired)
}

func TestCacheBounded(t *testing.T) {
	e := newEnv(t, func(a *config.Auth, _ *Options) { a.CacheSize = 3 })
	ctx := context.Background()
	toks := make([]string, 5)
	for i := range toks {
		toks[i] = e.token(t)
		if _, err := e.v.Verify(ctx, toks[i]); err != nil {
			t.Fatal(err)
		}
	}
	if s := e.v.CacheStats(); s.Entries != 3 {
		t.Fatalf("cache holds %d entries, bound 3", s.Entries)
	}
	// The oldest were evicted; the newest is served from the cache.
	if _, err := e.v.Verify(ctx, toks[4]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.v.Verify(ctx, toks[0]); err != nil {
		t.Fatal(err)
	}
	if s := e.v.CacheStats(); s.Hits != 1 || s.Entries != 3 {
		t.Fatalf("cache %+v", s)
	}

	off := newEnv(t, func(a *config.Auth, _ *Options) { a.CacheSize = -1 })
	tok := off.token(t)
	for range 2 {
		if _, err := off.v.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if s := off.v.CacheStats(); s != (CacheStats{}) || off.v.Forget("x") != 0 {
		t.Fatalf("disabled cache %+v", s)
	}
}

func TestStaticIssuer(t *testing.T) {
	clock := newClock()
	dev, err := issuer.New(issuer.Options{Issuer: "http://127.0.0.1:8080/dev/issuer", Algorithms: []string{issuer.EdDSA}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var keys []StaticKey
	for _, pk := range dev.PublicKeys() {
		keys = append(keys, StaticKey{KeyID: pk.KeyID, Algorithm: pk.Algorithm, Key: pk.Key})
	}
	v, err := NewVerifier(context.Background(), config.Auth{Resource: resource}, &Options{
		Now:           clock.Now,
		StaticIssuers: []StaticIssuer{{Issuer: dev.Issuer(), Keys: keys}},
		HTTPClient:    nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := dev.Mint("", resource, "dev", "local", []string{"missions:read"}, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if p.Issuer != dev.Issuer() || !p.HasScope(contracts.ScopeMissionsRead) {
		t.Fatalf("principal %+v", p)
	}
	// Unknown kid: no key set to fetch, refused at once.
	bad, err := dev.Sign(dev.Claims("", resource, "dev", "local", nil, time.Minute), issuer.WithKeyID("x"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), bad)
	wantRefusal(t, err, ReasonUnknownKey)
	if err := v.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestNewVerifierRefusesBadConfig(t *testing.T) {
	ok := config.Issuer{Issuer: "https://idp.test"}
	key := issuer.PublicKey{}
	dev, err := issuer.New(issuer.Options{Algorithms: []string{issuer.ES256}})
	if err != nil {
		t.Fatal(err)
	}
	key = dev.PublicKeys()[0]
	tests := []struct {
		name string
		cfg  config.Auth
		opts *Options
	}{
		{"no resource", config.Auth{Issuers: []config.Issuer{ok}}, nil},
		{"HS256", config.Auth{Resource: resource, Issuers: []config.Issuer{{Issuer: "https://idp.test", Algorithms: []string{"HS256"}}}}, nil},
		{"none", config.Auth{Resource: resource, Issuers: []config.Issuer{{Issuer: "https://idp.test", Algorithms: []string{"none"}}}}, nil},
		{"relative issuer", config.Auth{Resource: resource, Issuers: []config.Issuer{{Issuer: "idp.test"}}}, nil},
		{"issuer with query", config.Auth{Resource: resource, Issuers: []config.Issuer{{Issuer: "https://idp.test/?x=1"}}}, nil},
		{"bad jwks URL", config.Auth{Resource: resource, Issuers: []config.Issuer{{Issuer: "https://idp.test", JWKSURL: "ftp://x"}}}, nil},
		{"duplicate issuer", config.Auth{Resource: resource, Issuers: []config.Issuer{ok, ok}}, nil},
		{"leeway too large", config.Auth{Resource: resource, Leeway: config.Duration(6 * time.Minute)}, nil},
		{"negative interval", config.Auth{Resource: resource, JWKSRefreshInterval: config.Duration(-time.Second)}, nil},
		{"static without keys", config.Auth{Resource: resource}, &Options{StaticIssuers: []StaticIssuer{{Issuer: "https://dev.test"}}}},
		{"static duplicating a configured issuer", config.Auth{Resource: resource, Issuers: []config.Issuer{ok}},
			&Options{StaticIssuers: []StaticIssuer{{Issuer: ok.Issuer, Keys: []StaticKey{{KeyID: key.KeyID, Key: key.Key}}}}}},
		{"static key of the wrong type for its alg", config.Auth{Resource: resource},
			&Options{StaticIssuers: []StaticIssuer{{Issuer: "https://dev.test", Keys: []StaticKey{{KeyID: "k", Algorithm: "RS256", Key: key.Key}}}}}},
		{"static symmetric key", config.Auth{Resource: resource},
			&Options{StaticIssuers: []StaticIssuer{{Issuer: "https://dev.test", Keys: []StaticKey{{KeyID: "k", Algorithm: "HS256", Key: []byte("secret")}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewVerifier(context.Background(), tc.cfg, tc.opts); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewVerifier(ctx, config.Auth{Resource: resource}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

func TestConcurrentVerifyDuringRotation(t *testing.T) {
	e := newEnv(t, func(a *config.Auth, _ *Options) { a.CacheSize = 8 })
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				tok := e.token(t)
				if _, err := e.v.Verify(ctx, tok); err != nil && Reason(err) != ReasonUnknownKey {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
				if i%10 == 0 {
					_, _ = e.v.Verify(ctx, e.token(t, issuer.WithKeyID("bogus")))
					e.v.Forget("nothing")
				}
			}
		})
	}
	wg.Go(func() {
		for range 3 {
			if _, err := e.a.Rotate(issuer.ES256); err != nil {
				t.Error(err)
			}
			e.clock.Add(31 * time.Second)
		}
	})
	wg.Wait()
}

// One configured leeway applies to exp, nbf and iat alike, up to the 5m
// maximum.
func TestLeeway(t *testing.T) {
	e := newEnv(t, func(a *config.Auth, _ *Options) { a.Leeway = config.Duration(5 * time.Minute) })
	now := e.clock.Now()
	for _, tc := range []struct {
		claim  string
		offset time.Duration
		reason string
	}{
		{"exp", -4 * time.Minute, ""},
		{"exp", -6 * time.Minute, ReasonExpired},
		{"nbf", 4 * time.Minute, ""},
		{"nbf", 6 * time.Minute, ReasonNotYetValid},
		{"iat", 4 * time.Minute, ""},
		{"iat", 6 * time.Minute, ReasonIssuedInFuture},
	} {
		t.Run(fmt.Sprintf("%s%+v", tc.claim, tc.offset), func(t *testing.T) {
			c := e.claims()
			c[tc.claim] = now.Add(tc.offset).Unix()
			_, err := e.v.Verify(context.Background(), e.sign(t, c))
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantRefusal(t, err, tc.reason)
		})
	}
}
