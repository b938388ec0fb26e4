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
	"github.com/praxa/praxa/gateway/assembly"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/issuer"
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

func (f *serveFlags) register(env *environment, fs flagDefiner, withDev bool) {
	f.registerFor(env, fs, withDev, true)
}

// registerFor registers the flags of a command that works on a gateway's
// store and configuration without serving (mcp on stdio, approvals, the
// imports) when listens is false: -addr and -dev then describe what they
// mean there.
func (f *serveFlags) registerFor(env *environment, fs flagDefiner, withDev, listens bool) {
	addr := "listen address `HOST:PORT` (default 127.0.0.1:8080, or server.addr of the config)"
	dev := "development mode: trust a built-in token issuer and print a ready token"
	if !listens {
		addr = "the address `HOST:PORT` praxa serve listens on, which names its public URL and so the dev issuer's audience (default 127.0.0.1:8080, or server.addr of the config)"
		dev = "development mode: trust the built-in token issuer of the data directory (the one praxa serve --dev made) and, without --config, load the example workflows serve --dev runs"
	}
	fs.StringVar(&f.addr, "addr", "", addr)
	fs.StringVar(&f.dataDir, "data-dir", defaultDataDir(env), "directory of the gateway's state (also PRAXA_DATA_DIR)")
	storeVar(fs, &f.store, env, storeUsage)
	fs.StringVar(&f.config, "config", env.getenv(configEnv), "configuration `FILE` (default $"+configEnv+", else ./praxec.yaml when it exists; with --dev and none, the embedded examples/praxec.yaml)")
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

func runServe(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "serve", "")
	var f serveFlags
	f.register(env, fs, true)
	fs.StringVar(&f.tools, "tools", contracts.SetAll, "tool `SET` /mcp registers: "+setNames())
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
	access *bufferedLog
	cfg    *config.Config
	store  store.Store
	// gw is the assembled gateway (gateway/assembly): the service, its
	// connections and background jobs, the reloader (SIGHUP and POST
	// /v8/config/reload).
	gw       *assembly.Gateway
	server   *http.Server
	listener net.Listener
	cancel   context.CancelFunc
	served   chan error
	url      string
}

// startGateway opens the store, assembles the gateway and starts serving.
// It returns once the listener is bound.
func startGateway(ctx context.Context, env *environment, f serveFlags) (*app, error) {
	// Every writer of the gateway's stderr (the log, the access log's
	// flusher, direct prints) takes one lock, so that lines never
	// interleave whatever the underlying writer is.
	locked := *env
	locked.stderr = &syncWriter{w: env.stderr}
	env = &locked
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	src := f.findConfig() // configfile.go
	cfg, err := src.load()
	if err != nil {
		return nil, err
	}
	addr, setting := listenAddr(f.addr, cfg) // tls.go
	tlsConf, err := serverTLS(f, log)
	if err != nil {
		return nil, err
	}
	ln, err := listen(addr, setting) // listen.go
	if err != nil {
		return nil, err
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
		if a.gw != nil {
			a.gw.Close(context.Background())
		}
		if a.store != nil {
			a.store.Close()
		}
		return nil, err
	}
	if a.store, err = openAuditedStore(ctx, f, cfg, env.stderr, log); err != nil {
		return fail(err)
	}
	var dev *issuer.Issuer
	var statics []auth.StaticIssuer
	if f.dev {
		if dev, err = openDevIssuer(f.dataDir, cfg); err != nil {
			return fail(err)
		}
		statics = append(statics, devStaticIssuer(dev.Issuer(), dev))
	}
	a.gw, err = assembly.Build(ctx, cfg, a.store, &assembly.Options{Logger: log, StaticIssuers: statics, ToolSet: f.tools,
		Service: gateway.Options{LexiconWrites: f.lexiconWrites, SkillsSearch: f.skillsSearch, ScriptsSearch: f.scriptsSearch},
		// Input requests protect their requestState with the configured
		// keys, the same on every replica (--dev: a fresh one).
		Getenv: env.getenv, GenerateRequestStateKey: f.dev, Stderr: env.stderr,
		Source: src.path, Load: func(context.Context) (*config.Config, []byte, error) { return src.read() },
		Prepare:  func(c *config.Config) { completeConfig(c, ln.Addr().String(), tlsConf != nil) },
		Problems: func(p string) { fmt.Fprintf(env.stderr, "praxa: %s\n", p) }})
	if err != nil {
		return fail(err)
	}
	log = a.gw.Logger
	for _, p := range a.gw.Problems {
		fmt.Fprintf(env.stderr, "praxa: %s\n", p)
	}
	// The background jobs run until close, through the drain.
	a.gw.Run(runCtx)
	// SIGHUP reloads from here on, before the gateway says it listens: a
	// hangup sent as soon as it is up must reload, not end the process.
	reloadOnHangup(ctx, a.gw.Reloader, log, env.stderr) // reload.go
	// The operator console, when on (console.go).
	cons, err := newConsole(cfg, dev, a.gw.Service, a.gw.Auditor, a.gw.Verifier, log)
	if err != nil {
		return fail(err)
	}
	handler, err := a.gw.HTTPHandler(&assembly.HTTPOptions{
		AccessLog: slog.New(slog.NewJSONHandler(a.access, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Mount: func(r chi.Router) {
			if dev != nil {
				r.Mount(devPathPrefix, dev)
			}
			if cons != nil {
				r.Handle(console.Prefix, cons)
				r.Handle(console.Prefix+"/*", cons)
			}
		},
	})
	if err != nil {
		return fail(err)
	}
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
	if len(a.gw.IssuerURLs()) == 0 {
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
		fmt.Fprintf(env.stderr, "An MCP host runs (the server renews its own token; docs/mcp-hosts-credentials.md):\n\n  %s --token-command %s\n\n",
			localInvocation(f), config.ShellQuote(devTokenCommand(f.dataDir)))
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
// most), then the gateway (its jobs, service and connections) and the
// store close.
func (a *app) close() error {
	a.gw.Reloader.Close()
	a.log.Info("shutting down: draining the requests in flight")
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := a.server.Shutdown(shutdown)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	a.cancel()
	err = errors.Join(err, a.gw.Close(shutdown), a.store.Close())
	a.access.Close()
	a.log.Info("stopped")
	return err
}

// devStaticIssuer is the dev issuer trusted with its keys under the issuer
// URL iss.
func devStaticIssuer(iss string, dev *issuer.Issuer) auth.StaticIssuer {
	keys := []auth.StaticKey{}
	for _, k := range dev.PublicKeys() {
		keys = append(keys, auth.StaticKey{KeyID: k.KeyID, Algorithm: k.Algorithm, Key: k.Key})
	}
	return auth.StaticIssuer{Issuer: iss, Keys: keys}
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

// loadDevIssuer returns what serve --dev recorded in dataDir (readDevIssuer)
// and the issuer it keeps there, for the commands that mint its tokens.
func loadDevIssuer(dataDir string) (devIssuerInfo, *issuer.Issuer, error) {
	info, err := readDevIssuer(dataDir)
	if err != nil {
		return info, nil, err
	}
	is, err := issuer.LoadOrCreate(devDir(dataDir))
	return info, is, err
}

// dataPath is the database file of a data directory.
func dataPath(dataDir string) string { return filepath.Join(dataDir, "praxa.db") }
