// Package issuer is a small, real OpenID Connect token issuer for tests, for
// the conformance suite and for the gateway's --dev mode.
//
// An Issuer holds one or more signing keys (RS256 over RSA-2048, ES256 over
// P-256, EdDSA over Ed25519), each with a key id, and serves as an
// http.Handler the two documents a resource server needs: the discovery
// document at /.well-known/openid-configuration and the JWKS at /jwks, both
// relative to the issuer URL. It signs access tokens with go-jose and, on
// request, deliberately broken ones (alg none, HS256 keyed with the public
// key, a tampered signature, a key that is not published), so that tests can
// prove a verifier refuses them.
//
// Keys can be added, rotated and removed while the issuer serves, and the
// issuer counts the JWKS and discovery requests it answers, so tests can prove
// key rotation and rate-limited refetching.
//
// The package depends on nothing of the gateway: the conformance suite, a
// black-box tool, uses it too.
package issuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// The signing algorithms an Issuer can hold keys for. Each algorithm names a
// key type: RS256 an RSA-2048 key, ES256 a P-256 key, EdDSA an Ed25519 key.
const (
	RS256 = "RS256"
	ES256 = "ES256"
	EdDSA = "EdDSA"
)

// Paths of the documents an Issuer serves, relative to its issuer URL.
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/jwks"
	// TokenPath is the token endpoint: the authorization_code grant once
	// EnableAuthorization was called, client_credentials and
	// refresh_token once EnableTokenGrants was; any other request is
	// answered 400 unsupported_grant_type. Tokens also come out of band,
	// from Sign and Mint.
	TokenPath = "/token"
)

// ErrUnknownKey is returned when a key id names no key of the issuer.
var ErrUnknownKey = errors.New("issuer: unknown key id")

// Options configure New.
type Options struct {
	// Issuer is the issuer URL (the iss claim and the discovery base). It can
	// be set later with SetIssuer, typically once an httptest server has
	// started and its URL is known.
	Issuer string
	// PathPrefix is the path under which the issuer is mounted on a shared
	// listener, e.g. "/dev/issuer". Requests whose path starts with it are
	// routed on the remainder; requests without it are routed as they are,
	// so the handler also works behind http.StripPrefix.
	PathPrefix string
	// Algorithms lists the keys New generates, one per entry, in order; the
	// first becomes the default signing key. Nil means one RS256 key; an
	// empty, non-nil slice means no key (add keys with AddKey).
	Algorithms []string
	// Now is the clock Claims and Mint use for iat, nbf and exp (default
	// time.Now).
	Now func() time.Time
}

// key is one signing key.
type key struct {
	kid       string
	alg       string
	signer    crypto.Signer
	published bool
}

// Issuer is an OpenID Connect issuer that signs tokens and serves its
// discovery document and JWKS. It is safe for concurrent use.
type Issuer struct {
	mu         sync.RWMutex
	prefix     string
	issuer     string
	keys       []*key // in insertion order
	defaultKID string
	now        func() time.Time
	down       bool
	rogue      map[string]crypto.Signer // per algorithm, never published

	// authz, once EnableAuthorization set it, serves the authorization
	// code flow; codes are the codes issued and not yet redeemed.
	authz *AuthorizationOptions
	codes map[string]authCode

	// grants, once EnableTokenGrants set it, serves the
	// client_credentials and refresh_token grants; refresh holds the
	// refresh tokens issued and not yet redeemed.
	grants  *TokenOptions
	refresh map[string]refreshGrant
	// issued are the jti of the access tokens the token endpoint issued.
	issued []string

	jwksFetches      atomic.Int64
	discoveryFetches atomic.Int64
}

// New returns an Issuer holding freshly generated keys, one per entry of
// opts.Algorithms.
func New(opts Options) (*Issuer, error) {
	iss := &Issuer{
		prefix: strings.TrimSuffix(opts.PathPrefix, "/"),
		issuer: strings.TrimSuffix(opts.Issuer, "/"),
		now:    opts.Now,
		rogue:  make(map[string]crypto.Signer),
	}
	if iss.now == nil {
		iss.now = time.Now
	}
	algs := opts.Algorithms
	if algs == nil {
		algs = []string{RS256}
	}
	for _, alg := range algs {
		if _, err := iss.AddKey(alg, ""); err != nil {
			return nil, err
		}
	}
	return iss, nil
}

// SetIssuer sets the issuer URL. A trailing slash is removed, because a
// discovery base and an iss value must match exactly.
func (i *Issuer) SetIssuer(url string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.issuer = strings.TrimSuffix(url, "/")
}

// SetPathPrefix sets the path under which the issuer is mounted (see
// Options.PathPrefix).
func (i *Issuer) SetPathPrefix(prefix string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.prefix = strings.TrimSuffix(prefix, "/")
}

// Issuer returns the issuer URL.
func (i *Issuer) Issuer() string {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return i.issuer
}

// SetClock replaces the clock Claims and Mint use; nil restores time.Now.
func (i *Issuer) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.now = now
}

// SetAvailable makes the issuer answer every request with 503 (false) or
// serve normally again (true), to simulate an identity provider that is
// down.
func (i *Issuer) SetAvailable(up bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.down = !up
}

// JWKSFetches returns how many JWKS requests the issuer has answered
// successfully.
func (i *Issuer) JWKSFetches() int64 { return i.jwksFetches.Load() }

// DiscoveryFetches returns how many discovery requests the issuer has
// answered successfully.
func (i *Issuer) DiscoveryFetches() int64 { return i.discoveryFetches.Load() }

// ResetCounters sets the JWKS and discovery counters to zero.
func (i *Issuer) ResetCounters() {
	i.jwksFetches.Store(0)
	i.discoveryFetches.Store(0)
}

// GenerateKey returns a new private key for alg: RSA-2048 for RS256 (and
// the other RS and PS algorithms), P-256 for ES256, Ed25519 for EdDSA.
func GenerateKey(alg string) (crypto.Signer, error) {
	switch alg {
	case RS256, "RS384", "RS512", "PS256", "PS384", "PS512":
		return rsa.GenerateKey(rand.Reader, 2048)
	case ES256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case EdDSA:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	}
	return nil, fmt.Errorf("issuer: unsupported algorithm %q", alg)
}

// KeyID returns the RFC 7638 thumbprint (SHA-256, base64url) of pub, the key
// id the issuer gives keys added without one.
func KeyID(pub crypto.PublicKey) (string, error) {
	tp, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("issuer: thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}

// AddKey generates a key for alg, publishes it in the JWKS and returns its
// key id. An empty kid means the key's thumbprint. The first key added
// becomes the default signing key.
func (i *Issuer) AddKey(alg, kid string) (string, error) {
	priv, err := GenerateKey(alg)
	if err != nil {
		return "", err
	}
	return i.AddPrivateKey(alg, kid, priv)
}

// AddPrivateKey publishes priv's public key under kid (its thumbprint when
// empty) for alg and returns the key id. It refuses a key id already in use
// and a key whose type does not fit alg.
func (i *Issuer) AddPrivateKey(alg, kid string, priv crypto.Signer) (string, error) {
	if err := checkKeyAlg(alg, priv.Public()); err != nil {
		return "", err
	}
	if kid == "" {
		var err error
		if kid, err = KeyID(priv.Public()); err != nil {
			return "", err
		}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.find(kid) != nil {
		return "", fmt.Errorf("issuer: key id %q already in use", kid)
	}
	i.keys = append(i.keys, &key{kid: kid, alg: alg, signer: priv, published: true})
	if i.defaultKID == "" {
		i.defaultKID = kid
	}
	return kid, nil
}

// Rotate adds a new key for alg, makes it the default signing key and
// returns its key id. The previous keys stay published until RemoveKey.
func (i *Issuer) Rotate(alg string) (string, error) {
	kid, err := i.AddKey(alg, "")
	if err != nil {
		return "", err
	}
	return kid, i.SetDefaultKey(kid)
}

// SetDefaultKey makes kid the key Sign uses when no option picks another.
func (i *Issuer) SetDefaultKey(kid string) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.find(kid) == nil {
		return fmt.Errorf("%w: %q", ErrUnknownKey, kid)
	}
	i.defaultKID = kid
	return nil
}

// RemoveKey deletes kid: it leaves the JWKS and can no longer sign. It
// reports whether the key existed. When the default key is removed, the
// oldest remaining key becomes the default.
func (i *Issuer) RemoveKey(kid string) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	n := len(i.keys)
	i.keys = slices.DeleteFunc(i.keys, func(k *key) bool { return k.kid == kid })
	if len(i.keys) == n {
		return false
	}
	if i.defaultKID == kid {
		i.defaultKID = ""
		if len(i.keys) > 0 {
			i.defaultKID = i.keys[0].kid
		}
	}
	return true
}

// SetPublished keeps kid as a signing key but adds it to (true) or drops it
// from (false) the JWKS, so tests can sign with a key a verifier cannot know.
func (i *Issuer) SetPublished(kid string, published bool) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	k := i.find(kid)
	if k == nil {
		return fmt.Errorf("%w: %q", ErrUnknownKey, kid)
	}
	k.published = published
	return nil
}

// DefaultKeyID returns the key id Sign uses by default, empty when the
// issuer holds no key.
func (i *Issuer) DefaultKeyID() string {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return i.defaultKID
}

// KeyIDs returns the key ids currently published in the JWKS, in the order
// the keys were added.
func (i *Issuer) KeyIDs() []string {
	return publishedKeys(i, func(k *key) string { return k.kid })
}

// publishedKeys returns f of each key published in the JWKS, in the order
// the keys were added.
func publishedKeys[T any](i *Issuer, f func(*key) T) []T {
	i.mu.RLock()
	defer i.mu.RUnlock()
	var out []T
	for _, k := range i.keys {
		if k.published {
			out = append(out, f(k))
		}
	}
	return out
}

// PublicKey is one published verification key.
type PublicKey struct {
	// KeyID is the key's kid.
	KeyID string
	// Algorithm is the signing algorithm the key is for.
	Algorithm string
	// Key is an *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey.
	Key crypto.PublicKey
}

// PublicKeys returns the published verification keys, for a verifier that
// trusts this issuer statically (no HTTP).
func (i *Issuer) PublicKeys() []PublicKey {
	return publishedKeys(i, func(k *key) PublicKey {
		return PublicKey{KeyID: k.kid, Algorithm: k.alg, Key: k.signer.Public()}
	})
}

// JWKS returns the published keys as an RFC 7517 JWK Set document.
func (i *Issuer) JWKS() ([]byte, error) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, pk := range i.PublicKeys() {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: pk.Key, KeyID: pk.KeyID, Algorithm: pk.Algorithm, Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("issuer: encode JWKS: %w", err)
	}
	return b, nil
}

// Discovery returns the OpenID Connect discovery document.
func (i *Issuer) Discovery() ([]byte, error) {
	i.mu.RLock()
	base := i.issuer
	algs := []string{}
	for _, k := range i.keys {
		if k.published && !slices.Contains(algs, k.alg) {
			algs = append(algs, k.alg)
		}
	}
	i.mu.RUnlock()
	slices.Sort(algs)
	doc := map[string]any{
		"issuer":                                base,
		"jwks_uri":                              base + JWKSPath,
		"token_endpoint":                        base + TokenPath,
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": algs,
	}
	// The grants and client authentications listed are those the token
	// endpoint answers.
	grants, methods := []string{}, []string{}
	i.mu.RLock()
	if i.authz != nil {
		doc["authorization_endpoint"] = base + AuthorizePath
		grants, methods = append(grants, "authorization_code"), append(methods, "none")
		doc["code_challenge_methods_supported"] = []string{"S256"}
		doc["scopes_supported"] = []string{"openid"}
	}
	if i.grants != nil {
		grants = append(grants, "client_credentials", "refresh_token")
		methods = append(methods, "client_secret_basic", "client_secret_post")
		if !slices.Contains(methods, "none") {
			methods = append(methods, "none")
		}
	}
	i.mu.RUnlock()
	doc["grant_types_supported"] = grants
	if len(methods) > 0 {
		doc["token_endpoint_auth_methods_supported"] = methods
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("issuer: encode discovery: %w", err)
	}
	return b, nil
}

// ServeHTTP serves the discovery document, the JWKS and the token
// endpoint (answering unsupported_grant_type, but for the
// authorization_code grant once EnableAuthorization was called and the
// client_credentials and refresh_token grants once EnableTokenGrants
// was), and then the authorization endpoint, relative to the path prefix;
// anything else is 404. The authorization endpoint and the code grant answer only a
// request that came in on a loopback listener from a loopback peer.
func (i *Issuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i.mu.RLock()
	prefix, down, authz, grants := i.prefix, i.down, i.authz, i.grants
	i.mu.RUnlock()
	path := r.URL.Path
	if prefix != "" {
		if rest, ok := strings.CutPrefix(path, prefix); ok && (rest == "" || rest[0] == '/') {
			path = rest
		}
	}
	if down {
		http.Error(w, "issuer unavailable", http.StatusServiceUnavailable)
		return
	}
	var (
		render  func() ([]byte, error)
		counter *atomic.Int64
	)
	switch path {
	case DiscoveryPath:
		render, counter = i.Discovery, &i.discoveryFetches
	case JWKSPath:
		render, counter = i.JWKS, &i.jwksFetches
	case AuthorizePath:
		if authz == nil || !loopbackRequest(r) {
			http.NotFound(w, r)
			return
		}
		i.serveAuthorize(w, r, authz)
		return
	case TokenPath:
		if authz != nil && r.Method == http.MethodPost && loopbackRequest(r) && r.FormValue("grant_type") == "authorization_code" {
			i.serveCodeGrant(w, r, authz)
			return
		}
		if grants != nil && r.Method == http.MethodPost {
			if gt := r.FormValue("grant_type"); gt == "client_credentials" || gt == "refresh_token" {
				i.serveTokenGrant(w, r, grants)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"unsupported_grant_type","error_description":"this issuer mints tokens out of band"}`))
		return
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := render()
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	// Count before writing, so a client that has read the answer always
	// sees it counted.
	counter.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(body)
}

// find returns the key with kid, or nil. The caller holds i.mu.
func (i *Issuer) find(kid string) *key {
	for _, k := range i.keys {
		if k.kid == kid {
			return k
		}
	}
	return nil
}

// checkKeyAlg reports whether pub is the key type alg needs.
func checkKeyAlg(alg string, pub crypto.PublicKey) error {
	ok := false
	switch alg {
	case RS256, "RS384", "RS512", "PS256", "PS384", "PS512":
		_, ok = pub.(*rsa.PublicKey)
	case ES256:
		k, isEC := pub.(*ecdsa.PublicKey)
		ok = isEC && k.Curve == elliptic.P256()
	case EdDSA:
		_, ok = pub.(ed25519.PublicKey)
	default:
		return fmt.Errorf("issuer: unsupported algorithm %q", alg)
	}
	if !ok {
		return fmt.Errorf("issuer: a %T key cannot sign %s", pub, alg)
	}
	return nil
}
