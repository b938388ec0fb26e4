// Package console is the operator console: server-rendered pages under
// /console where a person signs in with the configured OpenID Connect
// issuer (authorization code with PKCE) and then, with their own access
// token's scopes and tenant, resolves pending approvals and reads
// missions, traces, the audit trail and capabilities.
//
// The access token stays on the server, in a session the browser names by
// an HttpOnly, SameSite=Strict cookie; every request verifies it again
// with the gateway's verifier (audience auth.resource, revocation
// checked), the same path as /v8, and every page or action calls the
// gateway service with the principal it yields. The ID token only proves
// the sign-in (nonce) and names the person on the page. Every
// state-changing form carries the session's CSRF token. The pages work
// without JavaScript; a small embedded script refreshes the approvals
// queue and shows times in the viewer's time zone.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-chi/chi/v5"
	"golang.org/x/oauth2"

	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
)

// Prefix is where the console is mounted.
const Prefix = "/console"

// CallbackPath is the redirect URI's path, under the gateway's public URL.
const CallbackPath = Prefix + "/callback"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Verifier verifies an access token as /v8 does (auth.Verifier).
type Verifier interface {
	Verify(ctx context.Context, raw string) (*auth.Principal, error)
}

// Options configure a Console.
type Options struct {
	// Service is the gateway service every page and action calls.
	Service *gateway.Service
	// Auditor is the service's Auditor (gateway.Options.Auditor): the
	// audit page reads the trail through it, and its reads are audited
	// through it.
	Auditor *audit.Auditor
	// Verifier verifies the session's access token on every request.
	Verifier Verifier
	// Issuer is the OpenID Connect issuer URL (discovery at
	// Issuer/.well-known/openid-configuration).
	Issuer string
	// ClientID is the console's public client at the issuer.
	ClientID string
	// PublicURL is the gateway's public URL: the redirect URI is
	// PublicURL + CallbackPath, and cookies are Secure unless it is plain
	// HTTP on a loopback address.
	PublicURL string
	// HTTPClient reaches the issuer (default http.DefaultClient).
	HTTPClient *http.Client
	// IDs returns the request and trace ids of a request's context (the
	// REST edge's, so the console's audit events join its trace); nil
	// leaves them empty.
	IDs func(ctx context.Context) (requestID, traceID string)
	// Logger receives the console's operational logs.
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// RefreshSeconds is how often the queue page refreshes its list with
	// JavaScript (default 5).
	RefreshSeconds int
}

// Console serves the operator console.
type Console struct {
	o        Options
	secure   bool
	redirect string
	origin   string
	sessions *sessions
	pages    map[string]*template.Template
	mux      http.Handler

	mu       sync.Mutex
	provider *oidc.Provider
}

// New returns the console; it reaches the issuer only at the first
// sign-in.
func New(o Options) (*Console, error) {
	if o.Service == nil || o.Auditor == nil || o.Verifier == nil {
		return nil, errors.New("console: Service, Auditor and Verifier are required")
	}
	if o.Issuer == "" || o.ClientID == "" {
		return nil, errors.New("console: an issuer and console.clientId are required")
	}
	u, err := url.Parse(strings.TrimRight(o.PublicURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("console: the public URL %q is not an http(s) URL", o.PublicURL)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RefreshSeconds <= 0 {
		o.RefreshSeconds = 5
	}
	if o.IDs == nil {
		o.IDs = func(context.Context) (string, string) { return "", "" }
	}
	c := &Console{o: o, secure: !(u.Scheme == "http" && loopbackHost(u.Hostname())),
		redirect: u.Scheme + "://" + u.Host + CallbackPath, origin: u.Scheme + "://" + u.Host, sessions: newSessions(o.Now)}
	if c.pages, err = parsePages(); err != nil {
		return nil, err
	}
	c.mux = c.routes()
	return c, nil
}

// loopbackHost reports whether host names the loopback interface.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP serves the console; it expects the full path (/console/...).
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	// The console routes on the whole path with a router of its own: a
	// router it is mounted on does not lend it its routing state.
	c.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, nil)))
}

func (c *Console) routes() http.Handler {
	r := chi.NewRouter()
	r.Route(Prefix, func(r chi.Router) {
		static, _ := fs.Sub(staticFS, "static")
		r.Handle("/static/*", http.StripPrefix(Prefix+"/static/", staticHandler(http.FileServerFS(static))))
		r.Get("/login", c.startLogin)
		r.Get("/callback", c.callback)
		r.Post("/logout", c.signedIn(c.logout))
		r.Get("/", c.signedIn(c.queuePage))
		r.Get("/approvals", c.signedIn(c.queuePage))
		r.Get("/approvals/queue", c.signedIn(c.queueFragment))
		r.Get("/approvals/{approvalId}", c.signedIn(c.approvalPage))
		r.Post("/approvals/{approvalId}", c.signedIn(c.resolve))
		r.Get("/missions", c.signedIn(c.missionsPage))
		r.Get("/missions/{runId}", c.signedIn(c.missionPage))
		r.Get("/traces/{traceId}", c.signedIn(c.tracePage))
		r.Get("/audit", c.signedIn(c.auditPage))
		r.Get("/capabilities", c.signedIn(c.capabilitiesPage))
		r.Post("/capabilities/{name}/accept", c.signedIn(c.accept))
	})
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusNotFound, "error", nil, page{Title: "Not found", Problem: &problem{Title: "There is no such page"}})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusMethodNotAllowed, "error", nil, page{Title: "Not allowed", Problem: &problem{Title: r.Method + " is not allowed here"}})
	})
	return r
}

// staticHandler lets the embedded assets be cached for an hour.
func staticHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}

// oidcProvider discovers the issuer once; a failure is retried at the
// next sign-in.
func (c *Console) oidcProvider(ctx context.Context) (*oidc.Provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider != nil {
		return c.provider, nil
	}
	// The provider keeps this context for its key set's later fetches.
	pctx := oidc.ClientContext(context.WithoutCancel(ctx), c.o.HTTPClient)
	p, err := oidc.NewProvider(pctx, c.o.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the issuer %s: %w", c.o.Issuer, err)
	}
	c.provider = p
	return p, nil
}

func (c *Console) oauth(p *oidc.Provider) *oauth2.Config {
	ep := p.Endpoint()
	ep.AuthStyle = oauth2.AuthStyleInParams // a public client: client_id in the form, no secret
	return &oauth2.Config{ClientID: c.o.ClientID, Endpoint: ep, RedirectURL: c.redirect, Scopes: []string{oidc.ScopeOpenID, "profile"}}
}

// safeNext keeps a return path inside the console: a plain path (no
// scheme, host, query, fragment, escape or dot segment) under Prefix, else
// the queue.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err == nil && u.Scheme == "" && u.Host == "" && u.Path == next && !strings.ContainsAny(next, "\\?#%") &&
		!strings.Contains(next, "..") && !strings.HasPrefix(next, "//") && (next == Prefix || strings.HasPrefix(next, Prefix+"/")) {
		return next
	}
	return Prefix + "/"
}

// startLogin sends the browser to the issuer's authorization endpoint
// with a fresh state, nonce and PKCE challenge.
func (c *Console) startLogin(w http.ResponseWriter, r *http.Request) {
	p, err := c.oidcProvider(r.Context())
	if err != nil {
		c.o.Logger.WarnContext(r.Context(), "console sign-in: issuer discovery failed", "err", err)
		c.render(w, r, http.StatusBadGateway, "error", nil, page{Title: "Sign-in unavailable",
			Problem: &problem{Title: "The sign-in service could not be reached", Detail: "Try again in a moment; the gateway's log says why."}})
		return
	}
	id, l := c.sessions.startLogin(safeNext(r.URL.Query().Get("next")))
	http.SetCookie(w, c.cookie(loginCookie, id, int(loginTTL/time.Second), http.SameSiteLaxMode))
	to := c.oauth(p).AuthCodeURL(l.state, oidc.Nonce(l.nonce), oauth2.S256ChallengeOption(l.verifier))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// callback completes a sign-in: the attempt the sign-in cookie names,
// its state, the code exchanged with the PKCE verifier, the ID token's
// signature, audience and nonce, and the access token verified as /v8
// verifies it. Any failure ends the attempt with a page that says so.
func (c *Console) callback(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, c.cookie(loginCookie, "", -1, http.SameSiteLaxMode))
	fail := func(status int, detail string, err error) {
		if err != nil {
			c.o.Logger.WarnContext(r.Context(), "console sign-in refused", "reason", detail, "err", err)
		}
		c.render(w, r, status, "error", nil, page{Title: "Sign-in failed", Problem: &problem{Title: "Sign-in failed", Detail: detail}, SignIn: true})
	}
	q := r.URL.Query()
	ck, err := r.Cookie(loginCookie)
	if err != nil {
		fail(http.StatusBadRequest, "This sign-in was not started from this browser, or took too long. Sign in again.", nil)
		return
	}
	l, ok := c.sessions.takeLogin(ck.Value, q.Get("state"))
	if !ok {
		fail(http.StatusBadRequest, "The sign-in answer does not match the sign-in this browser started (state). Sign in again.", nil)
		return
	}
	if e := q.Get("error"); e != "" {
		fail(http.StatusUnauthorized, "The issuer refused the sign-in: "+e+".", nil)
		return
	}
	p, err := c.oidcProvider(r.Context())
	if err != nil {
		fail(http.StatusBadGateway, "The sign-in service could not be reached.", err)
		return
	}
	ctx := oidc.ClientContext(r.Context(), c.o.HTTPClient)
	tok, err := c.oauth(p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(l.verifier))
	if err != nil {
		fail(http.StatusUnauthorized, "The issuer did not exchange the code.", err)
		return
	}
	rawID, _ := tok.Extra("id_token").(string)
	idt, err := p.Verifier(&oidc.Config{ClientID: c.o.ClientID, Now: c.o.Now}).Verify(ctx, rawID)
	if err != nil {
		fail(http.StatusUnauthorized, "The issuer's ID token did not verify.", err)
		return
	}
	if !equalSecret(idt.Nonce, l.nonce) {
		fail(http.StatusUnauthorized, "The ID token is not for this sign-in (nonce).", nil)
		return
	}
	principal, err := c.o.Verifier.Verify(r.Context(), tok.AccessToken)
	if err != nil {
		fail(http.StatusForbidden, "The gateway does not accept the access token the issuer gave: "+refusal(err), err)
		return
	}
	if principal.Subject != idt.Subject {
		fail(http.StatusUnauthorized, "The access token and the ID token name different people.", nil)
		return
	}
	var claims struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	}
	_ = idt.Claims(&claims)
	name := claims.Name
	if name == "" {
		name = claims.Email
	}
	s := c.sessions.create(tok.AccessToken, name, principal.Expiry)
	http.SetCookie(w, c.cookie(sessionCookie, s.id, 0, http.SameSiteStrictMode))
	// A page of our own moves on: the redirect from the issuer is a
	// cross-site navigation on which the new SameSite=Strict cookie
	// would not be sent, a refresh from this page is same-site.
	c.render(w, r, http.StatusOK, "continue", nil, page{Title: "Signed in", Next: l.next, Redirect: l.next})
}

// refusal is the message of a token refusal, for the page.
func refusal(err error) string {
	var re *auth.RefusalError
	if errors.As(err, &re) {
		return re.Error()
	}
	return "it did not verify"
}

// who is the signed-in person of one request.
type who struct {
	session   session
	principal *auth.Principal
}

// signedIn runs h for a request with a live session whose access token
// still verifies; otherwise it answers the sign-in page (a state-changing
// request is never run).
func (c *Console) signedIn(h func(http.ResponseWriter, *http.Request, *who)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		ck, err := r.Cookie(sessionCookie)
		var s session
		ok := err == nil
		if ok {
			s, ok = c.sessions.get(ck.Value)
		}
		if !ok {
			c.render(w, r, http.StatusUnauthorized, "signin", nil, page{Title: "Sign in", Next: r.URL.Path})
			return
		}
		p, err := c.o.Verifier.Verify(r.Context(), s.access)
		if err != nil {
			// Expired or revoked: the session ends with its token.
			c.sessions.drop(s.id)
			http.SetCookie(w, c.cookie(sessionCookie, "", -1, http.SameSiteStrictMode))
			c.render(w, r, http.StatusUnauthorized, "signin", nil, page{Title: "Sign in", Next: r.URL.Path,
				Flash: "Your sign-in ended (" + refusal(err) + "). Sign in again."})
			return
		}
		if r.Method == http.MethodPost && !c.checkCSRF(r, s) {
			c.render(w, r, http.StatusForbidden, "error", &who{session: s, principal: p}, page{Title: "Refused",
				Problem: &problem{Title: "This form is not from this console", Detail: "The request did not carry this session's form token (CSRF). Reload the page and try again."}})
			return
		}
		h(w, r, &who{session: s, principal: p})
	}
}

// checkCSRF accepts a form that carries the session's CSRF token and
// that the browser does not say came from another site: Sec-Fetch-Site,
// when sent, is same-origin (or none: typed by the person), and Origin,
// when sent, is the console's own (or null, which a browser sends for a
// form of a no-referrer page).
func (c *Console) checkCSRF(r *http.Request, s session) bool {
	if o := r.Header.Get("Origin"); o != "" && o != "null" && o != c.origin {
		return false
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return false
	}
	return equalSecret(r.PostForm.Get("csrf"), s.csrf)
}

// logout ends the session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, u *who) {
	c.sessions.drop(u.session.id)
	http.SetCookie(w, c.cookie(sessionCookie, "", -1, http.SameSiteStrictMode))
	c.render(w, r, http.StatusOK, "signin", nil, page{Title: "Signed out", Flash: "You are signed out."})
}
