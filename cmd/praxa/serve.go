package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/console"
	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/issuer"
	"github.com/praxa/praxa/mcpadapter"
	"github.com/praxa/praxa/openapi"
)

func init() {
	register(command{name: "serve", summary: "run the gateway: REST under /v8 on an embedded SQLite store", run: runServe})
}

// devPathPrefix is where --dev serves its built-in issuer.
const devPathPrefix = "/dev/issuer"

// devTenant and devSubject are the identity of the token --dev prints.
const (
	devTenant  = "dev"
	devSubject = "dev-user"
)

// serveFlags are the flags shared by serve and the commands that work on
// its data directory.
type serveFlags struct {
	addr    string
	dataDir string
	config  string
	store   string // --store: a postgres:// DSN or a SQLite file (store.go)
	dev     bool
	tools   string
	// tlsCert and tlsKey: serve HTTPS (serve only; tls.go).
	tlsCert, tlsKey string
	// discovery: the gated search kinds and lexicon writes (serve only).
	skillsSearch, scriptsSearch, lexiconWrites bool
}

func (f *serveFlags) register(env *environment, fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}, withDev bool) {
	f.registerFor(env, fs, withDev, true)
}

// registerFor registers the flags of a command that works on a gateway's
// store and configuration without serving (mcp on stdio, approvals, the
// imports) when listens is false: -addr and -dev then describe what they
// mean there.
func (f *serveFlags) registerFor(env *environment, fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}, withDev, listens bool) {
	addr := "listen address (default 127.0.0.1:8080, or server.addr of the config)"
	dev := "development mode: trust a built-in token issuer and print a ready token"
	if !listens {
		addr = "the address praxa serve listens on, which names its public URL and so the dev issuer's audience (default 127.0.0.1:8080, or server.addr of the config)"
		dev = "development mode: trust the built-in token issuer of the data directory (the one praxa serve --dev made) and, without --config, load the example workflows serve --dev runs"
	}
	fs.StringVar(&f.addr, "addr", "", addr)
	fs.StringVar(&f.dataDir, "data-dir", defaultDataDir(env), "directory of the gateway's state (also PRAXA_DATA_DIR)")
	fs.StringVar(&f.store, "store", defaultStore(env), storeUsage)
	fs.StringVar(&f.config, "config", "", "configuration file (default ./praxec.yaml when it exists; with --dev and none, the embedded examples/praxec.yaml)")
	if withDev {
		fs.BoolVar(&f.dev, "dev", false, dev)
	}
}

// defaultDataDir is PRAXA_DATA_DIR, else $XDG_DATA_HOME/praxa, else
// ~/.local/share/praxa.
func defaultDataDir(env *environment) string {
	if d := env.getenv("PRAXA_DATA_DIR"); d != "" {
		return d
	}
	if d := env.getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "praxa")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "praxa")
	}
	return "praxa-data"
}

// loadConfig reads the configuration the flags name, or ./praxec.yaml, or
// (in dev mode) the embedded example configuration, or the embedded
// defaults.
func loadConfig(path string, dev bool) (*config.Config, error) {
	return readConfig(configPath(path), dev)
}

// readConfig reads the file path names or, when path is empty, the
// embedded example configuration (dev mode) or the defaults.
func readConfig(path string, dev bool) (*config.Config, error) {
	cfg, _, err := readConfigData(path, dev)
	return cfg, err
}

func runServe(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "serve", "[--addr HOST:PORT] [--data-dir DIR] [--config FILE] [--dev]")
	var f serveFlags
	f.register(env, fs, true)
	fs.StringVar(&f.tools, "tools", contracts.SetAll, "tool set /mcp registers: "+setNames())
	fs.BoolVar(&f.skillsSearch, "enable-skills-search", false, "accept kind skill in searches (authoring time; INVALID_PARAMS otherwise)")
	fs.BoolVar(&f.scriptsSearch, "enable-scripts-search", false, "accept kind script in searches (authoring time; INVALID_PARAMS otherwise)")
	fs.BoolVar(&f.lexiconWrites, "lexicon-writes", false, "accept praxec.command define (lexicon:write scope); off: LEXICON_WRITES_DISABLED")
	fs.StringVar(&f.tlsCert, "tls-cert", "", tlsCertUsage)
	fs.StringVar(&f.tlsKey, "tls-key", "", tlsKeyUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkTLSFlags(f); err != nil {
		fmt.Fprintf(env.stderr, "praxa serve: %v\n", err)
		return errUsage
	}
	if _, ok := contracts.LookupToolSet(f.tools); !ok {
		fmt.Fprintf(env.stderr, "praxa serve: unknown tool set %q (known: %s)\n", f.tools, setNames())
		return errUsage
	}
	ensureGCPercent() // gc.go
	app, err := startGateway(ctx, env, f)
	if err != nil {
		return err
	}
	return app.wait(ctx)
}

// app is a running gateway.
type app struct {
	env *environment
	log *slog.Logger
	// access buffers the access log (accesslog.go); close flushes it.
	access   *bufferedLog
	cfg      *config.Config
	store    store.Store
	conns    *connect.Switch
	service  *gateway.Service
	server   *http.Server
	listener net.Listener
	cancel   context.CancelFunc
	served   chan error
	url      string

	// reloader reloads the configuration (reload.go): SIGHUP and POST
	// /v8/config/reload.
	reloader *gateway.Reloader
}

// startGateway opens the store, builds the service and starts serving. It
// returns once the listener is bound.
func startGateway(ctx context.Context, env *environment, f serveFlags) (*app, error) {
	// Every writer of the gateway's stderr (the log, the access log's
	// flusher, direct prints) takes one lock, so that lines never
	// interleave whatever the underlying writer is.
	locked := *env
	locked.stderr = &syncWriter{w: env.stderr}
	env = &locked
	log := telemetry.Logger(slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	path := configPath(f.config)
	cfg, err := readConfig(path, f.dev)
	if err != nil {
		return nil, err
	}
	addr := listenAddr(f.addr, cfg) // tls.go
	tlsConf, err := serverTLS(f, log)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	completeConfig(cfg, ln.Addr().String(), tlsConf != nil)
	if err := os.MkdirAll(f.dataDir, 0o700); err != nil {
		ln.Close()
		return nil, fmt.Errorf("data directory: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &app{env: env, log: log, access: newBufferedLog(env.stderr, accessLogFlushEvery), cfg: cfg, listener: ln, cancel: cancel, served: make(chan error, 1), url: cfg.Server.PublicURL}
	if err := startPprof(runCtx, env.getenv(pprofEnv), log); err != nil {
		cancel()
		ln.Close()
		a.access.Close()
		return nil, err
	}
	fail := func(err error) (*app, error) {
		cancel()
		ln.Close()
		a.access.Close()
		if a.store != nil {
			a.store.Close()
		}
		if a.conns != nil {
			a.conns.Close(context.Background())
		}
		return nil, err
	}
	if a.store, err = openAuditedStore(ctx, f, cfg, env.stderr, log); err != nil {
		return fail(err)
	}
	built, err := buildService(ctx, cfg, a.store, log, gateway.Options{LexiconWrites: f.lexiconWrites,
		SkillsSearch: f.skillsSearch, ScriptsSearch: f.scriptsSearch})
	if err != nil {
		return fail(err)
	}
	a.service, a.conns = built.service, built.conns
	tokens := built.tokens
	for _, p := range built.problems {
		fmt.Fprintf(env.stderr, "praxa: %s\n", p)
	}

	var statics []auth.StaticIssuer
	var dev *issuer.Issuer
	issuers := make([]string, 0, len(cfg.Auth.Issuers)+1)
	for _, is := range cfg.Auth.Issuers {
		issuers = append(issuers, is.Issuer)
	}
	if f.dev {
		if dev, err = openDevIssuer(f.dataDir, cfg); err != nil {
			return fail(err)
		}
		keys := []auth.StaticKey{}
		for _, k := range dev.PublicKeys() {
			keys = append(keys, auth.StaticKey{KeyID: k.KeyID, Algorithm: k.Algorithm, Key: k.Key})
		}
		statics = append(statics, auth.StaticIssuer{Issuer: dev.Issuer(), Keys: keys})
		issuers = append(issuers, dev.Issuer())
	}
	metrics := httpapi.NewMetrics()
	metrics.CounterFunc("praxa_audit_queue_waits_total", "Audit events that waited for room in the asynchronous audit queue.",
		func() float64 { return float64(a.service.AuditWaits()) })
	var verifier *auth.Verifier
	revs, err := gateway.NewRevocations(ctx, a.store, 2*time.Second, func(jti string) {
		if verifier != nil {
			verifier.Forget(jti)
		}
		// The upstream tokens obtained with a revoked token go too.
		tokens.Forget(jti)
	}, log)
	if err != nil {
		return fail(err)
	}
	verifier, err = auth.NewVerifier(ctx, cfg.Auth, &auth.Options{Revocations: revs, StaticIssuers: statics, OnRefusal: nil})
	if err != nil {
		return fail(err)
	}
	tokens.SetRevocations(revs)
	go revs.Run(runCtx)
	go sweepIdempotency(runCtx, a.store, log)
	// audit.retention: events older than it go (gateway/audit_export.go).
	go gateway.RunAuditRetention(runCtx, a.store, time.Duration(cfg.Audit.Retention), log)
	// Expired move and start leases resolve as outcome-unknown without
	// waiting for a request (gateway/leases_sweep.go); runCtx ends at
	// shutdown.
	go a.service.RunLeaseSweeper(runCtx)
	metrics.CounterFunc("praxa_leases_swept_total", "Expired move and start leases the lease sweeper resolved as outcome-unknown.",
		func() float64 { return float64(a.service.LeasesSwept()) })
	// proxy_default runs idle longer than proxy.runRetention move to
	// their terminal state expired (gateway/runs_expire.go).
	go a.service.RunRunSweeper(runCtx)
	// Moves parked on a sub-workflow past their timeoutMs fail and the
	// sub-workflow is cancelled (gateway/waits.go).
	go a.service.RunWaitSweeper(runCtx)
	metrics.CounterFunc("praxa_runs_expired_total", "Idle proxy_default runs the run sweeper moved to the terminal state expired.",
		func() float64 { return float64(a.service.RunsExpired()) })
	metrics.RegisterQuotas(a.service)
	// The rate limits: cluster-wide on PostgreSQL, in process on SQLite.
	limiter := ratelimit.New(runCtx, a.store, log, ratelimit.ClusterOptions{Slice: cfg.Server.Limits.ClusterSlice})
	metrics.RegisterLimiter(limiter)
	a.service.SetLimiter(limiter) // capabilities.X.limits
	metrics.RegisterPins(a.service)

	direct, err := mcpadapter.NewDirectSet(mcpadapter.DirectTools(cfg.Exposed()), log)
	if err != nil {
		return fail(err)
	}
	// An MCP request's _meta.traceparent joins the request's trace (the
	// audit events, the answer's Traceparent, the log line).
	// Input requests protect their requestState with the configured keys,
	// the same on every replica (--dev: a fresh one).
	states, err := mcpadapter.RequestStateCodecFor(cfg.Server.RequestStateKeys, env.getenv, f.dev)
	if err != nil {
		return fail(err)
	}
	mcpOpts := &mcpadapter.Options{Logger: log, ToolSet: f.tools, DirectSet: direct, JoinTrace: telemetry.JoinTrace,
		RequestState: states, PublicURL: cfg.Server.PublicURL,
		CallTimeout: time.Duration(cfg.Server.Limits.RequestTimeout), MaxBodyBytes: cfg.Server.Limits.MaxBodyBytes}
	mcpHandler, err := mcpadapter.NewHTTPHandler(&mcpadapter.Local{Service: a.service, MaxDepth: cfg.Server.Limits.MaxDepth, MaxElements: cfg.Server.Limits.MaxElements, ToolSet: f.tools,
		IDs: func(ctx context.Context) (string, string) { return telemetry.RequestID(ctx), telemetry.TraceID(ctx) }},
		mcpOpts)
	if err != nil {
		return fail(err)
	}
	a.reloader = newReloader(reloaderOptions{log: log, stderr: env.stderr, service: a.service, conns: a.conns, direct: direct,
		path: path, dev: f.dev, addr: ln.Addr().String(), tls: tlsConf != nil, running: cfg, tokens: tokens})
	// proxy.import connections that could not be listed at start are
	// retried in the background (gateway/imports.go); /readyz and
	// discovery show their state.
	go a.reloader.RetryImports(runCtx)
	// SIGHUP reloads from here on, before the gateway says it listens: a
	// hangup sent as soon as it is up must reload, not end the process.
	reloadOnHangup(ctx, a.reloader, log, env.stderr) // reload.go
	// The operator console, when on (console.go).
	cons, err := newConsole(cfg, dev, a.service, verifier, log)
	if err != nil {
		return fail(err)
	}
	doc, err := openapi.Build()
	if err != nil {
		return fail(err)
	}
	openAPI, err := openapi.MarshalJSON(doc)
	if err != nil {
		return fail(err)
	}
	handler := httpapi.New(httpapi.Options{
		MCP:     mcpHandler,
		MCPTool: mcpOpts.Registers,
		OpenAPI: openAPI,
		Service: a.service, Auth: verifier, Config: cfg, Metrics: metrics, Logger: log, Limiter: limiter,
		AccessLog:   slog.New(slog.NewJSONHandler(a.access, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Revocations: revs, Issuers: issuers,
		Ready: func(ctx context.Context) error {
			_, err := a.store.RevokedSince(ctx, time.Now())
			return err
		},
		Mount: func(r chi.Router) {
			if dev != nil {
				r.Mount(devPathPrefix, dev)
			}
			if cons != nil {
				r.Handle(console.Prefix, cons)
				r.Handle(console.Prefix+"/*", cons)
			}
		},
		Reload: func(ctx context.Context, by gateway.ReloadTrigger) (any, error) { return a.reloader.Reload(ctx, by) },
	})
	timeout := time.Duration(cfg.Server.Limits.RequestTimeout)
	a.server = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       timeout,
		WriteTimeout:      timeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		TLSConfig:         tlsConf,
	}
	go func() { a.served <- serveOn(a.server, ln) }()
	log.Info("listening", "url", a.url, "data_dir", f.dataDir, "config", cfg.Source, "dev", f.dev, "workflows", len(cfg.Workflows))
	fmt.Fprintf(env.stderr, "praxa: listening on %s (data in %s)\n", a.url, f.dataDir)
	if len(issuers) == 0 {
		fmt.Fprintln(env.stderr, "praxa: no token issuer is configured: every /v8 call will answer 401 (add auth.issuers to the config, or use --dev)")
	}
	if cons != nil {
		fmt.Fprintf(env.stderr, "praxa: the operator console is at %s%s/\n", a.url, console.Prefix)
	}
	if dev != nil {
		tok, err := mintDevToken(dev, cfg, allScopes(), devTenant, 12*time.Hour)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(env.stderr, "\npraxa: development mode: tokens from %s are trusted.\n", dev.Issuer())
		fmt.Fprintf(env.stderr, "A token for tenant %q with every scope, valid 12h:\n\n  export PRAXA_TOKEN=%s\n\n", devTenant, tok)
		fmt.Fprintf(env.stderr, "Try it:\n\n  curl -s -H \"Authorization: Bearer $PRAXA_TOKEN\" -H 'Content-Type: application/json' \\\n"+
			"    -H 'Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324' \\\n"+
			"    -d '{\"intent\":\"deploy the payments service to staging\"}' %s/v8/intents\n\n", a.url)
		fmt.Fprintf(env.stderr, "More tokens: praxa token --data-dir %s --scope \"missions:read\" --tenant %s\n\n", f.dataDir, devTenant)
		fmt.Fprintf(env.stderr, "The token allows compartment %s and purpose %s; load the example context data with:\n\n"+
			"  praxa memory import examples/memory.jsonl --tenant %s --data-dir %s\n"+
			"  praxa goals import examples/goals.jsonl --tenant %s --data-dir %s\n"+
			"  praxa certificates import examples/certificates.jsonl --dev --data-dir %s\n\n",
			strings.Join(devCompartments, ","), strings.Join(devPurposes, ","), devTenant, f.dataDir, devTenant, f.dataDir, f.dataDir)
	}
	return a, nil
}

// wait serves until ctx ends, then drains in-flight requests and closes.
func (a *app) wait(ctx context.Context) error {
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-a.served:
	}
	return errors.Join(serveErr, a.close())
}

// close shuts the gateway down: no reload from here on (a reload in
// progress finishes first), then the requests in flight drain (30s at
// most), then the service, the connections and the store close.
func (a *app) close() error {
	if a.reloader != nil {
		a.reloader.Close()
	}
	a.log.Info("shutting down: draining the requests in flight")
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := a.server.Shutdown(shutdown)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	a.cancel()
	err = errors.Join(err, a.service.Close(shutdown), a.conns.Close(shutdown), a.store.Close())
	a.access.Close()
	a.log.Info("stopped")
	return err
}

func sweepIdempotency(ctx context.Context, st store.Store, log *slog.Logger) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := st.SweepIdempotency(ctx, time.Now()); err != nil {
				log.Warn("idempotency sweep failed", "err", err)
			} else if n > 0 {
				log.Info("idempotency records expired", "deleted", n)
			}
		}
	}
}

// devIssuerFile records which issuer URL and audience the dev issuer of a
// data directory uses, so praxa token mints tokens the gateway accepts.
const devIssuerFile = "issuer.json"

type devIssuerInfo struct {
	Issuer   string `json:"issuer"`
	Audience string `json:"audience"`
	// CompartmentsClaim and PurposesClaim name the claims the gateway
	// reads compartments and purposes from (auth.claims).
	CompartmentsClaim string `json:"compartmentsClaim,omitempty"`
	PurposesClaim     string `json:"purposesClaim,omitempty"`
}

func devDir(dataDir string) string { return filepath.Join(dataDir, "dev") }

// openDevIssuer loads (or creates) the dev signing key and records where the
// issuer is served.
func openDevIssuer(dataDir string, cfg *config.Config) (*issuer.Issuer, error) {
	dir := devDir(dataDir)
	is, err := issuer.LoadOrCreate(dir)
	if err != nil {
		return nil, fmt.Errorf("dev issuer: %w", err)
	}
	url := strings.TrimRight(cfg.Server.PublicURL, "/") + devPathPrefix
	is.SetIssuer(url)
	is.SetPathPrefix(devPathPrefix)
	b, _ := json.MarshalIndent(devIssuerInfo{Issuer: url, Audience: cfg.Auth.Resource,
		CompartmentsClaim: cfg.Auth.Claims.Compartments, PurposesClaim: cfg.Auth.Claims.Purposes}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, devIssuerFile), append(b, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("dev issuer: %w", err)
	}
	return is, nil
}

func mintDevToken(is *issuer.Issuer, cfg *config.Config, scopes []string, tenant string, ttl time.Duration) (string, error) {
	return is.Mint(is.Issuer(), cfg.Auth.Resource, devSubject, tenant, scopes, ttl,
		contextClaims(cfg.Auth.Claims.Compartments, cfg.Auth.Claims.Purposes, devCompartments, devPurposes))
}

func allScopes() []string {
	var out []string
	for _, s := range contracts.Scopes() {
		out = append(out, string(s))
	}
	return out
}

// readDevIssuer returns what serve --dev recorded in dataDir.
func readDevIssuer(dataDir string) (devIssuerInfo, error) {
	var info devIssuerInfo
	b, err := os.ReadFile(filepath.Join(devDir(dataDir), devIssuerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return info, fmt.Errorf("no dev issuer in %s: run praxa serve --dev --data-dir %s once first", dataDir, dataDir)
	}
	if err != nil {
		return info, err
	}
	return info, json.Unmarshal(b, &info)
}

// dataPath is the database file of a data directory.
func dataPath(dataDir string) string { return filepath.Join(dataDir, "praxa.db") }
