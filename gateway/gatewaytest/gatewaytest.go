// Package gatewaytest starts a complete real gateway for tests, assembled
// by the same build as praxa serve's (package assembly: the service on the
// configuration's connections with its pins checked, the revocation list
// and verifier, the limiter, the metrics, the reloader, MCP at /mcp and the
// REST edge, with the background jobs running), around what only a test
// adds: a real OIDC issuer (package issuer) served over HTTP and trusted
// through config.Auth.Issuers (discovery, not a static key set), a real
// SQLite file in t.TempDir() (sqlitestore.Open) or a PostgreSQL database,
// and a real HTTP server (httptest). Everything is closed when the test
// ends.
//
// It is test support only: it must not be imported by non-test code (a
// test of this package enforces that with go list -deps over the module's
// packages).
package gatewaytest

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/assembly"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/reload"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/pgstore"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/issuer"
	"github.com/praxa/praxa/mcpadapter"
)

// Options tune New. The zero value (or nil) starts a gateway over the
// embedded examples/praxec.yaml that trusts an issuer of its own.
type Options struct {
	// Config returns the configuration to start from (nil: the embedded
	// examples/praxec.yaml). It is called once per gateway, so replicas
	// get configurations of their own, and again on every reload (POST
	// /v8/config/reload, Gateway.Reload), as serve reads its file again:
	// an error it returns refuses the reload.
	Config func() (*config.Config, error)
	// ConfigFile, when set, is the configuration file read at start and
	// on every reload instead of Config, as serve reads its --config: the
	// reload's audit event and answer then carry the file's digest.
	ConfigFile string
	// Edit changes the configuration after New has set the trusted issuer
	// and the rate limit, before Defaults applies (so what it sets, such
	// as Auth.Resource, is kept).
	Edit func(*config.Config)
	// RateLimits keeps the configuration's per-principal rate limit. By
	// default it is off (RatePerSecond -1): tests send far more than the
	// default 50 requests a second with one token.
	RateLimits bool
	// Now is the clock of the issuer New starts, the verifier, the
	// service and the REST edge (nil: time.Now).
	Now func() time.Time
	// Issuer is trusted instead of an issuer of New's own (a second
	// gateway, a restart, an issuer the test started).
	Issuer *Issuer
	// DBPath opens an existing database file (a second gateway on the
	// same data); empty creates one in t.TempDir().
	DBPath string
	// StoreDSN, a postgres:// DSN, opens the PostgreSQL driver (pgstore)
	// on that database instead of a SQLite file; DBPath is then ignored
	// and Gateway.Store is nil (Gateway.DB holds the store). A replica
	// opens the same DSN.
	StoreDSN string
	// RevocationInterval is how often the revocation list polls the store
	// (default an hour, so polling never interferes unless asked for).
	RevocationInterval time.Duration
	// ImportRetryBase is the wait between two attempts to import a
	// proxy.import connection that could not be listed (0: the
	// Reloader's defaults, growing from 2s).
	ImportRetryBase time.Duration
	// ToolSet is the tool set /mcp registers, as serve --tools (empty:
	// every tool).
	ToolSet string
	// LexiconWrites, SkillsSearch and ScriptsSearch are serve's
	// --lexicon-writes, --enable-skills-search and --enable-scripts-search.
	LexiconWrites, SkillsSearch, ScriptsSearch bool
	// Wrap, when set, wraps the handler the server serves (e.g. to break
	// the gateway on purpose).
	Wrap func(http.Handler) http.Handler
	// LogLevel is the lowest level of the logs kept in Gateway.Logs
	// (nil: slog.LevelWarn).
	LogLevel slog.Leveler
	// MCPSDKOnly serves /mcp with go-sdk's stateless handler alone, without
	// the stateless request path (mcpadapter.Options.SDKOnly).
	MCPSDKOnly bool
}

// Gateway is one running gateway. Its parts are exposed for tests that
// reach past HTTP; they are closed when the test ends (or by Close).
type Gateway struct {
	// URL is the base URL of the gateway's HTTP server.
	URL string
	// Client is an HTTP client for URL.
	Client *http.Client
	// Handler is what the server serves (httpapi.New, wrapped by
	// Options.Wrap when set), for calls in process.
	Handler http.Handler
	// Config is the configuration, Defaults applied.
	Config *config.Config
	// Switch holds the current connections; the engine runs executors
	// through it, and a reload swaps it.
	Switch *connect.Switch
	// DBPath is the SQLite file.
	DBPath string
	// Store is this gateway's handle on DBPath (nil with StoreDSN).
	Store *sqlitestore.Store
	// StoreDSN is the PostgreSQL database of Options.StoreDSN, if any.
	StoreDSN string
	// DB is the store the gateway runs on, whichever the driver.
	DB store.Store
	// Auditor writes the events of reads and refusals.
	Auditor *audit.Auditor
	// Service is the service layer.
	Service *gateway.Service
	// Knowledge serves the knowledge reads and the context imports
	// (package knowledge, registered on Service).
	Knowledge *knowledge.Knowledge
	// Revocations is the store-backed revocation list.
	Revocations *gateway.Revocations
	// Verifier verifies bearer tokens.
	Verifier *auth.Verifier
	// Limiter enforces the rate limits (ratelimit.New: cluster-wide on
	// PostgreSQL).
	Limiter ratelimit.Limiter
	// Metrics are the metrics /metrics exposes.
	Metrics *httpapi.Metrics
	// Issuer is the issuer the gateway trusts.
	Issuer *Issuer
	// Logs holds the gateway's logs (JSON lines, as serve writes them);
	// they are printed when the test fails.
	Logs *LogBuffer
	// Reloader reloads the configuration (POST /v8/config/reload,
	// Gateway.Reload), as serve's SIGHUP does.
	Reloader *reload.Reloader
	// Direct holds the tools /mcp lists directly (the capabilities marked
	// exposeDirectly); a reload replaces them.
	Direct *mcpadapter.DirectSet
	// Tokens caches the connections' upstream tokens (auth), across
	// reloads; a revocation drops what the revoked token obtained.
	Tokens *connect.Tokens

	opts  Options
	gw    *assembly.Gateway
	log   *slog.Logger
	close func()
}

// TestRequestStateKey is the requestState key of a gateway whose
// configuration sets none (server.requestStateKeys): every replica shares
// it, as replicas share their configured keys.
const TestRequestStateKey = "gatewaytest-request-state-key-0123456789"

// Issuer is a real OIDC issuer served over HTTP.
type Issuer struct {
	// Issuer signs the tokens and serves discovery and the JWKS.
	*issuer.Issuer
	// URL is where it is served: its iss claim and discovery base.
	URL string
}

// NewIssuer serves a new issuer made with opts over HTTP until the test
// ends.
func NewIssuer(t testing.TB, opts issuer.Options) *Issuer {
	t.Helper()
	iss, err := issuer.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(iss)
	t.Cleanup(srv.Close)
	iss.SetIssuer(srv.URL)
	return &Issuer{Issuer: iss, URL: srv.URL}
}

// LogBuffer is a buffer that is safe for concurrent writes.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns what was written.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// AllScopes is every scope the gateway knows.
func AllScopes() []string {
	var out []string
	for _, s := range contracts.Scopes() {
		out = append(out, string(s))
	}
	return out
}

// New starts a complete gateway; opts may be nil. It fails the test when
// any part does not start, and closes every part when the test ends.
func New(t testing.TB, opts *Options) *Gateway {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	ctx := context.Background()
	g := &Gateway{opts: o, Issuer: o.Issuer, Logs: &LogBuffer{}}
	level := o.LogLevel
	if level == nil {
		level = slog.LevelWarn
	}
	if g.Issuer == nil {
		g.Issuer = NewIssuer(t, issuer.Options{Now: o.Now})
	}

	// The listener is bound first so that, as in serve.go, the defaults
	// (public URL, resource) follow its address.
	srv := httptest.NewUnstartedServer(nil)
	g.Config = parseConfig(t, g.loadConfig)
	g.prepare(g.Config, srv.Listener.Addr().String())
	cfg := g.Config

	var st store.Store
	if o.StoreDSN != "" {
		ps, err := pgstore.Open(ctx, o.StoreDSN, nil)
		if err != nil {
			srv.Close()
			t.Fatal(err)
		}
		st, g.StoreDSN = ps, o.StoreDSN
	} else {
		g.DBPath = o.DBPath
		if g.DBPath == "" {
			g.DBPath = filepath.Join(t.TempDir(), "praxa.db")
		}
		sq, err := sqlitestore.Open(ctx, g.DBPath, nil)
		if err != nil {
			srv.Close()
			t.Fatal(err)
		}
		st, g.Store = sq, sq
	}
	g.DB = st
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway %s logs:\n%s", g.URL, g.Logs.String())
		}
	})
	// From here on, Close (run at cleanup, before the logs are printed)
	// undoes what was started.
	var gw *assembly.Gateway
	var closeOnce sync.Once
	g.close = func() {
		closeOnce.Do(func() {
			srv.Close()
			if gw != nil {
				cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := gw.Close(cctx); err != nil {
					t.Errorf("gatewaytest: close: %v", err)
				}
			}
			if err := st.Close(); err != nil {
				t.Errorf("gatewaytest: store close: %v", err)
			}
		})
	}
	t.Cleanup(g.close)

	// The requestState keys of the configuration, or one every replica
	// of every test shares (serve --dev generates one per process).
	var states *mcpadapter.RequestStateCodec
	if len(cfg.Server.RequestStateKeys) == 0 {
		var err error
		if states, err = mcpadapter.NewRequestStateCodec([][]byte{[]byte(TestRequestStateKey)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	interval := o.RevocationInterval
	if interval <= 0 {
		interval = time.Hour
	}
	gw, err := assembly.Build(ctx, cfg, st, &assembly.Options{
		Logger: slog.New(slog.NewJSONHandler(g.Logs, &slog.HandlerOptions{Level: level})), Now: o.Now,
		Service:            gateway.Options{LexiconWrites: o.LexiconWrites, SkillsSearch: o.SkillsSearch, ScriptsSearch: o.ScriptsSearch},
		RevocationInterval: interval, ToolSet: o.ToolSet, RequestState: states,
		Source: o.ConfigFile, Load: func(context.Context) (*config.Config, []byte, error) { return g.loadConfigData() },
		Prepare:         func(cfg *config.Config) { g.prepare(cfg, g.Config.Server.Addr) },
		ImportRetryBase: o.ImportRetryBase, ImportRetryMax: o.ImportRetryBase,
	})
	if err != nil {
		t.Fatal(err)
	}
	g.gw, g.log = gw, gw.Logger
	g.Switch, g.Tokens, g.Auditor, g.Service, g.Knowledge = gw.Switch, gw.Tokens, gw.Auditor, gw.Service, gw.Knowledge
	g.Revocations, g.Verifier, g.Limiter, g.Metrics = gw.Revocations, gw.Verifier, gw.Limiter, gw.Metrics
	g.Direct, g.Reloader = gw.Direct, gw.Reloader
	gw.Run(ctx)
	g.Handler, err = gw.HTTPHandler(&assembly.HTTPOptions{MCPSDKOnly: o.MCPSDKOnly})
	if err != nil {
		t.Fatal(err)
	}
	if o.Wrap != nil {
		g.Handler = o.Wrap(g.Handler)
	}
	srv.Config.Handler = g.Handler
	srv.Config.ReadHeaderTimeout = 5 * time.Second
	srv.Config.MaxHeaderBytes = 64 << 10 // as serve.go
	srv.Config.ErrorLog = slog.NewLogLogger(g.log.Handler(), slog.LevelWarn)
	srv.Start()
	g.URL, g.Client = srv.URL, srv.Client()
	return g
}

// prepare applies to a configuration what New sets before Defaults: the
// trusted issuer, the rate limit, Options.Edit.
func (g *Gateway) prepare(cfg *config.Config, addr string) {
	cfg.Auth.Issuers = []config.Issuer{{Issuer: g.Issuer.URL}}
	if !g.opts.RateLimits {
		cfg.Server.Limits.RatePerSecond = -1
	}
	if g.opts.Edit != nil {
		g.opts.Edit(cfg)
	}
	cfg.Defaults(addr)
}

// ReloadResult is the answer of a reload, as serve's.
type ReloadResult = reload.Result

// Reload reloads the configuration in process, as SIGHUP does in serve
// (the audit event names the signal), and returns the error of a refused
// one. g.Config keeps the configuration the gateway started with.
func (g *Gateway) Reload(t testing.TB) (*ReloadResult, error) {
	t.Helper()
	return g.Reloader.Reload(context.Background(), reload.Trigger{Via: reload.ViaSignal})
}

// loadConfig reads the configuration: Options.ConfigFile, else
// Options.Config, else the embedded examples/praxec.yaml.
func (g *Gateway) loadConfig() (*config.Config, error) {
	cfg, _, err := g.loadConfigData()
	return cfg, err
}

// loadConfigData is loadConfig with the bytes read from
// Options.ConfigFile (nil otherwise).
func (g *Gateway) loadConfigData() (*config.Config, []byte, error) {
	if g.opts.ConfigFile != "" {
		return config.LoadData(g.opts.ConfigFile)
	}
	fn := g.opts.Config
	if fn == nil {
		fn = embeddedConfig
	}
	cfg, err := fn()
	return cfg, nil, err
}

func embeddedConfig() (*config.Config, error) {
	return config.Parse(examples.PraxecYAMLName, examples.PraxecYAML)
}

// parseConfig returns the configuration of fn, or the embedded examples.
func parseConfig(t testing.TB, fn func() (*config.Config, error)) *config.Config {
	t.Helper()
	if fn == nil {
		fn = embeddedConfig
	}
	cfg, err := fn()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Replica starts a second gateway on g's database file, trusting g's
// issuer, on g's clock, under g's public URL and resource identifier
// (replicas sit behind one public name, so a token for one is good for
// the other), with its own store handle, service, revocation list,
// verifier and server. opts (nil: the options g was started with) tunes
// the rest; its Issuer, DBPath and Now are ignored.
func (g *Gateway) Replica(t testing.TB, opts *Options) *Gateway {
	t.Helper()
	o := g.opts
	if opts != nil {
		o = *opts
	}
	o.Issuer, o.DBPath, o.StoreDSN, o.Now = g.Issuer, g.DBPath, g.StoreDSN, g.opts.Now
	edit, publicURL, resource := o.Edit, g.Config.Server.PublicURL, g.Config.Auth.Resource
	o.Edit = func(c *config.Config) {
		if edit != nil {
			edit(c)
		}
		c.Server.PublicURL, c.Auth.Resource = publicURL, resource
	}
	return New(t, &o)
}

// Token mints an access token (RFC 9068, valid an hour) of subject at
// tenant for this gateway's resource with scopes (nil: every scope) and
// extra claims (a nil value removes a claim).
func (g *Gateway) Token(t testing.TB, tenant, subject string, scopes []string, extra map[string]any) string {
	t.Helper()
	return g.Mint(t, TokenSpec{Tenant: tenant, Subject: subject, Scopes: scopes, TTL: time.Hour, Claims: extra})
}

// Flush writes every queued audit event.
func (g *Gateway) Flush(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.Auditor.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// Events flushes the audit and reads the tenant's events of one trace
// straight from the store.
func (g *Gateway) Events(t testing.TB, tenant, traceID string) []store.Event {
	t.Helper()
	g.Flush(t)
	return g.StoredEvents(t, tenant, traceID)
}

// StoredEvents reads the tenant's events of one trace straight from the
// store, without flushing the asynchronous audit first: the events
// committed so far.
func (g *Gateway) StoredEvents(t testing.TB, tenant, traceID string) []store.Event {
	t.Helper()
	var out []store.Event
	err := g.DB.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		out, err = tx.TraceEvents(ctx, tenant, traceID, 10000)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// StdioSession connects a go-sdk client, over in-memory transports, to the
// MCP server praxa mcp serves on stdio (assembly.Gateway.StdioServer),
// bound to the bearer token tok: a session that is told when the tool list
// changes. Each notifications/tools/list_changed sends on the returned
// channel (buffered, 8). Both ends close when t ends.
func (g *Gateway) StdioSession(t testing.TB, tok string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	return g.StdioSessionWith(t, assembly.StdioCredential{Token: restclient.StaticToken(tok)})
}

// StdioSessionWith is StdioSession with the credential c: a token source
// that may renew its token, and how the operator renews it.
func (g *Gateway) StdioSessionWith(t testing.TB, c assembly.StdioCredential) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	srv, _, err := g.gw.StdioServer(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 8)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gatewaytest", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs, changed
}

// CheckToken verifies tok as the gateway does and says whose it is
// (assembly.Gateway.CheckToken): the check of a renewing credential.
func (g *Gateway) CheckToken(ctx context.Context, tok string) (restclient.Checked, error) {
	return g.gw.CheckToken(ctx, tok)
}

// Close stops the server and closes the service and the store, reporting
// errors to the test. It runs when the test ends; call it to stop earlier
// (e.g. before a restart on the same DBPath). Calls after the first do
// nothing. The issuer keeps serving until the test ends.
func (g *Gateway) Close() { g.close() }
