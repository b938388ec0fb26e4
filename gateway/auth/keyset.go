package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// Bounds on what an identity provider may send.
const (
	maxJWKSBytes = 1 << 20
	maxJWKSKeys  = 100
	minRSABits   = 2048
)

// asymmetricAlgs are the signature algorithms a verifier may allow; HS* and
// none are refused at configuration time.
var asymmetricAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// verKey is one verification key.
type verKey struct {
	kid string
	alg string // the JWK's alg, "" when it names none
	pub crypto.PublicKey
}

// keyMap is one immutable generation of a key set.
type keyMap struct {
	byKID   map[string][]*verKey
	fetched time.Time
}

// keySet holds an issuer's verification keys: fetched from a JWKS URL
// (found by OIDC discovery when not configured) or given statically. It
// implements oidc.KeySet.
//
// Keys are cached by kid. A token whose kid is unknown triggers a refetch,
// but at most one fetch (or discovery) attempt happens per interval, and
// concurrent callers share it (single-flight); otherwise the token is
// refused. A successful fetch replaces the whole set, so a key removed from
// the JWKS stops being trusted at the next fetch. Keys older than maxAge are
// refreshed by the first caller to notice (others keep using the cached keys
// meanwhile), so removal takes effect within maxAge even when no unknown kid
// arrives.
type keySet struct {
	issuer   string
	discover bool // find the JWKS URL by OIDC discovery
	static   bool
	client   *http.Client
	now      func() time.Time
	interval time.Duration
	maxAge   time.Duration // <= 0: never refresh on age
	timeout  time.Duration
	algs     []jose.SignatureAlgorithm

	keys        atomic.Pointer[keyMap] // nil until the first successful fetch
	fetchMu     sync.Mutex             // held for the duration of a fetch
	jwksURL     string                 // guarded by fetchMu
	lastAttempt atomic.Int64           // UnixNano of the last fetch attempt; 0: never
	lastErr     atomic.Pointer[error]  // the last fetch failure, for logs
}

// allowed reports whether a fetch may be attempted at now.
func (ks *keySet) allowed(now time.Time) bool {
	last := ks.lastAttempt.Load()
	return !ks.static && (last == 0 || now.Sub(time.Unix(0, last)) >= ks.interval)
}

// refresh fetches the key set if the rate limit allows, waiting for a fetch
// already in flight instead of starting another. seen is the generation the
// caller looked at (nil if none); refresh reports whether the current
// generation differs from it, i.e. whether looking again can help.
func (ks *keySet) refresh(ctx context.Context, seen *keyMap) bool {
	if ks.static {
		return false
	}
	if ks.keys.Load() != seen {
		return true
	}
	if !ks.allowed(ks.now()) && !ks.fetchInFlight() {
		return false
	}
	ks.fetchMu.Lock()
	defer ks.fetchMu.Unlock()
	if ks.keys.Load() != seen {
		return true // another caller fetched while we waited
	}
	if !ks.allowed(ks.now()) {
		return false
	}
	return ks.fetchLocked(ctx) == nil
}

// refreshIfStale refreshes keys older than maxAge, unless another caller is
// already fetching.
func (ks *keySet) refreshIfStale(ctx context.Context) {
	m := ks.keys.Load()
	if m == nil || ks.static || ks.maxAge <= 0 || ks.now().Sub(m.fetched) < ks.maxAge {
		return
	}
	if !ks.fetchMu.TryLock() {
		return
	}
	defer ks.fetchMu.Unlock()
	if cur := ks.keys.Load(); cur == m && ks.allowed(ks.now()) {
		_ = ks.fetchLocked(ctx)
	}
}

// fetchInFlight reports whether a fetch holds fetchMu right now.
func (ks *keySet) fetchInFlight() bool {
	if ks.fetchMu.TryLock() {
		ks.fetchMu.Unlock()
		return false
	}
	return true
}

// fetchLocked discovers the JWKS URL if needed and fetches the keys. The
// caller holds fetchMu. A fetch serves every waiting caller, so it runs on a
// context detached from the caller's cancellation and bounded by timeout.
func (ks *keySet) fetchLocked(ctx context.Context) error {
	ks.lastAttempt.Store(ks.now().UnixNano())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ks.timeout)
	defer cancel()
	err := ks.fetch(ctx)
	if err != nil {
		ks.lastErr.Store(&err)
		return err
	}
	ks.lastErr.Store(nil)
	return nil
}

func (ks *keySet) fetch(ctx context.Context) error {
	if ks.jwksURL == "" {
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, ks.client), ks.issuer)
		if err != nil {
			return fmt.Errorf("auth: discovery for %s: %w", ks.issuer, err)
		}
		var meta struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := p.Claims(&meta); err != nil {
			return fmt.Errorf("auth: discovery for %s: %w", ks.issuer, err)
		}
		if u, err := url.Parse(meta.JWKSURI); err != nil || !u.IsAbs() || (u.Scheme != "https" && u.Scheme != "http") {
			return fmt.Errorf("auth: discovery for %s: bad jwks_uri %q", ks.issuer, meta.JWKSURI)
		}
		ks.jwksURL = meta.JWKSURI
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.jwksURL, nil)
	if err != nil {
		return fmt.Errorf("auth: JWKS request: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return fmt.Errorf("auth: fetch JWKS %s: %w", ks.jwksURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("auth: fetch JWKS %s: %s", ks.jwksURL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("auth: read JWKS %s: %w", ks.jwksURL, err)
	}
	if len(body) > maxJWKSBytes {
		return fmt.Errorf("auth: JWKS %s exceeds %d bytes", ks.jwksURL, maxJWKSBytes)
	}
	keys, err := parseJWKS(body)
	if err != nil {
		return fmt.Errorf("auth: JWKS %s: %w", ks.jwksURL, err)
	}
	ks.install(keys)
	return nil
}

// install makes keys the current generation. A key unchanged since the
// previous generation keeps its identity, so cached tokens it verified stay
// valid.
func (ks *keySet) install(keys []*verKey) {
	old := ks.keys.Load()
	m := &keyMap{byKID: make(map[string][]*verKey, len(keys)), fetched: ks.now()}
	for _, k := range keys {
		if old != nil {
			for _, o := range old.byKID[k.kid] {
				if o.alg == k.alg && publicKeysEqual(o.pub, k.pub) {
					k = o
					break
				}
			}
		}
		m.byKID[k.kid] = append(m.byKID[k.kid], k)
	}
	ks.keys.Store(m)
}

// trusts reports whether k is still in the current key set.
func (ks *keySet) trusts(k *verKey) bool {
	m := ks.keys.Load()
	return m != nil && slices.Contains(m.byKID[k.kid], k)
}

// candidates returns the keys that may have signed a token with kid and
// alg: those under kid, or every key when kid is empty, whose type fits alg.
// known reports whether kid names any key at all.
func (m *keyMap) candidates(kid, alg string) (out []*verKey, known bool) {
	if kid != "" {
		ks := m.byKID[kid]
		for _, k := range ks {
			if keyFits(k, alg) {
				out = append(out, k)
			}
		}
		return out, len(ks) > 0
	}
	for _, ks := range m.byKID {
		for _, k := range ks {
			if keyFits(k, alg) {
				out = append(out, k)
			}
		}
	}
	return out, len(out) > 0
}

// VerifySignature implements oidc.KeySet.
func (ks *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, _, refusal := ks.verify(ctx, jwt)
	if refusal != nil {
		return nil, refusal
	}
	return payload, nil
}

// verify parses jwt, finds its key (refetching on an unknown kid within the
// rate limit) and checks the signature. It returns the verified payload and
// the key that verified it.
func (ks *keySet) verify(ctx context.Context, jwt string) ([]byte, *verKey, *RefusalError) {
	jws, err := jose.ParseSignedCompact(jwt, ks.algs)
	if err != nil {
		var algErr *jose.ErrUnexpectedSignatureAlgorithm
		if errors.As(err, &algErr) {
			return nil, nil, invalidToken(ReasonUnsupportedAlg, "", err)
		}
		return nil, nil, invalidToken(ReasonMalformed, "", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, nil, invalidToken(ReasonMalformed, "not exactly one signature", nil)
	}
	h := jws.Signatures[0].Header
	m := ks.keys.Load()
	if m == nil {
		ks.refresh(ctx, nil)
		if m = ks.keys.Load(); m == nil {
			var cause error
			if p := ks.lastErr.Load(); p != nil {
				cause = *p
			}
			return nil, nil, invalidToken(ReasonIssuerUnavailable, "", cause)
		}
	} else {
		ks.refreshIfStale(ctx)
		m = ks.keys.Load()
	}
	cands, known := m.candidates(h.KeyID, h.Algorithm)
	if !known && ks.refresh(ctx, m) {
		m = ks.keys.Load()
		cands, known = m.candidates(h.KeyID, h.Algorithm)
	}
	if len(cands) == 0 {
		if known {
			return nil, nil, invalidToken(ReasonUnknownKey, "no key of this id fits the algorithm", nil)
		}
		return nil, nil, invalidToken(ReasonUnknownKey, "", nil)
	}
	for _, k := range cands {
		if payload, err := jws.Verify(k.pub); err == nil {
			return payload, k, nil
		}
	}
	return nil, nil, invalidToken(ReasonBadSignature, "", nil)
}

// parseJWKS decodes a JWK Set, keeping the usable public signature keys and
// skipping the rest (other uses, symmetric keys, weak RSA keys, unsupported
// curves, unparsable entries), as one bad entry must not disable the others.
func parseJWKS(body []byte) ([]*verKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(set.Keys) > maxJWKSKeys {
		return nil, fmt.Errorf("%d keys, more than %d", len(set.Keys), maxJWKSKeys)
	}
	var out []*verKey
	for _, raw := range set.Keys {
		var jwk jose.JSONWebKey
		if json.Unmarshal(raw, &jwk) != nil {
			continue
		}
		if k := usableKey(jwk); k != nil {
			out = append(out, k)
		}
	}
	return out, nil
}

// usableKey returns jwk as a verification key, or nil when it cannot serve
// for signatures.
func usableKey(jwk jose.JSONWebKey) *verKey {
	if jwk.Use != "" && jwk.Use != "sig" {
		return nil
	}
	if jwk.Algorithm != "" && !slices.Contains(asymmetricAlgs, jwk.Algorithm) {
		return nil
	}
	pub := jwk.Key
	if !jwk.IsPublic() {
		p := jwk.Public()
		if !p.Valid() {
			return nil
		}
		pub = p.Key
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return nil
		}
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() && k.Curve != elliptic.P521() {
			return nil
		}
	case ed25519.PublicKey:
	default:
		return nil
	}
	k := &verKey{kid: jwk.KeyID, alg: jwk.Algorithm, pub: pub}
	if k.alg != "" && !keyFits(k, k.alg) {
		return nil
	}
	return k
}

// keyFits reports whether k may verify a signature made with alg.
func keyFits(k *verKey, alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		_, ok := k.pub.(*rsa.PublicKey)
		return ok
	case "ES256", "ES384", "ES512":
		ec, ok := k.pub.(*ecdsa.PublicKey)
		if !ok {
			return false
		}
		switch alg {
		case "ES256":
			return ec.Curve == elliptic.P256()
		case "ES384":
			return ec.Curve == elliptic.P384()
		}
		return ec.Curve == elliptic.P521()
	case "EdDSA":
		_, ok := k.pub.(ed25519.PublicKey)
		return ok
	}
	return false
}

// publicKeysEqual compares two public keys of the supported types.
func publicKeysEqual(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}
