// Package assembly builds the gateway every runtime of Praxa runs: praxa
// serve, praxa mcp on stdio (and the commands that act on a gateway's data,
// such as praxa approvals), and gatewaytest's gateways for tests. From a
// configuration and a store, Build makes the parts they share, one way for
// all of them: the service on the configuration's connections (connect,
// pins, discovery, skills, scripts, certificate issuers), the revocation
// list and the bearer verifier, the rate limiter, the metrics, the tools
// MCP lists directly and the reloader. Run starts the background jobs
// (revocation polling, the lease, run and wait sweepers, the idempotency
// sweep, audit retention, import retries) and Close stops them and closes
// what Build made. HTTPHandler (the REST API, /mcp, health and metrics)
// and StdioServer (MCP on stdio) are the surfaces over it.
//
// What one runtime alone has stays with it: praxa serve's listener, TLS,
// dev issuer, console, pprof and banner; gatewaytest's httptest server and
// test options.
//
// It is wiring: it imports the service, the surfaces (httpapi, mcpadapter)
// and the parts they are made of. Only cmd/praxa and gateway/gatewaytest
// import it; none of the packages it wires may (a test keeps it so).
package assembly

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/periodic"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/reload"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/mcpadapter"
)

// DefaultRevocationInterval is how often the revocation list polls the
// store for revocations made by other processes (Options.RevocationInterval).
const DefaultRevocationInterval = 2 * time.Second

// Options say what the runtime decides; everything else comes from the
// configuration. The zero value (or nil) builds a gateway that cannot
// reload its configuration.
type Options struct {
	// Logger receives the logs of every part (nil: slog.Default()); Build
	// wraps it with telemetry.Logger, so that the lines logged in a
	// request carry its ids.
	Logger *slog.Logger
	// Now is the clock of the service, the verifier and the REST edge
	// (nil: time.Now).
	Now func() time.Time
	// Service holds the service options the runtime decides (praxa serve's
	// --lexicon-writes, --enable-skills-search, --enable-scripts-search);
	// those the configuration decides are set by Build over it.
	Service gateway.Options
	// StaticIssuers are issuers trusted, with their keys, beside the
	// configuration's (the dev issuer); HTTPHandler announces them too.
	StaticIssuers []auth.StaticIssuer
	// RevocationInterval is how often the revocation list polls the store
	// (0: DefaultRevocationInterval).
	RevocationInterval time.Duration
	// ToolSet is the tool set MCP registers (empty: every tool).
	ToolSet string

	// Getenv reads the ${NAME} references of server.requestStateKeys
	// (nil: os.Getenv); GenerateRequestStateKey makes a fresh key when
	// the configuration names none (--dev). RequestState, when set, is
	// the codec instead (gatewaytest: a key its replicas share).
	Getenv                  func(string) string
	GenerateRequestStateKey bool
	// Stderr is where the capabilities' audit sinks of kind stderr write
	// (nil: os.Stderr); Getenv reads their http headers' ${NAME} too.
	Stderr       io.Writer
	RequestState *mcpadapter.RequestStateCodec

	// Load reads the configuration again for a reload (SIGHUP, POST
	// /v8/config/reload), with the bytes read (nil: a reload is refused,
	// the running configuration staying); Source names what it reads
	// ("" for the embedded configuration); Prepare completes what it read
	// as the caller completed the configuration it built with (Defaults
	// with the listener's address); Problems receives the problems of a
	// reload's connections that do not refuse it (nil: logged).
	// ImportRetryBase and ImportRetryMax bound the waits between two
	// attempts to import a proxy.import connection that could not be
	// listed (0: the Reloader's defaults).
	Load                            func(ctx context.Context) (*config.Config, []byte, error)
	Source                          string
	Prepare                         func(*config.Config)
	Problems                        func(problem string)
	ImportRetryBase, ImportRetryMax time.Duration
}

// Gateway is the assembled gateway. Its parts are exported for the
// runtimes that add to them (the console, the dev issuer, tests); Build
// makes them, and Close closes them, the store excepted.
type Gateway struct {
	// Config is the configuration the gateway started on (quarantined
	// capabilities marked); a reload replaces Reloader.Running, not it.
	Config *config.Config
	// Store is the store the gateway runs on; the caller opened it and
	// closes it after Close.
	Store store.Store
	// Logger is the log every part writes to (telemetry.Logger).
	Logger *slog.Logger
	// Service is the service layer every surface calls.
	Service *gateway.Service
	// Knowledge serves the context, skills, certificates, coverage and
	// trace reads and the context imports (registered on Service).
	Knowledge *knowledge.Knowledge
	// Auditor writes the events of reads and refusals.
	Auditor *audit.Auditor
	// AuditHooks hand the committed events of the capabilities whose
	// audit block names sinks to those sinks (the service's store is
	// wrapped with them); a reload opens and closes sinks with the
	// configuration.
	AuditHooks *audit.Hooks
	// Switch holds the connections the executors run on; a reload swaps
	// them.
	Switch *connect.Switch
	// Tokens caches the connections' upstream tokens across reloads; a
	// revocation drops what the revoked token obtained.
	Tokens *connect.Tokens
	// Problems are the connections' start-up warnings (an imported tool
	// skipped, say), one line each, for the runtime to show.
	Problems []string
	// Revocations is the store-backed revocation list.
	Revocations *gateway.Revocations
	// Verifier verifies bearer tokens.
	Verifier *auth.Verifier
	// Limiter enforces the rate limits (ratelimit.New: cluster-wide on
	// PostgreSQL).
	Limiter ratelimit.Limiter
	// Metrics are the metrics /metrics serves (and praxa mcp
	// --metrics-addr).
	Metrics *httpapi.Metrics
	// Direct holds the tools MCP lists directly (the capabilities marked
	// exposeDirectly); a reload replaces them.
	Direct *mcpadapter.DirectSet
	// Reloader reloads the configuration (SIGHUP, POST /v8/config/reload).
	Reloader *reload.Reloader
	// Telemetry is the OpenTelemetry export (spans and metrics over OTLP),
	// nil when off; Close flushes it.
	Telemetry *telemetry.Export

	opts Options
	// serviceStore is the store the service runs on: Store with the
	// audit hooks.
	serviceStore store.Store
	// jobs ends at Close: the limiter and the background jobs run on it.
	jobs      context.Context
	stopJobs  context.CancelFunc
	running   sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
	// requestState is the input requests' codec, made once.
	requestState func() (*mcpadapter.RequestStateCodec, error)
}

// Build assembles the gateway cfg describes on st. cfg must be complete
// (Defaults applied, as the runtime prepares it); Build marks its
// quarantined capabilities. Nothing runs in the background until Run. On
// an error, what Build made is closed again.
func Build(ctx context.Context, cfg *config.Config, st store.Store, opts *Options) (_ *Gateway, err error) {
	g := &Gateway{Config: cfg, Store: st}
	if opts != nil {
		g.opts = *opts
	}
	o := &g.opts
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ToolSet == "" {
		o.ToolSet = contracts.SetAll
	}
	if o.RevocationInterval <= 0 {
		o.RevocationInterval = DefaultRevocationInterval
	}
	log := telemetry.Logger(o.Logger)
	g.Logger = log
	g.jobs, g.stopJobs = context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		if err != nil {
			g.undo()
		}
	}()
	if g.Telemetry, err = startTelemetry(ctx, cfg.Telemetry, o.Getenv, log); err != nil {
		return nil, err
	}

	if err := g.buildService(ctx); err != nil {
		return nil, err
	}
	var verifier atomic.Pointer[auth.Verifier]
	g.Revocations, err = gateway.NewRevocations(ctx, st, o.RevocationInterval, func(jti string) {
		if v := verifier.Load(); v != nil {
			v.Forget(jti)
		}
		// The upstream tokens obtained with a revoked token go too.
		g.Tokens.Forget(jti)
	}, log)
	if err != nil {
		return nil, err
	}
	g.Verifier, err = auth.NewVerifier(ctx, cfg.Auth, &auth.Options{Revocations: g.Revocations, StaticIssuers: o.StaticIssuers, Now: o.Now})
	if err != nil {
		return nil, err
	}
	verifier.Store(g.Verifier)
	g.Tokens.SetRevocations(g.Revocations)
	// The rate limits: cluster-wide on PostgreSQL, in process on SQLite.
	g.Limiter = ratelimit.New(g.jobs, st, log, ratelimit.ClusterOptions{Slice: cfg.Server.Limits.ClusterSlice})
	g.Service.SetLimiter(g.Limiter) // capabilities.X.limits
	g.Metrics = g.metrics()
	if g.Direct, err = mcpadapter.NewDirectSet(mcpadapter.DirectTools(cfg.Exposed()), log); err != nil {
		return nil, err
	}
	g.Reloader = g.reloader()
	g.requestState = sync.OnceValues(func() (*mcpadapter.RequestStateCodec, error) {
		if o.RequestState != nil {
			return o.RequestState, nil
		}
		return mcpadapter.RequestStateCodecFor(cfg.Server.RequestStateKeys, o.Getenv, o.GenerateRequestStateKey)
	})
	return g, nil
}

// buildService builds the service on the configuration's connections: its
// workflows (proxy_default included), the imported definitions checked
// against their pins, the discovery index, skills, scripts and certificate
// issuers, and the options the configuration decides.
func (g *Gateway) buildService(ctx context.Context) error {
	cfg, o, log := g.Config, &g.opts, g.Logger
	g.Tokens = connect.NewTokens(nil)
	changes := pins.NewToolListChanges()
	conns, workflows, problems, err := connect.Setup(ctx, cfg, &connect.Options{Logger: log, Tokens: g.Tokens, ToolsChanged: changes.Notify})
	if err != nil {
		return err
	}
	g.Switch, g.Problems = connect.NewSwitch(conns), problems
	// The imported definitions are checked against their pins before
	// anything is built from them (gateway/pins).
	quarantines, err := pins.Check(ctx, g.Store, cfg.Exposed(), o.Now(), log)
	if err != nil {
		return err
	}
	cfg.SetQuarantined(quarantines.IDs())
	index, err := discovery.Build(workflows, cfg)
	if err != nil {
		return err
	}
	skillCatalog, err := loadSkills(cfg)
	if err != nil {
		return err
	}
	certIssuers, err := knowledge.CertificateIssuers(cfg.Certificates)
	if err != nil {
		return err
	}
	scriptCatalog, err := scripts.FromConfig(cfg)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings() {
		log.Warn("configuration: " + w)
	}
	// The capabilities' audit sinks see every event the service commits.
	g.AuditHooks, err = audit.NewHooks(cfg, &audit.HooksOptions{Logger: log, Stderr: o.Stderr, Getenv: o.Getenv})
	if err != nil {
		return err
	}
	st := audit.WithHooks(g.Store, g.AuditHooks)
	g.serviceStore = st
	g.Auditor = audit.NewAuditor(st, &audit.Options{Logger: log, Now: o.Now})
	so := o.Service
	so.Logger, so.Now, so.Auditor = log, o.Now, g.Auditor
	so.Workflows, so.Discovery, so.Runners = workflows, index, g.Switch.Runners()
	so.Policy, so.Lexicon = cfg.Policy, cfg.Lexicon
	so.Retention, so.LeaseTTL = time.Duration(cfg.Server.Idempotency.Retention), cfg.LeaseTTL()
	so.TombstoneRetention = time.Duration(cfg.Server.Idempotency.TombstoneRetention)
	so.RunRetention = cfg.RunRetention()
	so.Quotas = cfg.Server.Quotas
	so.Quarantines, so.ToolListChanges = quarantines, changes
	so.Skills, so.Scripts = skillCatalog, scriptCatalog
	g.Service = gateway.New(st, &so)
	// The feature packages run on the same store, audit hooks included.
	g.Knowledge = knowledge.New(st, &knowledge.Options{Now: o.Now, Logger: log, Skills: skillCatalog,
		CertificateIssuers: certIssuers, Quota: g.Service})
	g.Service.Register(g.Knowledge.Operations()...)
	return nil
}

// loadSkills loads the skills a configuration names; a configuration read
// from no file (the embedded example, or one a test parsed) finds them
// among the embedded examples.
func loadSkills(cfg *config.Config) (*skills.Catalog, error) {
	return skills.FromConfig(cfg, examples.FS, examples.Root)
}

// errNoReload refuses a reload of a gateway built without Options.Load.
var errNoReload = errors.New("this gateway has no configuration source to read again")

// reloader is the Reloader of the gateway: it reads the configuration with
// Options.Load and swaps in its connections, workflows, discovery index,
// lexicon, policy, skills, certificate issuers and the tools MCP lists
// directly at once. Auth and server settings keep their values from the
// start.
func (g *Gateway) reloader() *reload.Reloader {
	o := &g.opts
	load := o.Load
	if load == nil {
		load = func(context.Context) (*config.Config, []byte, error) { return nil, nil, errNoReload }
	}
	return &reload.Reloader{
		Service: g.Service, Store: g.serviceStore, Now: o.Now, Logger: g.Logger,
		Features: []op.Reloadable{g.Knowledge},
		Switch:   g.Switch, Source: o.Source,
		Load: load, Prepare: o.Prepare,
		Connect: &connect.Options{Logger: g.Logger, Tokens: g.Tokens},
		Skills:  loadSkills,
		Stage: func(cfg *config.Config) (func(), error) {
			direct, err := g.Direct.Stage(mcpadapter.DirectTools(cfg.Exposed()))
			if err != nil {
				return nil, err
			}
			// Last: the sinks it opens are kept only by its apply.
			hooks, err := g.AuditHooks.Stage(cfg)
			if err != nil {
				return nil, err
			}
			return func() { direct(); hooks() }, nil
		},
		Problems: o.Problems, Running: g.Config,
		ImportRetryBase: o.ImportRetryBase, ImportRetryMax: o.ImportRetryMax,
	}
}

// metrics registers the gateway's metrics: the HTTP edge's and the
// request metrics (httpapi.NewMetrics), and the service's own counters.
func (g *Gateway) metrics() *httpapi.Metrics {
	m, svc := httpapi.NewMetrics(), g.Service
	m.CounterFunc("praxa_audit_queue_waits_total", "Audit events that waited for room in the asynchronous audit queue.",
		func() float64 { return float64(svc.AuditWaits()) })
	m.CounterFunc("praxa_leases_swept_total", "Expired move and start leases the lease sweeper resolved as outcome-unknown.",
		func() float64 { return float64(svc.LeasesSwept()) })
	m.CounterFunc("praxa_runs_expired_total", "Idle proxy_default runs the run sweeper moved to the terminal state expired.",
		func() float64 { return float64(svc.RunsExpired()) })
	m.RegisterQuotas(svc)
	m.RegisterLimiter(g.Limiter)
	m.RegisterPins(svc)
	m.RegisterAuditHooks(g.AuditHooks)
	return m
}

// Run starts the background jobs on ctx and returns: revocation polling,
// the retries of proxy.import connections that could not be listed at
// start, and the periodic jobs (periodic.Run each): the idempotency sweep,
// audit retention (audit.retention), and the service's lease, run and wait
// sweepers (gateway.Service.Jobs). They stop when ctx ends or at Close,
// which waits for them. Call it once.
func (g *Gateway) Run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(g.jobs, cancel)
	log := g.Logger
	for _, job := range []func(context.Context){
		g.Revocations.Run,
		// proxy.import connections that could not be listed at start
		// are retried (gateway/imports.go); /readyz and discovery show
		// their state.
		g.Reloader.RetryImports,
	} {
		g.running.Go(func() { job(ctx) })
	}
	jobs := append([]periodic.Job{idempotencySweep(g.Store)}, g.Service.Jobs()...)
	// audit.retention: events older than it go (gateway/audit/export.go).
	if j, ok := audit.RetentionJob(g.Store, time.Duration(g.Config.Audit.Retention)); ok {
		jobs = append(jobs, j)
	}
	for _, j := range jobs {
		g.running.Go(func() { periodic.Run(ctx, log, j) })
	}
}

// sweepIdempotencyEvery is how often expired idempotency records are
// swept.
const sweepIdempotencyEvery = 10 * time.Minute

// idempotencySweep turns the idempotency records past their retention into
// tombstones and deletes the tombstones past theirs, every
// sweepIdempotencyEvery.
func idempotencySweep(st store.Store) periodic.Job {
	return periodic.Job{Name: "idempotency sweep", Every: periodic.Fixed(sweepIdempotencyEvery),
		Done: "idempotency records expired", DoneKey: "deleted",
		Round: func(ctx context.Context) (int, bool, error) {
			n, err := st.SweepIdempotency(ctx, time.Now())
			return n, false, err
		}}
}

// Close ends the gateway: no reload from here on (a reload in progress
// finishes first), the background jobs stop, then the service (the moves
// outliving their requests finish, the audit queue is written) and the
// connections close, within ctx. The store is the caller's to close
// after. Calls after the first return the first's error.
func (g *Gateway) Close(ctx context.Context) error {
	g.closeOnce.Do(func() {
		g.Reloader.Close()
		g.stopJobs()
		g.running.Wait()
		// The service's last events reach the audit sinks before they close.
		g.closeErr = errors.Join(g.Service.Close(ctx), g.AuditHooks.Close(ctx), g.Switch.Close(ctx))
		// The last spans leave after the last moves they record; a
		// receiver that cannot take them is logged, not a failure to close.
		if err := g.Telemetry.Shutdown(ctx); err != nil {
			g.Logger.Warn("telemetry: the last spans and metrics were not exported", "err", err)
		}
	})
	return g.closeErr
}

// undo closes what a failed Build made.
func (g *Gateway) undo() {
	g.stopJobs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer g.Telemetry.Shutdown(ctx)
	if g.Service != nil {
		if err := g.Service.Close(ctx); err != nil {
			g.Logger.Warn("closing the service of a gateway that did not start", "err", err)
		}
	}
	if g.AuditHooks != nil {
		if err := g.AuditHooks.Close(ctx); err != nil {
			g.Logger.Warn("closing the audit sinks of a gateway that did not start", "err", err)
		}
	}
	if g.Switch != nil {
		if err := g.Switch.Close(ctx); err != nil {
			g.Logger.Warn("closing the connections of a gateway that did not start", "err", err)
		}
	}
}

// IssuerURLs are the issuers the gateway trusts: the configuration's, then
// the static ones (the dev issuer). HTTPHandler announces them as
// authorization servers.
func (g *Gateway) IssuerURLs() []string {
	out := make([]string, 0, len(g.Config.Auth.Issuers)+len(g.opts.StaticIssuers))
	for _, is := range g.Config.Auth.Issuers {
		out = append(out, is.Issuer)
	}
	for _, is := range g.opts.StaticIssuers {
		out = append(out, is.Issuer)
	}
	return out
}

// startTelemetry starts the OpenTelemetry export the configuration's
// telemetry block and the OTEL_* variables (getenv, nil: os.Getenv) say
// (telemetry.Start): nil when off.
func startTelemetry(ctx context.Context, c config.Telemetry, getenv func(string) string, log *slog.Logger) (*telemetry.Export, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	e, err := telemetry.Start(ctx, telemetry.Settings{Endpoint: c.Endpoint, Protocol: c.Protocol, SampleRatio: c.SampleRatio,
		ServiceName: c.ServiceName, Disabled: c.Disabled, MetricInterval: c.MetricInterval.Std()}, getenv, log)
	if err != nil {
		return nil, err
	}
	if e != nil {
		log.Info("telemetry: exporting spans and metrics over OTLP", "protocol", e.Resolved.Protocol,
			"sample_ratio", e.Resolved.SampleRatio, "service_name", e.Resolved.ServiceName)
	}
	return e, nil
}
