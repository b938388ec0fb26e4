package gatewaytest

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/issuer"
)

// TokenSpec describes an access token to mint (Issuer.Token).
type TokenSpec struct {
	// Tenant and Subject are the token's tenant_id and sub claims.
	Tenant, Subject string
	// Scopes are its scopes (nil: every scope, AllScopes).
	Scopes []string
	// TTL is how long it is valid (0: issuer.DefaultTTL).
	TTL time.Duration
	// Claims are added to the standard claims or replace them; a nil
	// value removes a claim.
	Claims map[string]any
	// Sign tunes the signature (key, algorithm, header).
	Sign []issuer.SignOption
}

// Token mints an RFC 9068 access token of spec for resource (the audience)
// signed by i, failing the test when it cannot.
func (i *Issuer) Token(t testing.TB, resource string, spec TokenSpec) string {
	t.Helper()
	tok, err := i.Sign(i.TokenClaims(resource, spec), spec.Sign...)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TokenClaims are the claims Token signs for spec: the standard claims of
// an access token (issuer.Issuer.Claims), edited by spec.Claims.
func (i *Issuer) TokenClaims(resource string, spec TokenSpec) map[string]any {
	if spec.Scopes == nil {
		spec.Scopes = AllScopes()
	}
	claims := i.Claims(i.URL, resource, spec.Subject, spec.Tenant, spec.Scopes, spec.TTL)
	for name, v := range spec.Claims {
		if v == nil {
			delete(claims, name)
		} else {
			claims[name] = v
		}
	}
	return claims
}

// Mint is Issuer.Token for this gateway's resource.
func (g *Gateway) Mint(t testing.TB, spec TokenSpec) string {
	t.Helper()
	return g.Issuer.Token(t, g.Config.Auth.Resource, spec)
}

// JWTClaims decodes the claims of the JWT tok without verifying it,
// failing the test when tok is not a JWT with a JSON payload.
func JWTClaims(t testing.TB, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(strings.TrimSpace(tok), ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("JWT payload: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("JWT claims: %v", err)
	}
	return m
}
