// Package config holds the gateway's configuration file, praxec.yaml: its
// typed form, the JSON Schema it is validated against before use, and a
// loader whose every error names the file, the line and the field.
//
// Later features add their sections here; the schema and the types change
// together.
package config

import (
	"math"
	"time"
)

// Config is a loaded, validated configuration. The zero value, after
// Defaults, is the embedded default: no issuers, which means every /v8 call
// answers 401 unless dev mode adds its own issuer.
type Config struct {
	// Source is the file the configuration was loaded from, empty for the
	// embedded defaults.
	Source string `json:"-"`

	// Version is the configuration format version the file declares
	// (version: "1.0.0"); empty when it declares none. Only the majors in
	// SupportedVersions load.
	Version string `json:"version,omitempty"`
	// Audit says where audit events go besides the store.
	Audit Audit `json:"audit,omitzero"`

	Server Server `json:"server"`
	Auth   Auth   `json:"auth"`
	// Workflows are the workflow definitions, keyed by id.
	Workflows map[string]Workflow `json:"workflows,omitempty"`
	// Capabilities are the capability definitions, keyed by id.
	Capabilities map[string]Capability `json:"capabilities,omitempty"`
	// Proxy says which capabilities the proxy surface offers.
	Proxy Proxy `json:"proxy,omitzero"`
	// Manifests are declarative capability manifests (JSON files, paths
	// relative to the configuration file's directory) whose capabilities
	// join the proxy surface (see LoadManifest).
	Manifests []string `json:"manifests,omitempty"`
	// Lexicon holds the terms of the gateway's vocabulary, keyed by term.
	Lexicon map[string]LexiconEntry `json:"lexicon,omitempty"`
	// Skills says where the governed skills are loaded from.
	Skills Skills `json:"skills,omitzero"`
	// Scripts says where the scripts script executors run are loaded
	// from.
	Scripts Scripts `json:"scripts,omitzero"`
	// Certificates names the trusted issuers of model capability
	// certificates.
	Certificates Certificates `json:"certificates,omitzero"`
	// Policy holds decisions beyond scopes.
	Policy Policy `json:"policy"`
	// Connections are the backends executors reach, keyed by name.
	Connections map[string]Connection `json:"connections,omitempty"`
	// Console configures the operator console (package console).
	Console Console `json:"console,omitzero"`
	// Telemetry says where traces and metrics are exported over OTLP.
	Telemetry Telemetry `json:"telemetry,omitzero"`

	// connectionNames are the keys of the connections section (see
	// ConnectionNames).
	connectionNames []string
	// imported are the capabilities proxy.import produced (SetImported).
	imported []ExposedCapability
	// quarantined are the imported capabilities their pins quarantine
	// (SetQuarantined).
	quarantined map[string]bool
	// manifested are the capabilities the manifests declare, in the
	// order of Manifests.
	manifested []ExposedCapability
}

// Server configures the HTTP listener and request limits.
type Server struct {
	// Addr is the listen address; the --addr flag overrides it.
	Addr string `json:"addr,omitempty"`
	// PublicURL is the externally visible base URL (scheme, host, port, no
	// path) used in links and in the protected resource metadata. It
	// defaults to http://ADDR.
	PublicURL string `json:"publicURL,omitempty"`
	// Limits bound what one request may cost.
	Limits Limits `json:"limits"`
	// AllowedOrigins lists the browser origins allowed on the MCP endpoint.
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`
	// Idempotency configures how long idempotency records are kept.
	Idempotency Idempotency `json:"idempotency"`
	// LeaseTTL is how long a move or start lease holds before another
	// gateway takes its holder for stopped mid-call (default
	// DefaultLeaseTTL; see LeaseTTL).
	LeaseTTL Duration `json:"leaseTTL,omitempty"`
	// Quotas bound what one tenant may hold at once (quotas.go).
	Quotas Quotas `json:"quotas,omitzero"`
	// RequestStateKeys are the keys of the HMAC that protects the
	// requestState of MCP input requests (mcpadapter.RequestStateCodec),
	// ${NAME} references to the environment allowed: the first signs, all
	// verify. Every replica needs the same keys.
	RequestStateKeys []string `json:"requestStateKeys,omitempty"`
}

// DefaultMaxBodyBytes bounds a request body, on /v8 and /mcp alike, when
// server.limits.maxBodyBytes is not set.
const DefaultMaxBodyBytes = 1 << 20

// DefaultMaxElements is how many JSON values a request may hold when
// server.limits.maxElements is not set.
const DefaultMaxElements = 20000

// DefaultRequestTimeout is the deadline of a request when
// server.limits.requestTimeout is not set.
const DefaultRequestTimeout = 30 * time.Second

// Limits bound request size, structure, time and rate.
type Limits struct {
	// MaxBodyBytes bounds a request body on /v8 and /mcp alike (default
	// 1 MiB); beyond it 413.
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
	// MaxDepth bounds JSON nesting (default 32); beyond it 400.
	MaxDepth int `json:"maxDepth,omitempty"`
	// MaxElements bounds how many JSON values a body or a tool call's
	// arguments hold, counted through every level (default 20000); beyond
	// it 400 request-limits.
	MaxElements int `json:"maxElements,omitempty"`
	// RequestTimeout is the deadline of one request (default 30s).
	RequestTimeout Duration `json:"requestTimeout,omitempty"`
	// RatePerSecond and Burst configure each principal's token bucket
	// (defaults 50 per second, burst 100); 0 means the default, a negative
	// rate disables the limit.
	RatePerSecond float64 `json:"ratePerSecond,omitempty"`
	Burst         int     `json:"burst,omitempty"`
	// Tenant, when set, is a token bucket per tenant, shared by all of
	// its principals, on top of each principal's (unset: none).
	Tenant *Rate `json:"tenant,omitempty"`
	// ClusterSlice is the most tokens of one bucket a replica leases at
	// once on PostgreSQL (0: a tenth of a second of the rate, at least 1
	// and at most a quarter of the burst). With N replicas the cluster
	// admits at most N*ClusterSlice above a limit (ratelimit.Cluster).
	ClusterSlice int `json:"clusterSlice,omitempty"`
}

// Rate is a token bucket: RatePerSecond requests a second sustained, at
// most Burst at once (default twice the rate, at least 1).
type Rate struct {
	RatePerSecond float64 `json:"ratePerSecond"`
	Burst         int     `json:"burst,omitempty"`
}

// BurstOrDefault is r's burst, or twice its rate (at least 1) when unset.
func (r *Rate) BurstOrDefault() int {
	if r.Burst > 0 {
		return r.Burst
	}
	return max(1, int(math.Ceil(2*r.RatePerSecond)))
}

// Idempotency configures idempotency-record retention.
type Idempotency struct {
	// Retention is how long a completed record replays (default 24h).
	Retention Duration `json:"retention,omitempty"`
	// TombstoneRetention is how long, from its first use, a key is kept
	// from acting again (default DefaultTombstoneRetention, at least
	// Retention): past Retention its record is a tombstone that answers
	// the same key 409 idempotency-key-expired instead of replaying.
	TombstoneRetention Duration `json:"tombstoneRetention,omitempty"`
}

// DefaultIdempotencyRetention is server.idempotency.retention when it is
// not set.
const DefaultIdempotencyRetention = 24 * time.Hour

// DefaultTombstoneRetention is server.idempotency.tombstoneRetention when
// it is not set: 30 days.
const DefaultTombstoneRetention = 30 * 24 * time.Hour

// Auth configures bearer-token verification.
type Auth struct {
	// Resource is this gateway's resource identifier: the audience every
	// access token must name. It defaults to the server's public URL.
	Resource string `json:"resource,omitempty"`
	// Issuers are the trusted token issuers.
	Issuers []Issuer `json:"issuers,omitempty"`
	// Claims names the claims the principal is built from.
	Claims Claims `json:"claims"`
	// RequireAtJWT refuses tokens whose typ header is not at+jwt
	// (RFC 9068). By default at+jwt and JWT are both accepted.
	RequireAtJWT bool `json:"requireAtJwt,omitempty"`
	// RequiredClaims must be present in every token (default sub, jti,
	// client_id); the tenant claim is always required.
	RequiredClaims []string `json:"requiredClaims,omitempty"`
	// Leeway tolerates clock skew on exp and iat (default 30s, at most 5m).
	Leeway Duration `json:"leeway,omitempty"`
	// JWKSRefreshInterval is the least time between two JWKS fetches
	// triggered by an unknown key id (default 30s).
	JWKSRefreshInterval Duration `json:"jwksRefreshInterval,omitempty"`
	// CacheSize bounds the verified-token cache (default 10000 entries).
	CacheSize int `json:"cacheSize,omitempty"`
}

// Console configures the operator console served at /console.
type Console struct {
	// Enabled serves the console; nil leaves the choice to the command
	// (praxa serve --dev serves it, otherwise it is off).
	Enabled *bool `json:"enabled,omitempty"`
	// ClientID is the console's public client id at the issuer.
	ClientID string `json:"clientId,omitempty"`
	// Issuer is the issuer people sign in with: one of Auth.Issuers
	// (default the first).
	Issuer string `json:"issuer,omitempty"`
}

// Telemetry configures the OpenTelemetry export of traces and metrics over
// OTLP (package telemetry). Each setting has a standard OTEL_* environment
// variable that overrides it; an endpoint in either place turns export on.
type Telemetry struct {
	// Endpoint is the OTLP endpoint's base URL
	// (OTEL_EXPORTER_OTLP_ENDPOINT).
	Endpoint string `json:"endpoint,omitempty"`
	// Protocol is http/protobuf (the default) or grpc
	// (OTEL_EXPORTER_OTLP_PROTOCOL).
	Protocol string `json:"protocol,omitempty"`
	// SampleRatio is the share of traces sampled, 0 to 1 (default 1;
	// OTEL_TRACES_SAMPLER_ARG).
	SampleRatio *float64 `json:"sampleRatio,omitempty"`
	// ServiceName is the service.name of the spans and metrics (default
	// praxa; OTEL_SERVICE_NAME).
	ServiceName string `json:"serviceName,omitempty"`
	// Disabled turns export off whatever the endpoint
	// (OTEL_SDK_DISABLED).
	Disabled bool `json:"disabled,omitempty"`
	// MetricInterval is how often metrics are exported (default 60s;
	// OTEL_METRIC_EXPORT_INTERVAL, in milliseconds).
	MetricInterval Duration `json:"metricInterval,omitempty"`
}

// Issuer is one trusted token issuer.
type Issuer struct {
	// Issuer is the exact iss value; with no JWKSURL it is also the OIDC
	// discovery base.
	Issuer string `json:"issuer"`
	// JWKSURL, when set, skips discovery and fetches keys from this URL.
	JWKSURL string `json:"jwksURL,omitempty"`
	// Algorithms allowed for this issuer's signatures (default RS256,
	// ES256, EdDSA). Only asymmetric algorithms are accepted.
	Algorithms []string `json:"algorithms,omitempty"`
}

// Claims names the claims a principal is built from.
type Claims struct {
	// Tenant is the claim holding the tenant (default tenant_id).
	Tenant string `json:"tenant,omitempty"`
	// Compartments and Purposes hold the memory compartments and purposes
	// the token allows (defaults compartments, purposes).
	Compartments string `json:"compartments,omitempty"`
	Purposes     string `json:"purposes,omitempty"`
	// Tools holds an optional tool allowlist (default tools).
	Tools string `json:"tools,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("30s").
type Duration time.Duration

// Defaults fills every unset field with its default. addr is the listen
// address in force (flags win over the file).
func (c *Config) Defaults(addr string) {
	if addr != "" {
		c.Server.Addr = addr
	}
	if c.Server.Addr == "" {
		c.Server.Addr = "127.0.0.1:8080"
	}
	if c.Server.PublicURL == "" {
		c.Server.PublicURL = "http://" + c.Server.Addr
	}
	l := &c.Server.Limits
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = 32
	}
	if l.MaxElements == 0 {
		l.MaxElements = DefaultMaxElements
	}
	if l.RequestTimeout == 0 {
		l.RequestTimeout = Duration(DefaultRequestTimeout)
	}
	if l.RatePerSecond == 0 {
		l.RatePerSecond = 50
	}
	if l.Burst == 0 {
		l.Burst = 100
	}
	if c.Server.Idempotency.Retention == 0 {
		c.Server.Idempotency.Retention = Duration(DefaultIdempotencyRetention)
	}
	if c.Server.Idempotency.TombstoneRetention == 0 {
		c.Server.Idempotency.TombstoneRetention = Duration(max(DefaultTombstoneRetention, time.Duration(c.Server.Idempotency.Retention)))
	}
	a := &c.Auth
	if a.Resource == "" {
		a.Resource = c.Server.PublicURL
	}
	if a.Claims.Tenant == "" {
		a.Claims.Tenant = "tenant_id"
	}
	if a.Claims.Compartments == "" {
		a.Claims.Compartments = "compartments"
	}
	if a.Claims.Purposes == "" {
		a.Claims.Purposes = "purposes"
	}
	if a.Claims.Tools == "" {
		a.Claims.Tools = "tools"
	}
	if a.RequiredClaims == nil {
		a.RequiredClaims = []string{"sub", "jti", "client_id"}
	}
	if a.Leeway == 0 {
		a.Leeway = Duration(30 * time.Second)
	}
	if a.JWKSRefreshInterval == 0 {
		a.JWKSRefreshInterval = Duration(30 * time.Second)
	}
	if a.CacheSize == 0 {
		a.CacheSize = 10000
	}
	for i := range a.Issuers {
		if len(a.Issuers[i].Algorithms) == 0 {
			a.Issuers[i].Algorithms = []string{"RS256", "ES256", "EdDSA"}
		}
	}
}
