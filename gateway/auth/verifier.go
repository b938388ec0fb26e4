// Package auth verifies OAuth 2 bearer access tokens (JWT, RFC 9068) and
// builds the Principal the service layer decides with.
//
// A Verifier trusts the issuers of the configuration (auth.issuers), each
// reached by OIDC discovery or through a configured JWKS URL, plus static
// issuers given in code (the --dev issuer). It verifies a token with go-oidc
// over its own key set, which caches keys by kid and refetches a JWKS on an
// unknown kid at most once per auth.jwksRefreshInterval, then applies the
// checks go-oidc leaves to its caller: typ, iat, leeway on nbf, required
// claims and their JSON types, the tenant claim, scopes, revocation.
//
// Every refusal is a *RefusalError wrapping ErrInvalidToken (401
// invalid_token) or ErrInvalidRequest (400 invalid_request) with a short
// reason that is safe to show; ErrNoToken means no credentials at all.
//
// Checks, in order (the first failure answers):
//
//  1. size (MaxTokenBytes) and compact-JWS shape; no crit or b64 header;
//  2. iss: picked from the unverified payload only to choose the issuer; an
//     issuer not configured exactly (no trailing-slash or case folding) is
//     untrusted;
//  3. alg: in the issuer's allowlist (asymmetric algorithms only);
//  4. signature, by go-oidc with this package's key set: unknown kid after
//     the rate-limited refetch, or a key that does not verify, refuses;
//  5. go-oidc's own iss and aud (must contain auth.resource) checks; time
//     claims are left to step 7, so that one leeway applies to all of them;
//  6. typ: at+jwt or application/at+jwt; JWT (or application/jwt) and a
//     missing typ too unless auth.requireAtJwt (many providers still issue
//     JWT; an ID token is then told apart only by its audience);
//  7. claims: iss, aud, exp (required, a number, not past exp+leeway), nbf
//     and iat (numbers, not beyond now+leeway), auth.requiredClaims present
//     and strings (client_id may come from azp), the tenant claim a
//     non-empty string, scope/scp a string or an array of strings, the
//     compartments, purposes and tools claims arrays of strings; a claim of
//     the wrong JSON type is refused, never coerced;
//  8. revocation of the jti, through Options.Revocations.
//
// Verified tokens are cached (see Verify); revocation is checked on every
// call, cached or not.
package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
)

// Defaults that apply when the configuration leaves a field at zero.
const (
	DefaultLeeway              = 30 * time.Second
	MaxLeeway                  = 5 * time.Minute
	DefaultJWKSRefreshInterval = 30 * time.Second
	DefaultCacheSize           = 10000
	DefaultKeysMaxAge          = time.Hour
	DefaultFetchTimeout        = 10 * time.Second
)

// defaultAlgorithms are an issuer's algorithms when the configuration names
// none.
var defaultAlgorithms = []string{"RS256", "ES256", "EdDSA"}

// Revocations reports whether a token id has been revoked. Verify calls it
// for every token it accepts, cached or not, so a revocation takes effect as
// soon as Revoked reports it: the propagation bound is whatever the
// implementation's own caching adds (none, unless it caches). An error makes
// Verify fail with that error (not a refusal): the edge answers 503, never
// 200.
type Revocations interface {
	Revoked(ctx context.Context, jti string) (bool, error)
}

// StaticKey is a verification key given in code.
type StaticKey struct {
	// KeyID is the kid tokens name.
	KeyID string
	// Algorithm is the key's signing algorithm; empty means RS256 for RSA,
	// ES256/ES384/ES512 by curve for ECDSA and EdDSA for Ed25519.
	Algorithm string
	// Key is an *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey.
	Key crypto.PublicKey
}

// StaticIssuer is an issuer trusted without any HTTP: its keys are given.
// The --dev mode uses it for its built-in issuer.
type StaticIssuer struct {
	// Issuer is the exact iss value.
	Issuer string
	// Keys are the issuer's verification keys.
	Keys []StaticKey
	// Algorithms allowed for the issuer; empty means the keys' algorithms.
	Algorithms []string
}

// Options are NewVerifier's dependencies. The zero value is usable.
type Options struct {
	// HTTPClient fetches discovery documents and JWKS (default: a client
	// without timeout of its own; every fetch is bounded by FetchTimeout).
	HTTPClient *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Revocations, when set, is consulted for every accepted token.
	Revocations Revocations
	// StaticIssuers are trusted in addition to the configured ones.
	StaticIssuers []StaticIssuer
	// OnRefusal, when set, is called with the reason of every refusal
	// (Verify and Authenticate), e.g. to count them by reason.
	OnRefusal func(reason string)
	// KeysMaxAge is how long fetched keys are used before the next token
	// refreshes them (within the refetch rate limit). Zero means
	// DefaultKeysMaxAge; a negative value disables age-based refreshes.
	KeysMaxAge time.Duration
	// FetchTimeout bounds one discovery or JWKS fetch (default
	// DefaultFetchTimeout).
	FetchTimeout time.Duration
}

// trustedIssuer is one issuer a Verifier trusts.
type trustedIssuer struct {
	issuer string
	algs   []string
	keys   *keySet
}

// Verifier verifies bearer access tokens. It is safe for concurrent use.
type Verifier struct {
	resource     string
	issuers      map[string]*trustedIssuer
	leeway       time.Duration
	requireAtJWT bool
	required     []string
	claims       config.Claims
	now          func() time.Time
	revocations  Revocations
	onRefusal    func(string)
	cache        *tokenCache // nil when disabled
}

// NewVerifier returns a Verifier for cfg. Zero fields of cfg take the
// defaults config.Defaults gives them; a negative cfg.CacheSize disables the
// verified-token cache. It refuses a configuration without a resource, with
// an issuer that is not an absolute http(s) URL, with a duplicate issuer, or
// with an algorithm that is not asymmetric (HS256, none, …).
//
// NewVerifier does no network I/O, so the gateway starts while an identity
// provider is down: discovery and key fetches happen on first use (or
// Warm), and are retried at most once per refresh interval; meanwhile that
// issuer's tokens are refused ("issuer unavailable").
func NewVerifier(ctx context.Context, cfg config.Auth, opts *Options) (*Verifier, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &Options{}
	}
	if cfg.Resource == "" {
		return nil, errors.New("auth: no resource identifier (auth.resource)")
	}
	v := &Verifier{
		resource:     cfg.Resource,
		issuers:      make(map[string]*trustedIssuer),
		leeway:       time.Duration(cfg.Leeway),
		requireAtJWT: cfg.RequireAtJWT,
		required:     cfg.RequiredClaims,
		claims:       cfg.Claims,
		now:          opts.Now,
		revocations:  opts.Revocations,
		onRefusal:    opts.OnRefusal,
	}
	if v.now == nil {
		v.now = time.Now
	}
	switch {
	case v.leeway == 0:
		v.leeway = DefaultLeeway
	case v.leeway < 0 || v.leeway > MaxLeeway:
		return nil, fmt.Errorf("auth: leeway %v outside 0..%v", v.leeway, MaxLeeway)
	}
	if v.required == nil {
		v.required = []string{"sub", "jti", "client_id"}
	}
	for _, f := range []struct {
		p   *string
		def string
	}{{&v.claims.Tenant, "tenant_id"}, {&v.claims.Compartments, "compartments"}, {&v.claims.Purposes, "purposes"}, {&v.claims.Tools, "tools"}} {
		if *f.p == "" {
			*f.p = f.def
		}
	}
	interval := time.Duration(cfg.JWKSRefreshInterval)
	switch {
	case interval == 0:
		interval = DefaultJWKSRefreshInterval
	case interval < 0:
		return nil, fmt.Errorf("auth: negative jwksRefreshInterval %v", interval)
	}
	switch size := cfg.CacheSize; {
	case size == 0:
		v.cache = newTokenCache(DefaultCacheSize)
	case size > 0:
		v.cache = newTokenCache(size)
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	maxAge := opts.KeysMaxAge
	if maxAge == 0 {
		maxAge = DefaultKeysMaxAge
	}
	timeout := opts.FetchTimeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}

	for _, ic := range cfg.Issuers {
		if err := checkURL(ic.Issuer, true); err != nil {
			return nil, fmt.Errorf("auth: issuer %q: %w", ic.Issuer, err)
		}
		if ic.JWKSURL != "" {
			if err := checkURL(ic.JWKSURL, false); err != nil {
				return nil, fmt.Errorf("auth: issuer %q: jwksURL: %w", ic.Issuer, err)
			}
		}
		algs := ic.Algorithms
		if len(algs) == 0 {
			algs = defaultAlgorithms
		}
		if err := checkAlgorithms(algs); err != nil {
			return nil, fmt.Errorf("auth: issuer %q: %w", ic.Issuer, err)
		}
		ks := &keySet{
			issuer: ic.Issuer, discover: ic.JWKSURL == "", jwksURL: ic.JWKSURL,
			client: client, now: v.now, interval: interval, maxAge: maxAge, timeout: timeout,
			algs: joseAlgs(algs),
		}
		if err := v.add(&trustedIssuer{issuer: ic.Issuer, algs: slices.Clone(algs), keys: ks}); err != nil {
			return nil, err
		}
	}
	for _, si := range opts.StaticIssuers {
		ti, err := staticIssuer(si, v.now)
		if err != nil {
			return nil, err
		}
		if err := v.add(ti); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// add registers ti, refusing a duplicate.
func (v *Verifier) add(ti *trustedIssuer) error {
	if _, dup := v.issuers[ti.issuer]; dup {
		return fmt.Errorf("auth: issuer %q configured twice", ti.issuer)
	}
	v.issuers[ti.issuer] = ti
	return nil
}

// staticIssuer builds a trusted issuer from keys given in code.
func staticIssuer(si StaticIssuer, now func() time.Time) (*trustedIssuer, error) {
	if err := checkURL(si.Issuer, true); err != nil {
		return nil, fmt.Errorf("auth: static issuer %q: %w", si.Issuer, err)
	}
	if len(si.Keys) == 0 {
		return nil, fmt.Errorf("auth: static issuer %q has no keys", si.Issuer)
	}
	var keys []*verKey
	var keyAlgs []string
	for _, sk := range si.Keys {
		alg := sk.Algorithm
		if alg == "" {
			alg = defaultAlgorithm(sk.Key)
		}
		k := &verKey{kid: sk.KeyID, alg: alg, pub: sk.Key}
		if !slices.Contains(asymmetricAlgs, alg) || !keyFits(k, alg) || usableKey(jose.JSONWebKey{Key: sk.Key, Algorithm: alg}) == nil {
			return nil, fmt.Errorf("auth: static issuer %q: key %q (%T) cannot verify %q", si.Issuer, sk.KeyID, sk.Key, alg)
		}
		keys = append(keys, k)
		if !slices.Contains(keyAlgs, alg) {
			keyAlgs = append(keyAlgs, alg)
		}
	}
	algs := si.Algorithms
	if len(algs) == 0 {
		algs = keyAlgs
	}
	if err := checkAlgorithms(algs); err != nil {
		return nil, fmt.Errorf("auth: static issuer %q: %w", si.Issuer, err)
	}
	ks := &keySet{issuer: si.Issuer, static: true, now: now, algs: joseAlgs(algs)}
	ks.install(keys)
	return &trustedIssuer{issuer: si.Issuer, algs: slices.Clone(algs), keys: ks}, nil
}

// defaultAlgorithm names the algorithm a key is used with when none is
// given.
func defaultAlgorithm(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return "RS256"
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P384():
			return "ES384"
		case elliptic.P521():
			return "ES512"
		}
		return "ES256"
	case ed25519.PublicKey:
		return "EdDSA"
	}
	return ""
}

// checkURL requires an absolute http(s) URL; an issuer also may carry no
// query or fragment.
func checkURL(s string, issuer bool) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if !u.IsAbs() || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return errors.New("not an absolute http(s) URL")
	}
	if issuer && (u.RawQuery != "" || u.Fragment != "") {
		return errors.New("an issuer URL has no query or fragment")
	}
	return nil
}

// checkAlgorithms refuses symmetric, unknown and "none" algorithms.
func checkAlgorithms(algs []string) error {
	for _, a := range algs {
		if !slices.Contains(asymmetricAlgs, a) {
			return fmt.Errorf("algorithm %q not allowed (asymmetric only: %s)", a, strings.Join(asymmetricAlgs, ", "))
		}
	}
	return nil
}

func joseAlgs(algs []string) []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(algs))
	for i, a := range algs {
		out[i] = jose.SignatureAlgorithm(a)
	}
	return out
}

// Issuers returns the trusted issuers, sorted.
func (v *Verifier) Issuers() []string {
	out := make([]string, 0, len(v.issuers))
	for iss := range v.issuers {
		out = append(out, iss)
	}
	slices.Sort(out)
	return out
}

// Warm runs discovery and fetches the keys of every issuer that has none
// yet, within the refetch rate limit, and reports the issuers still without
// keys. The gateway may call it at start or from a readiness check; tokens
// work without it.
func (v *Verifier) Warm(ctx context.Context) error {
	var errs []error
	for _, iss := range v.Issuers() {
		ks := v.issuers[iss].keys
		if ks.keys.Load() != nil {
			continue
		}
		ks.refresh(ctx, nil)
		if ks.keys.Load() == nil {
			err := errors.New("no keys fetched yet")
			if p := ks.lastErr.Load(); p != nil {
				err = *p
			}
			errs = append(errs, fmt.Errorf("auth: issuer %s: %w", iss, err))
		}
	}
	return errors.Join(errs...)
}

// CacheStats describe the verified-token cache.
type CacheStats struct {
	// Entries is the number of cached tokens.
	Entries int
	// Hits and Misses count lookups since the Verifier was made.
	Hits, Misses uint64
}

// CacheStats returns the cache's statistics (zero when it is disabled).
func (v *Verifier) CacheStats() CacheStats {
	if v.cache == nil {
		return CacheStats{}
	}
	n, h, m := v.cache.stats()
	return CacheStats{Entries: n, Hits: h, Misses: m}
}

// Forget drops every cached verification of token id jti and returns how
// many there were. Call it when a token is revoked; Verify consults
// Revocations for cached tokens too, so Forget frees memory early rather
// than being needed for correctness.
func (v *Verifier) Forget(jti string) int {
	if v.cache == nil || jti == "" {
		return 0
	}
	return v.cache.forget(jti)
}

// Authenticate extracts the bearer token of r (ExtractBearer) and verifies
// it (Verify) with r's context. It returns the principal and the verified
// token as a Credential, for the connections that exchange it upstream.
func (v *Verifier) Authenticate(r *http.Request) (*Principal, *Credential, error) {
	tok, err := ExtractBearer(r)
	if err != nil {
		v.refused(err)
		return nil, nil, err
	}
	p, err := v.Verify(r.Context(), tok)
	if err != nil {
		return nil, nil, err
	}
	return p, NewCredential(tok, p), nil
}

// Verify verifies the raw access token and returns its principal (a copy the
// caller owns). A refused token yields a *RefusalError; a failing
// Revocations yields its error, wrapped.
//
// Verified tokens are cached by the SHA-256 of the raw token, up to
// auth.cacheSize entries (least recently used evicted). A cached token is
// served only before its exp (a token inside the leeway is verified afresh)
// and while the key that verified it is still in its issuer's key set; its
// revocation is checked on every call.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Principal, error) {
	p, err := v.verify(ctx, raw)
	if err != nil {
		v.refused(err)
		return nil, err
	}
	return p, nil
}

// refused reports a refusal to the metrics hook.
func (v *Verifier) refused(err error) {
	if v.onRefusal != nil {
		if r := Reason(err); r != "" {
			v.onRefusal(r)
		}
	}
}

func (v *Verifier) verify(ctx context.Context, raw string) (*Principal, error) {
	if len(raw) > MaxTokenBytes {
		return nil, invalidToken(ReasonTooLarge, "", nil)
	}
	now := v.now()
	var hash [32]byte
	if v.cache != nil {
		hash = tokenHash(raw)
		if e := v.cache.peekKeys(hash); e != nil {
			e.refreshIfStale(ctx) // so a cached token cannot outlive its key's removal
		}
		if e := v.cache.get(hash, now); e != nil {
			p := e.principal.Clone()
			if err := v.checkRevoked(ctx, p.TokenID); err != nil {
				return nil, err
			}
			return p, nil
		}
	}

	hdr, iss, refusal := peek(raw)
	if refusal != nil {
		return nil, refusal
	}
	ti := v.issuers[iss]
	if ti == nil {
		if iss == "" {
			return nil, invalidToken(ReasonMissingClaim, "iss", nil)
		}
		return nil, invalidToken(ReasonUntrustedIssuer, "", untrustedIssuer(iss))
	}
	if !slices.Contains(ti.algs, hdr.alg) {
		return nil, invalidToken(ReasonUnsupportedAlg, "", nil)
	}

	call := &callKeySet{keys: ti.keys}
	cfg := &oidc.Config{
		ClientID:             v.resource,
		SupportedSigningAlgs: ti.algs,
		// Time is checked by principal, with one leeway for exp, nbf and
		// iat: go-oidc has none for exp and a fixed 5 minutes for nbf, and
		// no single shifted clock makes both match a configured leeway.
		SkipExpiryCheck: true,
	}
	if _, err := oidc.NewVerifier(ti.issuer, call, cfg).Verify(ctx, raw); err != nil {
		return nil, v.classify(err, call, ti, hdr, now)
	}
	p, refusal := v.principal(ti, hdr, call.payload, now)
	if refusal != nil {
		return nil, refusal
	}
	if err := v.checkRevoked(ctx, p.TokenID); err != nil {
		return nil, err
	}
	if v.cache != nil && now.Before(p.Expiry) {
		v.cache.put(&cacheEntry{hash: hash, principal: p, expiry: p.Expiry, keys: ti.keys, key: call.key})
		return p.Clone(), nil
	}
	return p, nil
}

// tokenHash is the SHA-256 of raw, the token cache's key, hashed in place:
// sha256.Sum256([]byte(raw)) copied every request's token to the heap
// first, and a copy on the stack costs the clearing of its buffer. Sum256
// only reads its argument and keeps nothing of it, so the bytes of raw
// are never written through the slice.
func tokenHash(raw string) [32]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(raw), len(raw)))
}

// classify turns a go-oidc failure into a refusal. go-oidc flattens its
// errors into strings, so the reason comes from this package's key set when
// it refused, and otherwise from this package's own claim checks on the
// verified payload.
func (v *Verifier) classify(err error, call *callKeySet, ti *trustedIssuer, hdr tokenHeader, now time.Time) error {
	if call.refusal != nil {
		return call.refusal
	}
	if call.payload == nil {
		return invalidToken(ReasonMalformed, "", err)
	}
	if _, r := v.principal(ti, hdr, call.payload, now); r != nil {
		r.Cause = err
		return r
	}
	return invalidToken(ReasonMalformedClaim, "", err)
}

// checkRevoked refuses a revoked jti.
func (v *Verifier) checkRevoked(ctx context.Context, jti string) error {
	if v.revocations == nil || jti == "" {
		return nil
	}
	revoked, err := v.revocations.Revoked(ctx, jti)
	if err != nil {
		return fmt.Errorf("auth: revocation check: %w", err)
	}
	if revoked {
		return invalidToken(ReasonRevoked, "", nil)
	}
	return nil
}

// callKeySet is the oidc.KeySet of one Verify call: it delegates to the
// issuer's key set and keeps what happened, because go-oidc flattens the
// errors it returns.
type callKeySet struct {
	keys    *keySet
	payload []byte // the verified payload
	key     *verKey
	refusal *RefusalError
}

// VerifySignature implements oidc.KeySet.
func (c *callKeySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, key, refusal := c.keys.verify(ctx, jwt)
	if refusal != nil {
		c.refusal = refusal
		return nil, refusal
	}
	c.payload, c.key = payload, key
	return payload, nil
}

// tokenHeader is the part of a JOSE header the verifier reads. The header
// is decoded with exact member names; once the signature verifies, it is
// authentic (it is part of the signing input).
type tokenHeader struct {
	alg    string
	typ    string
	hasTyp bool
}

// peek decodes the header and the payload's iss without verifying anything:
// iss only chooses the issuer whose keys then verify the token.
func peek(raw string) (tokenHeader, string, *RefusalError) {
	var hdr tokenHeader
	h, rest, ok1 := strings.Cut(raw, ".")
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(sig, ".") || h == "" || payload == "" {
		return hdr, "", invalidToken(ReasonMalformed, "not a compact JWS", nil)
	}
	hb, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return hdr, "", invalidToken(ReasonMalformed, "header", err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(hb, &members); err != nil {
		return hdr, "", invalidToken(ReasonMalformed, "header", err)
	}
	if err := json.Unmarshal(members["alg"], &hdr.alg); err != nil || hdr.alg == "" {
		return hdr, "", invalidToken(ReasonMalformed, "alg", err)
	}
	if _, ok := members["crit"]; ok {
		return hdr, "", invalidToken(ReasonMalformed, "crit header", nil)
	}
	if _, ok := members["b64"]; ok {
		return hdr, "", invalidToken(ReasonMalformed, "b64 header", nil)
	}
	if t, ok := members["typ"]; ok {
		if err := json.Unmarshal(t, &hdr.typ); err != nil || string(t) == "null" {
			return hdr, "", invalidToken(ReasonMalformed, "typ", err)
		}
		hdr.hasTyp = true
	}
	pb, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return hdr, "", invalidToken(ReasonMalformed, "payload", err)
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
	}
	if err := json.Unmarshal(pb, &claims); err != nil {
		return hdr, "", invalidToken(ReasonMalformed, "payload", err)
	}
	var iss string
	if claims.Iss != nil && string(claims.Iss) != "null" {
		if err := json.Unmarshal(claims.Iss, &iss); err != nil {
			return hdr, "", invalidToken(ReasonMalformedClaim, "iss", nil)
		}
	}
	return hdr, iss, nil
}

// checkType applies the typ rule (see the package comment).
func (v *Verifier) checkType(hdr tokenHeader) *RefusalError {
	if !hdr.hasTyp {
		if v.requireAtJWT {
			return invalidToken(ReasonWrongType, "typ missing", nil)
		}
		return nil
	}
	t := strings.ToLower(hdr.typ)
	t = strings.TrimPrefix(t, "application/")
	switch {
	case t == "at+jwt":
		return nil
	case t == "jwt" && !v.requireAtJWT:
		return nil
	}
	return invalidToken(ReasonWrongType, "", nil)
}

// principal checks the header type and the verified claims and builds the
// principal.
func (v *Verifier) principal(ti *trustedIssuer, hdr tokenHeader, payload []byte, now time.Time) (*Principal, *RefusalError) {
	if r := v.checkType(hdr); r != nil {
		return nil, r
	}
	var c claimSet
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, invalidToken(ReasonMalformed, "payload", err)
	}

	iss, ok, r := c.str("iss")
	switch {
	case r != nil:
		return nil, r
	case !ok:
		return nil, invalidToken(ReasonMissingClaim, "iss", nil)
	case iss != ti.issuer:
		return nil, invalidToken(ReasonUntrustedIssuer, "", nil)
	}

	aud, ok, r := c.strOrStrings("aud", false)
	switch {
	case r != nil:
		return nil, r
	case !ok:
		return nil, invalidToken(ReasonWrongAudience, "aud missing", nil)
	case !slices.Contains(aud, v.resource):
		return nil, invalidToken(ReasonWrongAudience, "", nil)
	}

	exp, ok, r := c.numericDate("exp")
	switch {
	case r != nil:
		return nil, r
	case !ok:
		return nil, invalidToken(ReasonMissingClaim, "exp", nil)
	case !now.Before(exp.Add(v.leeway)):
		return nil, invalidToken(ReasonExpired, "", nil)
	}
	if nbf, ok, r := c.numericDate("nbf"); r != nil {
		return nil, r
	} else if ok && nbf.After(now.Add(v.leeway)) {
		return nil, invalidToken(ReasonNotYetValid, "", nil)
	}
	if iat, ok, r := c.numericDate("iat"); r != nil {
		return nil, r
	} else if ok && iat.After(now.Add(v.leeway)) {
		return nil, invalidToken(ReasonIssuedInFuture, "", nil)
	}

	p := &Principal{Issuer: iss, Expiry: exp}
	var present bool
	if p.Subject, _, r = c.str("sub"); r != nil {
		return nil, r
	}
	if p.TokenID, _, r = c.str("jti"); r != nil {
		return nil, r
	}
	if p.ClientID, present, r = c.str("client_id"); r != nil {
		return nil, r
	} else if !present {
		if p.ClientID, _, r = c.str("azp"); r != nil {
			return nil, r
		}
	}
	for _, name := range v.required {
		switch name {
		case "client_id":
			if p.ClientID == "" {
				return nil, invalidToken(ReasonMissingClaim, name, nil)
			}
		case "aud":
		case "exp", "nbf", "iat", "auth_time":
			if _, ok, r := c.numericDate(name); r != nil {
				return nil, r
			} else if !ok {
				return nil, invalidToken(ReasonMissingClaim, name, nil)
			}
		default:
			if s, _, r := c.str(name); r != nil {
				return nil, r
			} else if s == "" {
				return nil, invalidToken(ReasonMissingClaim, name, nil)
			}
		}
	}
	if p.Tenant, _, r = c.str(v.claims.Tenant); r != nil {
		return nil, r
	} else if p.Tenant == "" {
		return nil, invalidToken(ReasonMissingClaim, v.claims.Tenant, nil)
	}

	p.Scopes = make(ScopeSet)
	for _, name := range []string{"scope", "scp"} {
		scopes, _, r := c.strOrStrings(name, true)
		if r != nil {
			return nil, r
		}
		for _, s := range scopes {
			p.Scopes[contracts.Scope(s)] = struct{}{}
		}
	}
	for _, f := range []struct {
		name string
		dst  *[]string
	}{{v.claims.Compartments, &p.Compartments}, {v.claims.Purposes, &p.Purposes}, {v.claims.Tools, &p.Tools}} {
		if *f.dst, _, r = c.strings(f.name); r != nil {
			return nil, r
		}
	}
	return p, nil
}

// claimSet is a verified payload, member by member, with exact names.
type claimSet map[string]json.RawMessage

// get returns the raw member, treating null as absent.
func (c claimSet) get(name string) (json.RawMessage, bool) {
	raw, ok := c[name]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// str returns a string claim; any other JSON type is refused.
func (c claimSet) str(name string) (string, bool, *RefusalError) {
	raw, ok := c.get(name)
	if !ok {
		return "", false, nil
	}
	if raw[0] != '"' {
		return "", false, invalidToken(ReasonMalformedClaim, name, nil)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, invalidToken(ReasonMalformedClaim, name, err)
	}
	return s, true, nil
}

// strings returns an array-of-strings claim; nil when absent.
func (c claimSet) strings(name string) ([]string, bool, *RefusalError) {
	raw, ok := c.get(name)
	if !ok {
		return nil, false, nil
	}
	if raw[0] != '[' {
		return nil, false, invalidToken(ReasonMalformedClaim, name, nil)
	}
	out := []string{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, false, invalidToken(ReasonMalformedClaim, name, err)
	}
	return out, true, nil
}

// strOrStrings returns a claim that is a string or an array of strings; a
// string is split at spaces when split is set (scope syntax).
func (c claimSet) strOrStrings(name string, split bool) ([]string, bool, *RefusalError) {
	raw, ok := c.get(name)
	if !ok {
		return nil, false, nil
	}
	if raw[0] == '[' {
		return c.strings(name)
	}
	s, _, r := c.str(name)
	if r != nil {
		return nil, false, r
	}
	if !split {
		return []string{s}, true, nil
	}
	var out []string
	for f := range strings.SplitSeq(s, " ") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out, true, nil
}

// maxNumericDate bounds a NumericDate claim (about the year 33658), keeping
// time arithmetic far from overflow.
const maxNumericDate = 1e12

// numericDate returns a NumericDate claim (RFC 7519: a JSON number of
// seconds, possibly fractional). A string, even of digits, is refused.
func (c claimSet) numericDate(name string) (time.Time, bool, *RefusalError) {
	raw, ok := c.get(name)
	if !ok {
		return time.Time{}, false, nil
	}
	if ch := raw[0]; ch != '-' && (ch < '0' || ch > '9') {
		return time.Time{}, false, invalidToken(ReasonMalformedClaim, name, nil)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) > maxNumericDate {
		return time.Time{}, false, invalidToken(ReasonMalformedClaim, name, err)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}
