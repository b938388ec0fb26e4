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
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
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

// problemBase is the prefix of every problem type URI.
const problemBase = "https://praxa.dev/problems/"

// clock is real time shifted by a settable offset. It is shared by the
// issuer (iat, nbf, exp), the verifier (expiry, JWKS refetch interval), the
// service and the edge (idempotency retention, rate limit). Real time keeps
// timestamps comparable with the wall clock that gateway.Revocations polls
// with; Advance moves every component forward at once without sleeping.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

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

// harness is one running gateway and the issuer it trusts.
type harness struct {
	clock    *clock
	iss      *issuer.Issuer
	issURL   string
	cfg      *config.Config
	dbPath   string
	store    *sqlitestore.Store
	auditor  *gateway.Auditor
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
		h.clock = &clock{}
		o.Now = h.clock.Now
		o.Issuer = gatewaytest.NewIssuer(t, issuer.Options{Algorithms: []string{issuer.RS256, issuer.ES256}, Now: h.clock.Now})
		g = gatewaytest.New(t, o)
	}
	h.g, h.iss, h.issURL, h.cfg, h.dbPath = g, g.Issuer.Issuer, g.Issuer.URL, g.Config, g.DBPath
	h.store, h.auditor, h.service, h.revs, h.verifier = g.Store, g.Auditor, g.Service, g.Revocations, g.Verifier
	h.metrics, h.logs, h.url, h.client = g.Metrics, g.Logs, g.URL, g.Client
	return h
}

// allScopes is every scope the gateway knows.
func allScopes() []string { return gatewaytest.AllScopes() }

// scopesWithout is every scope but drop.
func scopesWithout(drop ...string) []string {
	return slices.DeleteFunc(allScopes(), func(s string) bool { return slices.Contains(drop, s) })
}

// tok describes a token to mint.
type tok struct {
	tenant, subject string
	scopes          []string // nil: every scope
	ttl             time.Duration
	claims          map[string]any // added, replaced, or removed (nil value)
	opts            []issuer.SignOption
}

// claims returns the claims of spec: a standard RFC 9068 access token for
// this gateway's resource, edited by spec.claims.
func (h *harness) claims(spec tok) map[string]any {
	if spec.tenant == "" {
		spec.tenant = tenantA
	}
	if spec.subject == "" {
		spec.subject = userA
	}
	if spec.scopes == nil {
		spec.scopes = allScopes()
	}
	c := h.iss.Claims(h.issURL, h.cfg.Auth.Resource, spec.subject, spec.tenant, spec.scopes, spec.ttl)
	for k, v := range spec.claims {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// token mints a token from spec.
func (h *harness) token(t testing.TB, spec tok) string {
	t.Helper()
	s, err := h.iss.Sign(h.claims(spec), spec.opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tokenA is a token of alice at acme with every scope.
func (h *harness) tokenA(t testing.TB) string { return h.token(t, tok{}) }

// tokenB is a token of bob at globex with every scope.
func (h *harness) tokenB(t testing.TB) string {
	return h.token(t, tok{tenant: tenantB, subject: userB})
}

// response is a read HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// reqOpt edits a request before it is sent.
type reqOpt func(*http.Request)

func bearer(token string) reqOpt {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

func header(name, value string) reqOpt {
	return func(r *http.Request) { r.Header.Add(name, value) }
}

func idemKey(k string) reqOpt { return header("Idempotency-Key", k) }

func contentType(ct string) reqOpt {
	return func(r *http.Request) {
		if ct == "" {
			r.Header.Del("Content-Type")
		} else {
			r.Header.Set("Content-Type", ct)
		}
	}
}

// inTrace sends the request as part of W3C trace id.
func inTrace(id string) reqOpt {
	return header("Traceparent", "00-"+id+"-00f067aa0ba902b7-01")
}

// chunked hides the body's length so the server must count while reading.
func chunked() reqOpt {
	return func(r *http.Request) { r.ContentLength = -1 }
}

// do sends method path (a path and query relative to the gateway) with body;
// POST bodies default to application/json.
func (h *harness) do(t testing.TB, method, path, body string, opts ...reqOpt) *response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	if req.ContentLength < 0 && rd != nil {
		req.Body = io.NopCloser(rd) // not a *strings.Reader: sent chunked
		req.GetBody = nil
	}
	res, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: b}
}

func (h *harness) get(t testing.TB, path string, opts ...reqOpt) *response {
	t.Helper()
	return h.do(t, http.MethodGet, path, "", opts...)
}

func (h *harness) post(t testing.TB, path, body string, opts ...reqOpt) *response {
	t.Helper()
	return h.do(t, http.MethodPost, path, body, opts...)
}

// submit posts an intent with key as the given token.
func (h *harness) submit(t testing.TB, token, key, body string, opts ...reqOpt) *response {
	t.Helper()
	all := []reqOpt{bearer(token)}
	if key != "" {
		all = append(all, idemKey(key))
	}
	return h.post(t, "/v8/intents", body, append(all, opts...)...)
}

// json decodes a JSON body.
func (r *response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// traceID is the W3C trace id the gateway answered under.
func (r *response) traceID(t testing.TB) string {
	t.Helper()
	parts := strings.Split(r.Header.Get("Traceparent"), "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		t.Fatalf("no valid Traceparent in the answer: %q", r.Header.Get("Traceparent"))
	}
	return parts[1]
}

func (r *response) String() string {
	return strconv.Itoa(r.Status) + " " + string(r.Body)
}

// problem is a decoded problem document.
type problem struct {
	Type      string           `json:"type"`
	Title     string           `json:"title"`
	Status    int              `json:"status"`
	Detail    string           `json:"detail"`
	Instance  string           `json:"instance"`
	Code      string           `json:"code"`
	RequestID string           `json:"requestId"`
	Hint      string           `json:"hint"`
	TraceID   string           `json:"traceId"`
	Retryable *bool            `json:"retryable"`
	Links     []contracts.Link `json:"links"`
	Errors    []struct {
		Pointer string `json:"pointer"`
		Keyword string `json:"keyword"`
		Detail  string `json:"detail"`
	} `json:"errors"`
}

// wantStatus fails unless r has status.
func wantStatus(t testing.TB, r *response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
}

// wantProblem checks that r is an RFC 9457 problem with status and code,
// in the gateway's shape, and returns it.
func wantProblem(t testing.TB, r *response, status int, code contracts.Code) problem {
	t.Helper()
	wantStatus(t, r, status)
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	var p problem
	var raw map[string]any
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatalf("problem is not JSON: %v\n%s", err, r.Body)
	}
	for _, m := range []string{"type", "title", "status", "code", "requestId", "retryable", "links", "traceId"} {
		if _, ok := raw[m]; !ok {
			t.Errorf("problem lacks member %q: %s", m, r.Body)
		}
	}
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("problem: %v", err)
	}
	if p.Status != r.Status {
		t.Errorf("problem status %d, HTTP status %d", p.Status, r.Status)
	}
	if p.Code != string(code) {
		t.Errorf("problem code %q, want %q (%s)", p.Code, code, r.Body)
	}
	if p.Type != code.TypeURI() || !strings.HasPrefix(p.Type, problemBase) {
		t.Errorf("problem type %q, want %q", p.Type, code.TypeURI())
	}
	if info, _ := code.Info(); p.Title != info.Title || p.Title == "" {
		t.Errorf("problem title %q, want %q", p.Title, info.Title)
	}
	if p.RequestID == "" || p.RequestID != r.Header.Get("X-Request-Id") && r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("problem requestId %q, X-Request-Id %q", p.RequestID, r.Header.Get("X-Request-Id"))
	}
	// A fresh answer names the trace of its Traceparent header; a replayed
	// one the trace of the request answered first (TestReplayedRefusalTrace).
	if p.TraceID == "" || p.TraceID != r.traceID(t) && r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("problem traceId %q, Traceparent %q", p.TraceID, r.Header.Get("Traceparent"))
	}
	for _, leak := range []string{"goroutine ", ".go:", "sqlite", "SELECT ", "panic"} {
		if strings.Contains(string(r.Body), leak) {
			t.Errorf("problem leaks %q: %s", leak, r.Body)
		}
	}
	return p
}

// challengeParams parses a WWW-Authenticate Bearer challenge.
func challengeParams(t testing.TB, r *response) map[string]string {
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
	r := h.get(t, "/metrics")
	wantStatus(t, r, http.StatusOK)
	return string(r.Body)
}

// metricValue returns the value of the sample of name whose labels include
// all of labels, or -1 when there is none.
func metricValue(text, name string, labels map[string]string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			if !strings.Contains(line, k+`="`+labels[k]+`"`) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return -1
		}
		return v
	}
	return -1
}

// intentBody is a valid submit body.
const intentBody = `{"intent":"deploy the payments service to staging","tags":["deploy","staging"]}`
