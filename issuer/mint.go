package issuer

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"time"
)

// DefaultClientID is the client_id of tokens from Claims and Mint unless
// extra claims say otherwise.
const DefaultClientID = "praxa-dev"

// DefaultTTL is the lifetime Claims and Mint give a token when ttl is zero.
const DefaultTTL = 15 * time.Minute

// NewTokenID returns a random token id (128 bits, base64url), as used for
// jti.
func NewTokenID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Claims returns the claims of a standard RFC 9068 access token, timed by
// the issuer's clock: iss (issuerURL, or the issuer's own URL when empty),
// aud, sub, client_id (DefaultClientID), a random jti, iat, nbf, exp (now +
// ttl; DefaultTTL when ttl is zero, and ttl may be negative), scope
// (space-separated) and tenant_id. Tests edit the map and pass it to Sign.
func (i *Issuer) Claims(issuerURL, audience, subject, tenant string, scopes []string, ttl time.Duration) map[string]any {
	i.mu.RLock()
	now := i.now()
	if issuerURL == "" {
		issuerURL = i.issuer
	}
	i.mu.RUnlock()
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return map[string]any{
		"iss":       issuerURL,
		"aud":       audience,
		"sub":       subject,
		"client_id": DefaultClientID,
		"jti":       NewTokenID(),
		"iat":       now.Unix(),
		"nbf":       now.Unix(),
		"exp":       now.Add(ttl).Unix(),
		"scope":     strings.Join(scopes, " "),
		"tenant_id": tenant,
	}
}

// Mint signs a standard access token (see Claims) with the default key and
// typ at+jwt. Entries of extra are added to the claims or replace them; an
// entry whose value is nil removes the claim.
func (i *Issuer) Mint(issuerURL, audience, subject, tenant string, scopes []string, ttl time.Duration, extra map[string]any) (string, error) {
	claims := i.Claims(issuerURL, audience, subject, tenant, scopes, ttl)
	for name, v := range extra {
		if v == nil {
			delete(claims, name)
			continue
		}
		claims[name] = v
	}
	return i.Sign(claims)
}
