// Package httpapi is the gateway's REST edge: the chi router that serves the
// contract's operations under /v8, the protected resource metadata, health
// and metrics. It translates HTTP to gateway.Call and back and decides
// nothing itself: transport guards (size, media type), authentication and
// the problem+json rendering live here; scopes, idempotency, validation and
// the operations live in the service layer.
package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/reload"
	"github.com/praxa/praxa/gateway/telemetry"
)

// Authenticator verifies a request's bearer token (auth.Verifier does),
// returning its principal and the token as a credential.
type Authenticator interface {
	Authenticate(r *http.Request) (*auth.Principal, *auth.Credential, error)
}

// Options configure the REST handler.
type Options struct {
	Service *gateway.Service
	// Knowledge records the coverage runs POST /v8/coverage/runs
	// receives (nil: the endpoint answers not-implemented).
	Knowledge *knowledge.Knowledge
	Auth      Authenticator
	Config    *config.Config
	Metrics   *Metrics
	Logger    *slog.Logger
	// AccessLog receives the one "request" line per request (nil: Logger).
	// praxa serve gives it a buffered writer (cmd/praxa/accesslog.go).
	AccessLog *slog.Logger
	// Revocations, when set, is updated at once by the revocation endpoint.
	Revocations *gateway.Revocations
	// Issuers are announced as authorization servers in the protected
	// resource metadata.
	Issuers []string
	// Ready reports readiness for /readyz (nil: always ready).
	Ready func(ctx context.Context) error
	// Mount adds further routes at the root (the dev issuer).
	Mount func(r chi.Router)
	// MCP, when set, is served at /mcp behind the same bearer-token
	// authentication as /v8 and an Origin check; the principal reaches it
	// through the request context (auth.FromContext).
	MCP http.Handler
	// MCPTool reports whether the MCP server registers a tool of that
	// name: /mcp's tools/call requests are counted under the tool their
	// Mcp-Name header names only then, under "other" otherwise (nil: all
	// under "other"), so the metrics' series stay bounded.
	MCPTool func(name string) bool
	// OpenAPI, when set, is the OpenAPI document served, without
	// authentication, at /openapi.json (the caller builds it: this
	// package does not import openapi).
	OpenAPI []byte
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Limiter enforces server.limits' rates (nil: an in-process
	// ratelimit.Local). ratelimit.New picks the cluster-wide one on a
	// store whose replicas share rate buckets (PostgreSQL).
	Limiter ratelimit.Limiter
	// Reload, when set, reloads the configuration for POST
	// /v8/config/reload (scope config:write) and returns the answer; a
	// *config.LoadError is answered INVALID_PARAMS with one entry of
	// errors per problem. by names the operator and the request, for the
	// reload's audit event (reload.Reloader writes it). Without it the
	// endpoint answers not-implemented.
	Reload func(ctx context.Context, by reload.Trigger) (any, error)
}

type server struct {
	Options
	limits      config.Limits
	metadataURL string
	// limiter is nil when no rate limit is in force; principalRule and
	// tenantRule are server.limits' (tenantRule Off when unset).
	limiter                   ratelimit.Limiter
	principalRule, tenantRule ratelimit.Rule
	queryTypes                map[string]map[string]string // tool -> property -> JSON type
	// challenger is scopeChallenge as /mcp's requests carry it, made once.
	challenger auth.ChallengeFunc
}

// New returns the gateway's HTTP handler.
func New(o Options) http.Handler {
	// Every line logged in a request's context carries its ids.
	o.Logger = telemetry.Logger(cmp.Or(o.Logger, slog.Default()))
	o.AccessLog = cmp.Or(o.AccessLog, o.Logger)
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &server{Options: o, limits: o.Config.Server.Limits}
	s.metadataURL, _ = metadataURL(o.Config.Auth.Resource)
	s.principalRule = ratelimit.Rule{Rate: s.limits.RatePerSecond, Burst: s.limits.Burst}
	s.tenantRule = ratelimit.RuleOf(s.limits.Tenant)
	if !s.principalRule.Off() || !s.tenantRule.Off() {
		s.limiter = o.Limiter
		if s.limiter == nil {
			s.limiter = ratelimit.NewLocal()
		}
	}
	s.challenger = s.scopeChallenge
	s.queryTypes = map[string]map[string]string{}
	for t := range contracts.All() {
		if t.Method == http.MethodGet {
			s.queryTypes[t.Name] = propertyTypes(t.InputSchema)
		}
	}

	r := chi.NewRouter()
	r.Use(requestIDs, s.instrument, s.recoverer)
	// RFC 9110: HEAD is answered wherever GET is.
	r.Use(middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, 0, contracts.Errorf(contracts.CodeNotFound, "no route for %s", r.URL.Path), requestID(r.Context()))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		// RFC 9110 §15.5.6: a 405 lists the methods the resource supports.
		// chi sets Allow only in its default handler, so ask the router.
		if allow := allowedMethods(r, req); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
		}
		writeProblem(w, 0, contracts.Errorf(contracts.CodeMethodNotAllowed, "%s is not allowed here", req.Method), requestID(req.Context()))
	})
	r.Get("/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", s.readyz)
	r.Handle("/metrics", o.Metrics.Handler())
	meta := s.protectedResourceMetadata()
	r.Get("/.well-known/oauth-protected-resource", meta)
	if u, err := url.Parse(o.Config.Auth.Resource); err == nil && strings.Trim(u.Path, "/") != "" {
		r.Get("/.well-known/oauth-protected-resource/"+strings.Trim(u.Path, "/"), meta)
	}
	r.Group(func(r chi.Router) {
		// The /v8 API: content negotiation (406) first, then a deadline.
		r.Use(acceptable, s.deadline)
		for t := range contracts.All() {
			r.Method(t.Method, t.Path, s.toolHandler(t))
		}
		r.Post("/v8/tokens/revocations", s.revokeToken)
		r.Get("/v8/approvals", s.listApprovals)
		r.Post("/v8/approvals/{approvalId}/approve", s.resolveApproval(true))
		r.Post("/v8/approvals/{approvalId}/reject", s.resolveApproval(false))
		r.Post(contracts.CoverageRunsPath, s.recordCoverageRun)
		r.Post("/v8/config/reload", s.reloadConfig)
		r.Post("/v8/capabilities/{name}/accept", s.acceptCapability)
	})
	if o.OpenAPI != nil {
		r.Get("/openapi.json", serveDocument(o.OpenAPI))
	}
	if o.MCP != nil {
		r.Handle(mcpRoute, s.checkOrigin(s.authenticated(o.MCP)))
	}
	if o.Mount != nil {
		o.Mount(r)
	}
	return r
}

// authenticated verifies the bearer token of every request and hands the
// principal on in the context; refusals are answered here, at the
// transport, exactly as on /v8.
func (s *server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.authenticate(w, r, contracts.ScopeCapabilitiesRead)
		if !ok {
			return
		}
		ctx := auth.WithChallenge(auth.NewContext(r.Context(), p), s.challenger)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// scopeChallenge is the WWW-Authenticate value of a 403 for want of
// scopes, on /v8 and /mcp alike.
func (s *server) scopeChallenge(scopes []string) string {
	return challenge(s.metadataURL, "insufficient_scope", "", scopes)
}

// checkOrigin refuses browser requests from origins other than the
// gateway's own and those the configuration allows (DNS-rebinding and
// cross-site protection; the MCP SDK's own guard checks Host only).
func (s *server) checkOrigin(next http.Handler) http.Handler {
	allowed := map[string]bool{}
	var own *url.URL
	if u, err := url.Parse(s.Config.Server.PublicURL); err == nil {
		allowed[u.Scheme+"://"+u.Host] = true
		own = u
	}
	for _, o := range s.Config.Server.AllowedOrigins {
		allowed[strings.TrimRight(o, "/")] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !allowed[o] && !sameLoopbackOrigin(own, o) {
			writeProblem(w, 0, contracts.Errorf(contracts.CodeOriginForbidden, "requests from origin %s are not allowed", o), requestID(r.Context()))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameLoopbackOrigin reports whether origin is the gateway's own origin
// spelt with another loopback name: when the gateway's public URL is on a
// loopback host, http://localhost:PORT, http://127.0.0.1:PORT and
// http://[::1]:PORT name the same listener (same scheme and port). A
// foreign host is never the same origin.
func sameLoopbackOrigin(own *url.URL, origin string) bool {
	if own == nil || !loopbackHost(own.Hostname()) {
		return false
	}
	o, err := url.Parse(origin)
	if err != nil || o.Scheme != own.Scheme || o.Path != "" || o.User != nil || !loopbackHost(o.Hostname()) {
		return false
	}
	return portOf(o) == portOf(own)
}

// loopbackHost reports whether host names the loopback interface.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// portOf is u's port, the scheme's default when none is written.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// allowMethods are the methods a 405 may list.
var allowMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions}

// allowedMethods lists the methods routes answers for req's path, by
// matching the path, as chi routes it, against each method.
func allowedMethods(routes chi.Routes, req *http.Request) []string {
	path := req.URL.RawPath
	if path == "" {
		path = req.URL.Path
	}
	var out []string
	for _, m := range allowMethods {
		if routes.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return out
}

// metadataURL is where RFC 9728 puts the metadata of resource: the
// well-known prefix inserted between the host and the resource's path.
func metadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return "", err
	}
	path := strings.TrimRight(u.Path, "/")
	u.Path = "/.well-known/oauth-protected-resource" + path
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

func (s *server) protectedResourceMetadata() http.HandlerFunc {
	scopes := make([]string, 0)
	for _, sc := range contracts.Scopes() {
		scopes = append(scopes, string(sc))
	}
	issuers := s.Issuers
	if issuers == nil {
		issuers = []string{}
	}
	doc := map[string]any{
		"resource":                 s.Config.Auth.Resource,
		"authorization_servers":    issuers,
		"scopes_supported":         scopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Praxa gateway",
		// No resource_signing_alg_values_supported: RFC 9728 defines it
		// for responses the resource signs, and this one signs none (the
		// algorithms of access tokens are the authorization server's).
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "public, max-age=300")
		writeJSON(w, http.StatusOK, doc)
	}
}

func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.Ready != nil {
		if err := s.Ready(r.Context()); err != nil {
			s.Logger.WarnContext(r.Context(), "not ready", "err", err)
			writeProblem(w, 0, contracts.Errorf(contracts.CodeUnavailable, "not ready"), requestID(r.Context()))
			return
		}
	}
	// A proxy.import connection being retried does not make the gateway
	// unready (everything else serves, and the retry goes on for as long
	// as the upstream is away): its state is reported.
	body := map[string]any{"status": "ready"}
	if s.Service != nil {
		if imports := s.Service.Catalogue().ImportStates(); len(imports) > 0 {
			body["imports"] = imports
		}
		// Nor does a quarantined imported capability (pins): the others
		// serve, and only an operator can lift it. It is a degraded
		// detail.
		if q := s.Service.Pins().Quarantined(); len(q) > 0 {
			body["quarantined"] = q
		}
	}
	writeJSON(w, http.StatusOK, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
