package issuer

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// AuthorizePath is the authorization endpoint, relative to the issuer URL:
// served only once EnableAuthorization was called, and only to a request
// that came in on a loopback listener from a loopback peer.
const AuthorizePath = "/authorize"

// codeTTL is how long an authorization code can be redeemed.
const codeTTL = time.Minute

// Account is a principal the authorization endpoint's login page offers:
// whoever opens the page picks one (there is no password: the endpoint is
// for development on one's own machine).
type Account struct {
	// Subject, Tenant and Scopes go into the access token (sub, tenant_id,
	// scope).
	Subject string
	Tenant  string
	Scopes  []string
	// Label is what the login page shows.
	Label string
	// Extra are further access-token claims (see Mint).
	Extra map[string]any
}

// AuthorizationOptions turn on the authorization code flow with PKCE.
type AuthorizationOptions struct {
	// Audience is the aud of the access tokens the token endpoint issues.
	Audience string
	// Accounts are the principals the login page offers.
	Accounts []Account
	// Clients maps each public client id to its redirect URIs; a request
	// whose redirect_uri is not one of its client's, exactly, is refused
	// without a redirect.
	Clients map[string][]string
	// TTL is the access token's lifetime (DefaultTTL when zero).
	TTL time.Duration
}

// authCode is an issued, not yet redeemed, authorization code.
type authCode struct {
	client, redirect, challenge, nonce string
	account                            Account
	expires                            time.Time
}

// EnableAuthorization turns the authorization endpoint and the token
// endpoint's authorization_code grant on (S256 PKCE required, codes single
// use and valid one minute). Both answer only on a loopback listener.
func (i *Issuer) EnableAuthorization(opts AuthorizationOptions) {
	i.mu.Lock()
	defer i.mu.Unlock()
	o := opts
	i.authz = &o
	if i.codes == nil {
		i.codes = map[string]authCode{}
	}
}

// loopbackRequest reports whether r came in on a loopback listener from a
// loopback peer.
func loopbackRequest(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !loopbackAddr(local.String()) {
		return false
	}
	return loopbackAddr(r.RemoteAddr)
}

func loopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authorizeRequest is the validated query of an authorization request.
type authorizeRequest struct {
	ClientID, RedirectURI, State, Nonce, Challenge string
}

// parseAuthorize validates the parameters of an authorization request; a
// failure is answered on the page, never by a redirect.
func (i *Issuer) parseAuthorize(v url.Values, o *AuthorizationOptions) (authorizeRequest, string) {
	req := authorizeRequest{ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), State: v.Get("state"),
		Nonce: v.Get("nonce"), Challenge: v.Get("code_challenge")}
	uris, ok := o.Clients[req.ClientID]
	switch {
	case !ok:
		return req, "unknown client_id"
	case !slices.Contains(uris, req.RedirectURI):
		return req, "redirect_uri is not registered for this client"
	case v.Get("response_type") != "code":
		return req, "response_type must be code"
	case v.Get("code_challenge_method") != "S256" || len(req.Challenge) != 43:
		return req, "PKCE is required: code_challenge (43 characters) with code_challenge_method S256"
	case req.State == "":
		return req, "state is required"
	}
	return req, ""
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Praxa dev sign-in</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#111}
button{display:block;width:100%;margin:.5rem 0;padding:.75rem;font:inherit;text-align:left;border:2px solid #1d4ed8;border-radius:.4rem;background:#fff;color:#1d4ed8;cursor:pointer}
button:focus,button:hover{background:#1d4ed8;color:#fff}small{display:block;color:#333}</style></head>
<body><main><h1>Praxa dev sign-in</h1>
{{if .Error}}<p role="alert">The sign-in request was refused: {{.Error}}.</p>{{else}}
<p>Development issuer: choose who you are. There is no password; this page answers on a loopback address only.</p>
<form method="post" action="">
<input type="hidden" name="response_type" value="code"><input type="hidden" name="client_id" value="{{.Req.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.Req.RedirectURI}}"><input type="hidden" name="state" value="{{.Req.State}}">
<input type="hidden" name="nonce" value="{{.Req.Nonce}}"><input type="hidden" name="code_challenge" value="{{.Req.Challenge}}">
<input type="hidden" name="code_challenge_method" value="S256">
{{range .Accounts}}<button type="submit" name="account" value="{{.Subject}}">{{.Label}}<small>{{.Subject}} · tenant {{.Tenant}}</small></button>{{end}}
</form>{{end}}</main></body></html>`))

// serveAuthorize serves GET (the login page) and POST (a chosen account:
// a code, sent to the redirect URI) of the authorization endpoint.
func (i *Issuer) serveAuthorize(w http.ResponseWriter, r *http.Request, o *AuthorizationOptions) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	vals := r.Form
	if r.Method == http.MethodPost {
		vals = r.PostForm
	}
	req, problem := i.parseAuthorize(vals, o)
	if problem == "" && r.Method == http.MethodPost {
		k := slices.IndexFunc(o.Accounts, func(a Account) bool { return a.Subject == vals.Get("account") })
		if k < 0 {
			problem = "choose one of the accounts"
		} else {
			code := NewTokenID() + NewTokenID()
			i.mu.Lock()
			now := i.now()
			for c, ac := range i.codes {
				if now.After(ac.expires) {
					delete(i.codes, c)
				}
			}
			i.codes[code] = authCode{client: req.ClientID, redirect: req.RedirectURI, challenge: req.Challenge, nonce: req.Nonce,
				account: o.Accounts[k], expires: now.Add(codeTTL)}
			i.mu.Unlock()
			to, _ := url.Parse(req.RedirectURI)
			q := to.Query()
			q.Set("code", code)
			q.Set("state", req.State)
			q.Set("iss", i.Issuer())
			to.RawQuery = q.Encode()
			http.Redirect(w, r, to.String(), http.StatusSeeOther)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if problem != "" {
		w.WriteHeader(http.StatusBadRequest)
	}
	_ = loginPage.Execute(w, map[string]any{"Error": problem, "Req": req, "Accounts": o.Accounts})
}

// tokenError answers the token endpoint's refusal (RFC 6749 §5.2).
func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"error": code, "error_description": desc})
	_, _ = w.Write(b)
}

// S256 is the PKCE code challenge of verifier: base64url(SHA-256).
func S256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// serveCodeGrant redeems an authorization code: one use, before it
// expires, by its client with its redirect URI and the PKCE verifier. It
// answers an access token (audience Audience) and an ID token (audience
// the client, with the request's nonce).
func (i *Issuer) serveCodeGrant(w http.ResponseWriter, r *http.Request, o *AuthorizationOptions) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	f := r.PostForm
	code := f.Get("code")
	i.mu.Lock()
	ac, ok := i.codes[code]
	delete(i.codes, code)
	now := i.now()
	i.mu.Unlock()
	switch {
	case !ok || now.After(ac.expires):
		tokenError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown, used or expired")
		return
	case ac.client != f.Get("client_id") || ac.redirect != f.Get("redirect_uri"):
		tokenError(w, http.StatusBadRequest, "invalid_grant", "client_id or redirect_uri differ from the authorization request")
		return
	case subtle.ConstantTimeCompare([]byte(S256(f.Get("code_verifier"))), []byte(ac.challenge)) != 1:
		tokenError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		return
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	a := ac.account
	access, err := i.mintIssued(o.Audience, a, a.Scopes, ttl, map[string]any{"client_id": ac.client})
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error", "could not sign the token")
		return
	}
	idClaims := map[string]any{"iss": i.Issuer(), "aud": ac.client, "sub": a.Subject, "iat": now.Unix(), "exp": now.Add(ttl).Unix(),
		"name": a.Label}
	if ac.nonce != "" {
		idClaims["nonce"] = ac.nonce
	}
	id, err := i.Sign(idClaims, WithType("JWT"))
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error", "could not sign the token")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	b, _ := json.Marshal(map[string]any{"access_token": access, "id_token": id, "token_type": "Bearer",
		"expires_in": int(ttl / time.Second), "scope": strings.Join(a.Scopes, " ")})
	_, _ = w.Write(b)
}
