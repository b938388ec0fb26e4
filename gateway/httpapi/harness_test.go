package httpapi_test

// This file is the end-to-end harness of the REST edge. Its gateways are
// wired by gatewaytest the way cmd/praxa/serve.go wires one: a real OIDC
// issuer served over HTTP and trusted through a config.Issuer entry
// (discovery, not a static key set), a SQLite file in t.TempDir(), the
// service layer with its Auditor, the verifier with the store-backed
// revocation list, and httpapi.New behind a real HTTP listener. Tests talk
// to it with net/http only.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/issuer"
)

// Identities used throughout the suite.
const (
	tenantA = "acme"
	tenantB = "globex"
	userA   = "alice"
	userB   = "bob"
)

// logBuffer collects the gateway's logs so tests can check what they hold.
type logBuffer = gatewaytest.LogBuffer

// harnessConfig tunes one harness.
type harnessConfig struct {
	// edit changes the configuration before Defaults applies.
	edit func(*config.Config)
	// revInterval is the revocation poll interval (default: an hour, so
	// polling never interferes unless a test asks for it).
	revInterval time.Duration
	// replicaOf makes the harness a second replica of another.
	replicaOf *harness
}

type harnessOption func(*harnessConfig)

// withConfig edits the configuration.
func withConfig(edit func(*config.Config)) harnessOption {
	return func(c *harnessConfig) {
		prev := c.edit
		c.edit = func(cfg *config.Config) {
			if prev != nil {
				prev(cfg)
			}
			edit(cfg)
		}
	}
}

// withLimits sets request limits.
func withLimits(edit func(*config.Limits)) harnessOption {
	return withConfig(func(c *config.Config) { edit(&c.Server.Limits) })
}

// asReplicaOf makes the harness a second gateway replica of h: same
// database file, issuer, clock and resource identifier (replicas sit behind
// one public URL), its own store handle, service, revocation list, verifier
// and listener.
func asReplicaOf(h *harness, revInterval time.Duration) harnessOption {
	return func(c *harnessConfig) { c.replicaOf, c.revInterval = h, revInterval }
}

// harness is one running gateway and the issuer it trusts; its methods
// Get, Post and Do send requests to it (gatewaytest.Client).
type harness struct {
	*gatewaytest.Client
	clock    *gatewaytest.Clock
	iss      *issuer.Issuer
	issURL   string
	cfg      *config.Config
	dbPath   string
	store    *sqlitestore.Store
	auditor  *audit.Auditor
	service  *gateway.Service
	revs     *gateway.Revocations
	verifier *auth.Verifier
	metrics  *httpapi.Metrics
	logs     *logBuffer
	url      string
	client   *http.Client
	g        *gatewaytest.Gateway
}

// newHarness starts a gateway (gatewaytest.New) over the embedded default
// configuration, with its rate limits, debug logs and a shared clock, and
// an issuer signing with RS256 and ES256 keys on that clock.
func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	hc := harnessConfig{revInterval: time.Hour}
	for _, o := range opts {
		o(&hc)
	}
	o := &gatewaytest.Options{
		Config:             func() (*config.Config, error) { return config.Default(), nil },
		Edit:               hc.edit,
		RateLimits:         true,
		RevocationInterval: hc.revInterval,
		LogLevel:           slog.LevelDebug,
	}
	h := &harness{}
	var g *gatewaytest.Gateway
	if r := hc.replicaOf; r != nil {
		h.clock = r.clock
		g = r.g.Replica(t, o)
	} else {
		h.clock = &gatewaytest.Clock{}
		o.Now = h.clock.Now
		o.Issuer = gatewaytest.NewIssuer(t, issuer.Options{Algorithms: []string{issuer.RS256, issuer.ES256}, Now: h.clock.Now})
		g = gatewaytest.New(t, o)
	}
	h.g, h.iss, h.issURL, h.cfg, h.dbPath = g, g.Issuer.Issuer, g.Issuer.URL, g.Config, g.DBPath
	h.store, h.auditor, h.service, h.revs, h.verifier = g.Store, g.Auditor, g.Service, g.Revocations, g.Verifier
	h.metrics, h.logs, h.url, h.client = g.Metrics, g.Logs, g.URL, g.Client
	h.Client = g.REST()
	return h
}

// scopesWithout is every scope but drop.
func scopesWithout(drop ...string) []string {
	return slices.DeleteFunc(gatewaytest.AllScopes(), func(s string) bool { return slices.Contains(drop, s) })
}

// tok describes a token to mint: alice at acme unless it names another.
type tok = gatewaytest.TokenSpec

// claims returns the claims of spec: a standard RFC 9068 access token for
// this gateway's resource, edited by spec.Claims.
func (h *harness) claims(spec tok) map[string]any {
	return h.g.Issuer.TokenClaims(h.cfg.Auth.Resource, defaultPrincipal(spec))
}

// token mints a token from spec.
func (h *harness) token(t testing.TB, spec tok) string {
	t.Helper()
	return h.g.Mint(t, defaultPrincipal(spec))
}

// defaultPrincipal is spec of alice at acme where it names no tenant or
// subject.
func defaultPrincipal(spec tok) tok {
	if spec.Tenant == "" {
		spec.Tenant = tenantA
	}
	if spec.Subject == "" {
		spec.Subject = userA
	}
	return spec
}

// tokenA is a token of alice at acme with every scope.
func (h *harness) tokenA(t testing.TB) string { return h.token(t, tok{}) }

// tokenB is a token of bob at globex with every scope.
func (h *harness) tokenB(t testing.TB) string {
	return h.token(t, tok{Tenant: tenantB, Subject: userB})
}

// submit posts an intent with key as the given token.
func (h *harness) submit(t testing.TB, token, key, body string, opts ...gatewaytest.RequestOption) *gatewaytest.Response {
	t.Helper()
	all := append([]gatewaytest.RequestOption{gatewaytest.Bearer(token)}, gatewaytest.KeyTrace(key, "")...)
	return h.Post(t, "/v8/intents", body, append(all, opts...)...)
}

// challengeParams parses a WWW-Authenticate Bearer challenge.
func challengeParams(t testing.TB, r *gatewaytest.Response) map[string]string {
	t.Helper()
	vals := r.Header.Values("WWW-Authenticate")
	if len(vals) != 1 {
		t.Fatalf("WWW-Authenticate %q, want exactly one challenge", vals)
	}
	v := vals[0]
	if !strings.HasPrefix(v, "Bearer ") {
		t.Fatalf("WWW-Authenticate %q is not a Bearer challenge", v)
	}
	out := map[string]string{}
	rest := strings.TrimPrefix(v, "Bearer ")
	for rest != "" {
		rest = strings.TrimLeft(rest, ", ")
		name, after, ok := strings.Cut(rest, "=")
		if !ok {
			t.Fatalf("malformed challenge %q", v)
		}
		if !strings.HasPrefix(after, `"`) {
			t.Fatalf("challenge parameter %s not quoted in %q", name, v)
		}
		val, err := strconv.QuotedPrefix(after)
		if err != nil {
			t.Fatalf("challenge %q: %v", v, err)
		}
		uq, _ := strconv.Unquote(val)
		out[name] = uq
		rest = after[len(val):]
	}
	return out
}

// metadataURL is where the harness's protected resource metadata lives.
func (h *harness) metadataURL() string {
	res := strings.TrimRight(h.cfg.Auth.Resource, "/")
	scheme, hostPath, _ := strings.Cut(res, "://")
	host, path, _ := strings.Cut(hostPath, "/")
	u := scheme + "://" + host + "/.well-known/oauth-protected-resource"
	if path != "" {
		u += "/" + path
	}
	return u
}

// newTraceID returns a random W3C trace id.
func newTraceID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newKey returns a fresh idempotency key.
func newKey() string {
	var b [12]byte
	rand.Read(b[:])
	return "k-" + hex.EncodeToString(b[:])
}

// flush writes every queued audit event.
func (h *harness) flush(t testing.TB) {
	t.Helper()
	h.g.Flush(t)
}

// events reads the tenant's events of one trace straight from the store.
func (h *harness) events(t testing.TB, tenant, traceID string) []store.Event {
	t.Helper()
	return h.g.Events(t, tenant, traceID)
}

// eventTypes lists the types of events.
func eventTypes(evs []store.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// countType counts events of type typ.
func countType(evs []store.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// intentExists reports whether tenant holds intent id, through the store API.
func (h *harness) intentExists(t testing.TB, tenant, id string) bool {
	t.Helper()
	err := h.store.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		_, err := tx.GetIntent(ctx, tenant, id)
		return err
	})
	return err == nil
}

// metricsText returns the /metrics exposition.
func (h *harness) metricsText(t testing.TB) string {
	t.Helper()
	r := h.Get(t, "/metrics")
	gatewaytest.WantStatus(t, r, http.StatusOK)
	return string(r.Body)
}

// intentBody is a valid submit body.
const intentBody = `{"intent":"deploy the payments service to staging","tags":["deploy","staging"]}`
