package issuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// DefaultType is the typ header Sign writes unless WithType says otherwise
// (RFC 9068 access tokens).
const DefaultType = "at+jwt"

// forgery names a deliberately invalid token Sign can produce.
type forgery int

const (
	genuine forgery = iota
	algNone
	hmacPublicKey
	tamperedSignature
	foreignKey
)

// signConfig collects the SignOptions of one Sign call.
type signConfig struct {
	typ     string
	kid     string // header kid override
	omitKID bool
	keyID   string // signing key
	alg     string // signing algorithm
	headers map[string]any
	forgery forgery
	overKID bool
}

// SignOption changes how Sign builds one token.
type SignOption func(*signConfig)

// WithType sets the typ header; "" omits it.
func WithType(typ string) SignOption { return func(c *signConfig) { c.typ = typ } }

// WithKey signs with the key kid (published or not) instead of the default
// key.
func WithKey(kid string) SignOption { return func(c *signConfig) { c.keyID = kid } }

// WithAlgorithm signs with alg. Without WithKey, the default key is used if
// its type fits alg, else the first key that fits. An RSA key can sign RS256,
// RS384, RS512 and PS256, PS384, PS512, so WithAlgorithm("RS384") makes a
// validly signed token with an algorithm a verifier may not allow.
func WithAlgorithm(alg string) SignOption { return func(c *signConfig) { c.alg = alg } }

// WithKeyID writes kid in the header instead of the signing key's id, for
// example an id the JWKS does not hold.
func WithKeyID(kid string) SignOption {
	return func(c *signConfig) { c.kid, c.overKID, c.omitKID = kid, true, false }
}

// WithoutKeyID omits the kid header.
func WithoutKeyID() SignOption { return func(c *signConfig) { c.omitKID, c.overKID = true, false } }

// WithHeader adds a protected header parameter. It cannot replace alg, kid
// or typ; use the other options for those.
func WithHeader(name string, value any) SignOption {
	return func(c *signConfig) {
		if c.headers == nil {
			c.headers = make(map[string]any)
		}
		c.headers[name] = value
	}
}

// WithAlgNone produces an unsigned token: alg "none" and an empty signature.
func WithAlgNone() SignOption { return func(c *signConfig) { c.forgery = algNone } }

// WithHMACPublicKey produces the algorithm-confusion token: alg HS256, MAC
// keyed with the PEM encoding of the signing key's public key, which anyone
// can fetch from the JWKS.
func WithHMACPublicKey() SignOption { return func(c *signConfig) { c.forgery = hmacPublicKey } }

// WithTamperedSignature signs genuinely and then flips a bit of the
// signature.
func WithTamperedSignature() SignOption { return func(c *signConfig) { c.forgery = tamperedSignature } }

// WithForeignKey signs with a key of the same algorithm that the JWKS does
// not hold, while the header names the chosen published key's kid.
func WithForeignKey() SignOption { return func(c *signConfig) { c.forgery = foreignKey } }

// Sign serialises claims as the payload of a compact JWS. By default it
// signs with the default key and its algorithm, with typ at+jwt and the
// key's kid in the header. The claims are written as given: use Claims or
// Mint for a standard access token.
func (i *Issuer) Sign(claims map[string]any, opts ...SignOption) (string, error) {
	c := signConfig{typ: DefaultType}
	for _, o := range opts {
		o(&c)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("issuer: encode claims: %w", err)
	}
	k, err := i.pick(c.keyID, c.alg)
	if err != nil {
		return "", err
	}
	alg := c.alg
	if alg == "" {
		alg = k.alg
	}
	kid := k.kid
	switch {
	case c.omitKID:
		kid = ""
	case c.overKID:
		kid = c.kid
	}
	header := func(alg string) map[string]any {
		h := make(map[string]any, len(c.headers)+3)
		for name, v := range c.headers {
			h[name] = v
		}
		h["alg"] = alg
		if kid != "" {
			h["kid"] = kid
		}
		if c.typ != "" {
			h["typ"] = c.typ
		}
		return h
	}

	switch c.forgery {
	case algNone:
		return compact(header("none"), payload, nil)
	case hmacPublicKey:
		der, err := x509.MarshalPKIXPublicKey(k.signer.Public())
		if err != nil {
			return "", fmt.Errorf("issuer: encode public key: %w", err)
		}
		secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		return compactMAC(header("HS256"), payload, secret)
	case foreignKey:
		rogue, err := i.rogueKey(k.alg)
		if err != nil {
			return "", err
		}
		return joseSign(rogue, alg, header(alg), payload)
	}
	tok, err := joseSign(k.signer, alg, header(alg), payload)
	if err != nil || c.forgery != tamperedSignature {
		return tok, err
	}
	return tamper(tok)
}

// pick chooses the signing key for kid and alg.
func (i *Issuer) pick(kid, alg string) (*key, error) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	if kid != "" {
		k := i.find(kid)
		if k == nil {
			return nil, fmt.Errorf("%w: %q", ErrUnknownKey, kid)
		}
		return k, nil
	}
	if d := i.find(i.defaultKID); d != nil && (alg == "" || checkKeyAlgLoose(alg, d.signer.Public()) == nil) {
		return d, nil
	}
	for _, k := range i.keys {
		if alg != "" && checkKeyAlgLoose(alg, k.signer.Public()) == nil {
			return k, nil
		}
	}
	if alg == "" {
		return nil, errors.New("issuer: no signing key")
	}
	return nil, fmt.Errorf("issuer: no key can sign %s", alg)
}

// checkKeyAlgLoose is checkKeyAlg widened to every algorithm go-jose can
// sign with the key, so tests can produce validly signed tokens in
// algorithms a verifier does not allow.
func checkKeyAlgLoose(alg string, pub crypto.PublicKey) error {
	switch alg {
	case "ES384", "ES512":
		if _, ok := pub.(*ecdsa.PublicKey); ok {
			return nil
		}
		return fmt.Errorf("issuer: a %T key cannot sign %s", pub, alg)
	}
	return checkKeyAlg(alg, pub)
}

// rogueKey returns the unpublished key of alg's type that WithForeignKey
// signs with, generating it on first use.
func (i *Issuer) rogueKey(alg string) (crypto.Signer, error) {
	i.mu.RLock()
	k := i.rogue[alg]
	i.mu.RUnlock()
	if k != nil {
		return k, nil
	}
	k, err := GenerateKey(alg)
	if err != nil {
		return nil, err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if prev := i.rogue[alg]; prev != nil {
		return prev, nil
	}
	i.rogue[alg] = k
	return k, nil
}

// joseSign signs payload with go-jose, writing header's parameters (alg
// aside, which go-jose sets) into the protected header.
func joseSign(priv crypto.Signer, alg string, header map[string]any, payload []byte) (string, error) {
	so := &jose.SignerOptions{}
	for name, v := range header {
		if name != "alg" {
			so.WithHeader(jose.HeaderKey(name), v)
		}
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: priv}, so)
	if err != nil {
		return "", fmt.Errorf("issuer: signer for %s: %w", alg, err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("issuer: sign: %w", err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("issuer: serialise: %w", err)
	}
	return tok, nil
}

// compact builds a compact JWS by hand from a header, a payload and a
// signature; go-jose refuses to produce the forgeries this is for.
func compact(header map[string]any, payload, sig []byte) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", fmt.Errorf("issuer: encode header: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(payload) + "." + enc.EncodeToString(sig), nil
}

// compactMAC builds an HS256 token keyed with secret.
func compactMAC(header map[string]any, payload, secret []byte) (string, error) {
	unsigned, err := compact(header, payload, nil)
	if err != nil {
		return "", err
	}
	signingInput := strings.TrimSuffix(unsigned, ".")
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signingInput))
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// tamper flips one bit of tok's signature.
func tamper(tok string) (string, error) {
	dot := strings.LastIndexByte(tok, '.')
	sig, err := base64.RawURLEncoding.DecodeString(tok[dot+1:])
	if err != nil || len(sig) == 0 {
		return "", errors.New("issuer: cannot tamper with an empty signature")
	}
	sig[len(sig)/2] ^= 0x01
	return tok[:dot+1] + base64.RawURLEncoding.EncodeToString(sig), nil
}
