package issuer

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultRefreshTTL is how long a refresh token can be redeemed when
// TokenOptions.RefreshTTL is zero.
const DefaultRefreshTTL = 24 * time.Hour

// Client is a client of the token endpoint's client_credentials and
// refresh_token grants.
type Client struct {
	// ID is the client_id.
	ID string
	// Secret authenticates the client (HTTP Basic, client_secret_basic,
	// or the form, client_secret_post). A client without one is public:
	// it may redeem its refresh tokens, and has no client_credentials
	// grant.
	Secret string
	// Account is whose tokens the client gets from the
	// client_credentials grant; its Subject defaults to ID.
	Account Account
}

// TokenOptions turn on the token endpoint's client_credentials grant
// (RFC 6749 §4.4) and refresh_token grant (§6).
type TokenOptions struct {
	// Audience is the aud of the access tokens the grants issue. A
	// request's resource parameter (RFC 8707), when sent, must name it.
	Audience string
	// Clients are the clients that may use the grants.
	Clients []Client
	// TTL is the access tokens' lifetime (DefaultTTL when zero).
	TTL time.Duration
	// RefreshTTL is a refresh token's lifetime (DefaultRefreshTTL when
	// zero). A refresh token is redeemed once: the answer carries the
	// next one (rotation, RFC 9700 §4.14.2).
	RefreshTTL time.Duration
}

// refreshGrant is an issued refresh token not yet redeemed.
type refreshGrant struct {
	client  string
	account Account
	expires time.Time
}

// EnableTokenGrants turns the token endpoint's client_credentials and
// refresh_token grants on for opts.Clients; the discovery document lists
// them. A later call replaces the options; refresh tokens already issued
// stay redeemable.
func (i *Issuer) EnableTokenGrants(opts TokenOptions) {
	i.mu.Lock()
	defer i.mu.Unlock()
	o := opts
	o.Clients = slices.Clone(opts.Clients)
	i.grants = &o
	if i.refresh == nil {
		i.refresh = map[string]refreshGrant{}
	}
}

// RefreshToken issues, out of band, a refresh token that clientID
// redeems for tokens of a (as if a's owner had authorized the client).
// The token grants must be on and clientID one of their clients.
func (i *Issuer) RefreshToken(clientID string, a Account) (string, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.grants == nil || !slices.ContainsFunc(i.grants.Clients, func(c Client) bool { return c.ID == clientID }) {
		return "", ErrUnknownClient
	}
	return i.newRefreshLocked(clientID, a), nil
}

// IssuedTokenIDs returns the jti of every access token the token endpoint
// has issued (every grant), oldest first, so that tests can prove when a
// client renewed and revoke what it holds.
func (i *Issuer) IssuedTokenIDs() []string {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return slices.Clone(i.issued)
}

// mintIssued signs the access token of a grant and records its jti.
func (i *Issuer) mintIssued(audience string, a Account, scopes []string, ttl time.Duration, extra map[string]any) (string, error) {
	jti := NewTokenID()
	claims := map[string]any{"jti": jti}
	for k, v := range a.Extra {
		claims[k] = v
	}
	for k, v := range extra {
		claims[k] = v
	}
	tok, err := i.Mint("", audience, a.Subject, a.Tenant, scopes, ttl, claims)
	if err != nil {
		return "", err
	}
	i.mu.Lock()
	i.issued = append(i.issued, jti)
	i.mu.Unlock()
	return tok, nil
}

// ErrUnknownClient is RefreshToken's refusal of a client the token
// grants do not know (or of any client, when they are off).
var ErrUnknownClient = errors.New("issuer: unknown client")

// newRefreshLocked stores and returns a new refresh token. The caller
// holds i.mu.
func (i *Issuer) newRefreshLocked(clientID string, a Account) string {
	ttl := i.grants.RefreshTTL
	if ttl == 0 {
		ttl = DefaultRefreshTTL
	}
	now := i.now()
	for t, g := range i.refresh {
		if now.After(g.expires) {
			delete(i.refresh, t)
		}
	}
	tok := "rt_" + NewTokenID() + NewTokenID()
	i.refresh[tok] = refreshGrant{client: clientID, account: a, expires: now.Add(ttl)}
	return tok
}

// serveTokenGrant answers the client_credentials and refresh_token
// grants (RFC 6749 §4.4, §6; errors §5.2).
func (i *Issuer) serveTokenGrant(w http.ResponseWriter, r *http.Request, o *TokenOptions) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	f := r.PostForm
	c, ok := authenticateClient(r, f, o.Clients)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		tokenError(w, http.StatusUnauthorized, "invalid_client", "the client is unknown or its secret is wrong")
		return
	}
	if res := f.Get("resource"); res != "" && res != o.Audience {
		tokenError(w, http.StatusBadRequest, "invalid_target", "this issuer issues tokens for "+o.Audience+" only")
		return
	}
	var (
		a       Account
		refresh bool
	)
	switch f.Get("grant_type") {
	case "client_credentials":
		if c.Secret == "" {
			tokenError(w, http.StatusBadRequest, "unauthorized_client", "a public client has no client_credentials grant")
			return
		}
		a = c.Account
		if a.Subject == "" {
			a.Subject = c.ID
		}
	case "refresh_token":
		i.mu.Lock()
		rt := f.Get("refresh_token")
		g, found := i.refresh[rt]
		delete(i.refresh, rt) // used once, whatever follows
		now := i.now()
		i.mu.Unlock()
		if !found || now.After(g.expires) || g.client != c.ID {
			tokenError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, used, expired or another client's")
			return
		}
		a, refresh = g.account, true
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "this issuer answers authorization_code, client_credentials and refresh_token")
		return
	}
	scopes := a.Scopes
	if s := f.Get("scope"); s != "" {
		scopes = strings.Fields(s)
		for _, sc := range scopes {
			if !slices.Contains(a.Scopes, sc) {
				tokenError(w, http.StatusBadRequest, "invalid_scope", "the client may not have the scope "+sc)
				return
			}
		}
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	access, err := i.mintIssued(o.Audience, a, scopes, ttl, map[string]any{"client_id": c.ID})
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error", "could not sign the token")
		return
	}
	answer := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(ttl / time.Second), "scope": strings.Join(scopes, " ")}
	if refresh {
		i.mu.Lock()
		answer["refresh_token"] = i.newRefreshLocked(c.ID, a)
		i.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	b, _ := json.Marshal(answer)
	_, _ = w.Write(b)
}

// authenticateClient finds the client a token request names and checks
// its secret: HTTP Basic or client_id and client_secret in the form, not
// both; a public client sends its client_id and no secret.
func authenticateClient(r *http.Request, f url.Values, clients []Client) (Client, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		if f.Has("client_secret") {
			return Client{}, false
		}
		// RFC 6749 §2.3.1: both are form-urlencoded before Basic.
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil || (f.Has("client_id") && f.Get("client_id") != id) {
			return Client{}, false
		}
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	k := slices.IndexFunc(clients, func(c Client) bool { return c.ID == id })
	if id == "" || k < 0 {
		return Client{}, false
	}
	c := clients[k]
	if c.Secret == "" {
		return c, secret == ""
	}
	return c, subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) == 1
}
