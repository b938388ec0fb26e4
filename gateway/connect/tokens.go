package connect

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/internal/lru"
	"github.com/praxa/praxa/gateway/workflow"
)

// The wire names of RFC 8693, RFC 7523 and RFC 6749 the token endpoint is
// spoken to with.
const (
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantClientCredentials = "client_credentials"
	tokenTypeAccess        = "urn:ietf:params:oauth:token-type:access_token"
	assertionJWTBearer     = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// Token cache bounds: an upstream token is served until refreshMargin
// before its expiry (a fifth of its lifetime when that is shorter), and
// at most DefaultTokenCacheSize tokens are kept (least recently used
// evicted).
const (
	refreshMargin         = 30 * time.Second
	DefaultTokenCacheSize = 10000
	// maxTokenAnswer bounds a token endpoint's answer.
	maxTokenAnswer = 64 << 10
	// tokenTimeout bounds one request to a token endpoint.
	tokenTimeout = 10 * time.Second
)

// Tokens obtains the upstream tokens of the connections whose auth is
// token-exchange or client-credentials, and caches them per token
// endpoint, client, issuer, tenant, subject, audience and scope until
// shortly before they expire. One Tokens serves every Manager of a
// process (a configuration reload keeps the tokens obtained), so that
// revocations reach it: Forget drops what a revoked inbound token
// obtained. Tokens never appear in its errors or logs.
type Tokens struct {
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	revs    auth.Revocations
	entries *lru.Cache[tokenKey, *tokenEntry]
	flights map[tokenKey]*tokenFlight
	// fetches counts the requests sent to token endpoints (tests).
	fetches int
}

// TokensOptions configure NewTokens; the zero value is usable.
type TokensOptions struct {
	// Size bounds the cache (default DefaultTokenCacheSize).
	Size int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// NewTokens returns an empty token cache.
func NewTokens(o *TokensOptions) *Tokens {
	var opts TokensOptions
	if o != nil {
		opts = *o
	}
	if opts.Size <= 0 {
		opts.Size = DefaultTokenCacheSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Tokens{client: &http.Client{Transport: newTransport(), Timeout: tokenTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		now: opts.Now, entries: lru.New[tokenKey, *tokenEntry](opts.Size), flights: map[tokenKey]*tokenFlight{}}
}

// tokenKey identifies one cached token.
type tokenKey struct {
	endpoint, clientID, kind           string
	issuer, tenant, subject            string
	audience, resource, scope, actorOf string
}

type tokenEntry struct {
	token  string
	expiry time.Time // served until refreshMargin (or less) before it
	fresh  time.Time // the instant it stops being served
	jti    string    // the inbound token it was obtained with, if any
}

// tokenFlight is one request to a token endpoint that callers with the
// same key wait for rather than sending their own.
type tokenFlight struct {
	done  chan struct{}
	token string
	err   error
}

// SetRevocations makes t ask revs whether a caller's token is revoked
// before it obtains or serves an upstream token for it (the gateway's
// revocation list, made after the connections).
func (t *Tokens) SetRevocations(revs auth.Revocations) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.revs = revs
}

// Len returns how many tokens are cached.
func (t *Tokens) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entries.Len()
}

// Fetches returns how many requests were sent to token endpoints.
func (t *Tokens) Fetches() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fetches
}

// Forget drops every token obtained with the inbound token jti (call it
// when jti is revoked) and returns how many there were.
func (t *Tokens) Forget(jti string) int {
	if jti == "" {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entries.DeleteFunc(func(e *tokenEntry) bool { return e.jti == jti })
}

// tokenAuth is a connection's configured auth, its secrets read from the
// environment when a token is asked for.
type tokenAuth struct {
	conn   string      // the connection, for messages
	kind   config.Kind // the connection's, which its executors have: for errors
	cfg    config.ConnectionAuth
	getenv func(string) string
}

// newTokenAuth returns the auth of connection c, nil when it has none.
func newTokenAuth(conn string, c config.Connection, getenv func(string) string) *tokenAuth {
	if c.Auth == nil {
		return nil
	}
	return &tokenAuth{conn: conn, kind: c.Kind, cfg: *c.Auth, getenv: getenv}
}

// perCaller reports whether the upstream token names the caller.
func (a *tokenAuth) perCaller() bool {
	return a != nil && a.cfg.Kind == config.AuthTokenExchange
}

// fail is the error of a token that could not be obtained: nothing was
// sent upstream.
func (a *tokenAuth) fail(outcome, format string, args ...any) *workflow.ExecutorError {
	return &workflow.ExecutorError{Outcome: outcome, Kind: a.kind, Connection: a.conn,
		Message: "no upstream token, so nothing was sent: " + fmt.Sprintf(format, args...)}
}

// token returns the bearer token to send upstream for the call ctx
// carries: the caller's exchanged token (token-exchange), or the
// gateway's own (client-credentials). It fails, before anything is sent
// upstream, when the caller has no live token (a move run without a
// request, such as a resumed one), when that token is revoked, or when
// the token endpoint does not answer with a token.
func (t *Tokens) token(ctx context.Context, a *tokenAuth) (string, error) {
	key := tokenKey{endpoint: a.cfg.TokenEndpoint, clientID: a.cfg.ClientID, kind: a.cfg.Kind,
		audience: a.cfg.Audience, resource: a.cfg.Resource, scope: a.cfg.Scope}
	if a.cfg.Kind != config.AuthTokenExchange && a.cfg.Kind != config.AuthClientCredentials {
		// Loading refuses it; a configuration built otherwise fails here,
		// closed.
		return "", a.fail(workflow.OutcomeFailed, "auth kind %q is not supported (passthrough is forbidden by the MCP authorization specification): use token-exchange or client-credentials", clip(a.cfg.Kind, 40))
	}
	var cred *auth.Credential
	if a.perCaller() {
		var ok bool
		cred, ok = auth.CredentialFrom(ctx)
		if !ok {
			return "", a.fail(workflow.OutcomeFailed, "this connection acts as the caller (auth token-exchange), and this move runs without a caller's token "+
				"(a move resumed or run in the background): fire it again from a request, or approve it, so that it acts with that person's token")
		}
		if !cred.Live(t.now()) {
			return "", a.fail(workflow.OutcomeFailed, "the caller's access token has expired; send the request again with a fresh token")
		}
		t.mu.Lock()
		revs := t.revs
		t.mu.Unlock()
		if revs != nil {
			if r, err := revs.Revoked(ctx, cred.TokenID); err != nil {
				return "", a.fail(workflow.OutcomeUnavailable, "the revocation list cannot be read")
			} else if r {
				t.Forget(cred.TokenID)
				return "", a.fail(workflow.OutcomeFailed, "the caller's access token is revoked")
			}
		}
		key.issuer, key.tenant, key.subject = cred.Issuer, cred.Tenant, cred.Subject
		if a.cfg.Actor {
			key.actorOf = "gateway"
		}
	}
	for {
		t.mu.Lock()
		if e, ok := t.entries.Get(key); ok {
			if t.now().Before(e.fresh) {
				t.mu.Unlock()
				return e.token, nil
			}
			t.entries.Delete(key)
		}
		if f, ok := t.flights[key]; ok {
			t.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return "", a.fail(workflow.OutcomeUnavailable, "the token endpoint did not answer in time")
			}
			if f.err != nil {
				return "", f.err
			}
			continue // the flight's token is cached now (or was not cacheable: ask again)
		}
		f := &tokenFlight{done: make(chan struct{})}
		t.flights[key] = f
		t.fetches++
		t.mu.Unlock()
		tok, expiry, err := t.fetch(ctx, a, cred)
		t.mu.Lock()
		delete(t.flights, key)
		if err == nil && !expiry.IsZero() {
			t.putLocked(key, tok, expiry, cred)
		}
		t.mu.Unlock()
		f.token, f.err = tok, err
		close(f.done)
		return tok, err
	}
}

// putLocked caches a token until shortly before expiry.
func (t *Tokens) putLocked(key tokenKey, tok string, expiry time.Time, cred *auth.Credential) {
	now := t.now()
	margin := min(refreshMargin, expiry.Sub(now)/5)
	e := &tokenEntry{token: tok, expiry: expiry, fresh: expiry.Add(-margin)}
	if cred != nil {
		e.jti = cred.TokenID
	}
	if !now.Before(e.fresh) {
		return
	}
	t.entries.Put(key, e)
}

// tokenAnswer is a token endpoint's answer (RFC 6749 §5.1, §5.2; RFC
// 8693 §2.2).
type tokenAnswer struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"`
	IssuedTokenType  string `json:"issued_token_type"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// fetch asks the token endpoint for a token: the exchange of cred's token
// (token-exchange) or the gateway's own (client-credentials).
func (t *Tokens) fetch(ctx context.Context, a *tokenAuth, cred *auth.Credential) (string, time.Time, error) {
	form := url.Values{}
	if a.perCaller() {
		form.Set("grant_type", grantTokenExchange)
		form.Set("subject_token", cred.Token())
		form.Set("subject_token_type", tokenTypeAccess)
		form.Set("requested_token_type", tokenTypeAccess)
		if a.cfg.Actor {
			actor := &tokenAuth{conn: a.conn, kind: a.kind, getenv: a.getenv, cfg: a.cfg}
			actor.cfg.Kind, actor.cfg.Audience, actor.cfg.Resource, actor.cfg.Scope, actor.cfg.Actor = config.AuthClientCredentials, "", "", "", false
			tok, err := t.token(ctx, actor)
			if err != nil {
				return "", time.Time{}, err
			}
			form.Set("actor_token", tok)
			form.Set("actor_token_type", tokenTypeAccess)
		}
	} else {
		form.Set("grant_type", grantClientCredentials)
	}
	if a.cfg.Audience != "" {
		form.Set("audience", a.cfg.Audience)
	}
	if a.cfg.Resource != "" {
		form.Set("resource", a.cfg.Resource)
	}
	if a.cfg.Scope != "" {
		form.Set("scope", a.cfg.Scope)
	}
	header := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"application/json"}}
	if err := a.authenticate(form, header, t.now()); err != nil {
		return "", time.Time{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", time.Time{}, a.fail(workflow.OutcomeFailed, "the token endpoint's URL is not valid")
	}
	req.Header = header
	secrets := secretList(cred.Token(), form.Get("actor_token"), form.Get("client_assertion"))
	if a.cfg.ClientSecret != "" {
		s, _ := config.Interpolate(a.cfg.ClientSecret, a.getenv)
		secrets = secretList(append(secrets, s)...)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return "", time.Time{}, a.fail(workflow.OutcomeUnavailable, "the token endpoint %s cannot be reached: %s", urlHost(a.cfg.TokenEndpoint), redact(transportReason(err), secrets))
	}
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxTokenAnswer))
	resp.Body.Close()
	if rerr != nil && resp.StatusCode == http.StatusOK {
		return "", time.Time{}, a.fail(workflow.OutcomeUnavailable, "the token endpoint %s answered 200, then the answer broke off", urlHost(a.cfg.TokenEndpoint))
	}
	return t.answer(a, resp.StatusCode, raw, secrets)
}

// answer reads a token endpoint's answer: the token and its expiry (zero
// when the answer gives no lifetime), or the error of a call that was not
// sent, its text redacted of secrets.
func (t *Tokens) answer(a *tokenAuth, status int, raw []byte, secrets []string) (string, time.Time, error) {
	var ans tokenAnswer
	jerr := json.Unmarshal(raw, &ans)
	if status != http.StatusOK {
		outcome := workflow.OutcomeFailed
		if status >= 500 || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout {
			outcome = workflow.OutcomeUnavailable
		}
		what := fmt.Sprintf("answered %d", status)
		if jerr == nil && ans.Error != "" {
			what += " " + clip(redact(ans.Error, secrets), 100)
			if ans.ErrorDescription != "" {
				what += " (" + clip(redact(ans.ErrorDescription, secrets), 300) + ")"
			}
		}
		verb := "refused the exchange of the caller's token"
		if !a.perCaller() {
			verb = "refused the gateway's client credentials"
		}
		return "", time.Time{}, a.fail(outcome, "the token endpoint %s %s: %s", urlHost(a.cfg.TokenEndpoint), verb, what)
	}
	if jerr != nil || ans.AccessToken == "" {
		return "", time.Time{}, a.fail(workflow.OutcomeUnavailable, "the token endpoint %s answered 200 without a token", urlHost(a.cfg.TokenEndpoint))
	}
	if ans.TokenType != "" && !strings.EqualFold(ans.TokenType, "Bearer") && !strings.EqualFold(ans.TokenType, "N_A") {
		return "", time.Time{}, a.fail(workflow.OutcomeFailed, "the token endpoint %s issued a %s token; only Bearer tokens are sent", urlHost(a.cfg.TokenEndpoint), clip(redact(ans.TokenType, secrets), 40))
	}
	var expiry time.Time
	if ans.ExpiresIn > 0 {
		expiry = t.now().Add(time.Duration(min(ans.ExpiresIn, 366*24*3600)) * time.Second)
	}
	return ans.AccessToken, expiry, nil
}

// authenticate adds the client's authentication to a token request: HTTP
// Basic with the secret (RFC 6749 §2.3.1), or a signed assertion
// (private_key_jwt, RFC 7523 §2.2).
func (a *tokenAuth) authenticate(form url.Values, header http.Header, now time.Time) error {
	if a.cfg.ClientSecret != "" {
		secret, missing := config.Interpolate(a.cfg.ClientSecret, a.getenv)
		if len(missing) > 0 {
			return a.fail(workflow.OutcomeFailed, "clientSecret refers to the unset environment variable %s", strings.Join(missing, ", "))
		}
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(a.cfg.ClientID)+":"+url.QueryEscape(secret))))
		return nil
	}
	key, err := a.privateKey()
	if err != nil {
		return err
	}
	assertion, err := signAssertion(key, a.cfg.KeyID, a.cfg.ClientID, a.cfg.TokenEndpoint, now)
	if err != nil {
		return a.fail(workflow.OutcomeFailed, "the client assertion cannot be signed: %v", err)
	}
	form.Set("client_id", a.cfg.ClientID)
	form.Set("client_assertion_type", assertionJWTBearer)
	form.Set("client_assertion", assertion)
	return nil
}

// privateKey reads the client's PEM private key (privateKey or
// privateKeyFile).
func (a *tokenAuth) privateKey() (crypto.Signer, error) {
	var data []byte
	switch {
	case a.cfg.PrivateKey != "":
		s, missing := config.Interpolate(a.cfg.PrivateKey, a.getenv)
		if len(missing) > 0 {
			return nil, a.fail(workflow.OutcomeFailed, "privateKey refers to the unset environment variable %s", strings.Join(missing, ", "))
		}
		data = []byte(s)
	case a.cfg.PrivateKeyFile != "":
		b, err := os.ReadFile(a.cfg.PrivateKeyFile)
		if err != nil {
			return nil, a.fail(workflow.OutcomeFailed, "privateKeyFile cannot be read: %v", errors.Unwrap(err))
		}
		data = b
	default:
		return nil, a.fail(workflow.OutcomeFailed, "the client has no way to authenticate: set clientSecret, privateKey or privateKeyFile")
	}
	key, err := ParsePrivateKey(data)
	if err != nil {
		return nil, a.fail(workflow.OutcomeFailed, "the client's private key: %v", err)
	}
	return key, nil
}

// ParsePrivateKey reads a PEM private key (PKCS #8, PKCS #1 or SEC 1):
// RSA, EC P-256 or Ed25519. Its errors never quote the key.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not a PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("a PEM %q block that does not parse as a private key", block.Type)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, errors.New("an RSA key shorter than 2048 bits")
		}
		return k, nil
	case *ecdsa.PrivateKey:
		if k.Curve.Params().Name != "P-256" {
			return nil, errors.New("an EC key on another curve than P-256")
		}
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, errors.New("a key of another type than RSA, EC P-256 or Ed25519")
}

// signAssertion signs a client assertion (RFC 7523 §3): iss and sub the
// client, aud the token endpoint, a fresh jti, valid one minute.
func signAssertion(key crypto.Signer, kid, clientID, endpoint string, now time.Time) (string, error) {
	var alg string
	switch key.(type) {
	case *rsa.PrivateKey:
		alg = "RS256"
	case *ecdsa.PrivateKey:
		alg = "ES256"
	case ed25519.PrivateKey:
		alg = "EdDSA"
	default:
		return "", errors.New("unsupported key type")
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	hdr := map[string]string{"alg": alg, "typ": "JWT"}
	if kid != "" {
		hdr["kid"] = kid
	}
	claims := map[string]any{"iss": clientID, "sub": clientID, "aud": endpoint,
		"jti": base64.RawURLEncoding.EncodeToString(jti[:]), "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	h, err := json.Marshal(hdr)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	var sig []byte
	switch k := key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, []byte(input))
	case *rsa.PrivateKey:
		d := sha256.Sum256([]byte(input))
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:]); err != nil {
			return "", err
		}
	case *ecdsa.PrivateKey:
		d := sha256.Sum256([]byte(input))
		r, s, err := ecdsa.Sign(rand.Reader, k, d[:])
		if err != nil {
			return "", err
		}
		sig = append(pad32(r), pad32(s)...)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// pad32 is n big-endian in 32 bytes (an ES256 signature half).
func pad32(n *big.Int) []byte {
	b := make([]byte, 32)
	return n.FillBytes(b)
}
