package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/assembly"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/mcpadapter"
)

func init() {
	register(command{name: "mcp", summary: "serve the contract's tools over MCP on stdio (local store, or --gateway URL)", run: runMCP})
}

func runMCP(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "mcp", "")
	var cf credentialFlags
	cf.register(fs)
	tools := fs.String("tools", contracts.SetAll, "tool `SET` to register: "+setNames())
	remote := fs.String("gateway", "", "act as a client of the gateway at this `URL` instead of the local store")
	metricsAddr := fs.String("metrics-addr", "", metricsAddrUsage)
	var f serveFlags
	f.registerFor(env, fs, true, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if _, ok := contracts.LookupToolSet(*tools); !ok {
		fmt.Fprintf(env.stderr, "praxa mcp: unknown tool set %q (known: %s)\n", *tools, setNames())
		return errUsage
	}
	kind, err := cf.kind(env)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The metrics listener is bound first: an address that cannot be
	// bound stops the command before anything starts.
	var metricsLn net.Listener
	if *metricsAddr != "" {
		ln, err := listen(*metricsAddr, listenSetting{name: "--metrics-addr"})
		if err != nil {
			return err
		}
		metricsLn = ln
		defer ln.Close()
	}
	// A renewed token that names another principal stops the server: it
	// never acts as anyone but the principal it was bound to at start.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var srv *mcp.Server
	var metrics *httpapi.Metrics
	if *remote != "" {
		// The gateway's own runtime sets OpenTelemetry up in assembly.Build;
		// a client of a gateway does it here: its MCP requests are spans,
		// and its calls carry their context to the gateway (Traceparent).
		export, err := telemetry.Start(ctx, telemetry.Settings{}, env.getenv, log)
		if err != nil {
			return err
		}
		defer export.Shutdown(context.WithoutCancel(ctx))
		hc := &http.Client{Timeout: 60 * time.Second, Transport: telemetry.Transport(nil)}
		target := credentialTarget{check: restclient.ClaimsCheck(cf.tenantClaim), invocation: "praxa mcp --gateway " + config.ShellQuote(*remote)}
		if kind == clientCredentials || kind == refreshToken {
			// The gateway names its issuers and the audience its tokens
			// must have (RFC 9728).
			anon, err := restclient.New(*remote, &restclient.Options{HTTPClient: hc})
			if err != nil {
				return err
			}
			meta, err := anon.ResourceMetadata(ctx)
			if err != nil {
				return fmt.Errorf("gateway %s: %w", *remote, err)
			}
			target.issuers, target.resource = meta.AuthorizationServers, meta.Resource
		}
		src, renewal, err := cf.source(ctx, env, kind, target, stop, log)
		if err != nil {
			return err
		}
		client, err := restclient.New(*remote, &restclient.Options{Token: src, HTTPClient: hc})
		if err != nil {
			return err
		}
		// Check the credential once at start: a gateway that refuses it
		// stops the server here rather than failing every call.
		resp, err := client.CallTool(ctx, contracts.ToolPraxecQuery, []byte(`{}`))
		if reason := restclient.RenewalReason(err); reason != "" {
			return fmt.Errorf("no token for gateway %s: %s", *remote, reason)
		}
		if err != nil {
			return fmt.Errorf("gateway %s: %w", *remote, err)
		}
		if resp.Status == http.StatusUnauthorized || resp.Status == http.StatusBadRequest && resp.Problem != nil && resp.Problem.Code == contracts.CodeInvalidRequest {
			detail := resp.Problem.Detail
			if reason := restclient.RenewalReason(resp.RenewErr); reason != "" {
				detail += "; renewing it failed: " + reason
			}
			return fmt.Errorf("gateway %s refuses the credential: %s", *remote, detail)
		}
		log = telemetry.Logger(log)
		opts := &mcpadapter.Options{ToolSet: *tools, Logger: log}
		if srv, err = mcpadapter.New(&mcpadapter.Remote{Client: client, Renewal: renewal}, opts); err != nil {
			return err
		}
		// Every request gets its ids, is recovered and recorded, as on a
		// gateway's own stdio server.
		metrics = httpapi.NewMetrics()
		srv.AddReceivingMiddleware(mcpadapter.Instrument(telemetry.NewRecorder(metrics.Requests(), log, opts.Registers), log))
	} else {
		gw, closeFn, err := localGateway(ctx, env, f, *tools, log)
		if err != nil {
			return err
		}
		defer closeFn()
		target := credentialTarget{check: gw.CheckToken, issuers: gw.IssuerURLs(), resource: gw.Config.Auth.Resource,
			invocation: localInvocation(f)}
		if f.dev {
			target.devDataDir = f.dataDir
		}
		src, renewal, err := cf.source(ctx, env, kind, target, stop, gw.Logger)
		if err != nil {
			return err
		}
		// The capabilities marked exposeDirectly are tools of their own, as
		// on serve's /mcp; SIGHUP reloads the configuration, those tools
		// included (the session is told the tool list changed).
		var p *auth.Principal
		if srv, p, err = gw.StdioServer(ctx, assembly.StdioCredential{Token: src, Renewal: renewal}); err != nil {
			return fmt.Errorf("%w%s", err, refusalAdvice(err, f, gw.Config, gw.IssuerURLs())) // trust.go
		}
		for _, p := range gw.Problems {
			fmt.Fprintf(env.stderr, "praxa mcp: %s\n", p)
		}
		reloadOnHangup(ctx, gw.Reloader, gw.Logger, env.stderr)
		metrics = gw.Metrics
		fmt.Fprintf(env.stderr, "praxa mcp: serving %s tools on stdio for %s (tenant %s)\n", *tools, p.Subject, p.Tenant)
	}
	if metricsLn != nil {
		defer serveMetrics(metricsLn, metrics, log)()
		fmt.Fprintf(env.stderr, "praxa mcp: metrics at http://%s/metrics\n", metricsLn.Addr())
	}
	// Requests read before stdin ends are answered before the session
	// closes (stdio_drain.go).
	drain := newStdioDrain(ctx)
	err = srv.Run(ctx, &mcp.IOTransport{Reader: drain.reader(env.stdin), Writer: drain.writer(env.stdout)})
	if cause := context.Cause(ctx); errors.Is(cause, restclient.ErrIdentityChanged) {
		return cause
	}
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

// localInvocation is the praxa mcp command line of a local store (no
// credential, and no --store: a DSN may hold a password).
func localInvocation(f serveFlags) string {
	cmd := "praxa mcp"
	if f.dev {
		cmd += " --dev"
	}
	cmd += " --data-dir " + config.ShellQuote(f.dataDir)
	if f.config != "" {
		cmd += " --config " + config.ShellQuote(f.config)
	}
	return cmd
}

// localGateway assembles the gateway of the data directory's store and
// configuration (with --dev, trusting the dev issuer serve --dev made) and
// starts its background jobs; the returned function closes it.
func localGateway(ctx context.Context, env *environment, f serveFlags, toolSet string, log *slog.Logger) (*assembly.Gateway, func(), error) {
	src := f.findConfig()
	cfg, err := src.load()
	if err != nil {
		return nil, nil, err
	}
	statics, err := localTrust(f, cfg) // trust.go
	if err != nil {
		return nil, nil, err
	}
	st, err := openAuditedStore(ctx, f, cfg, env.stderr, log)
	if err != nil {
		return nil, nil, err
	}
	gw, err := assembly.Build(ctx, cfg, st, &assembly.Options{Logger: log, StaticIssuers: statics, ToolSet: toolSet,
		// Input requests protect their requestState with the configured
		// keys (--dev: a fresh one); their approval pages are the
		// gateway's.
		Getenv: env.getenv, GenerateRequestStateKey: f.dev,
		Source: src.path, Load: func(context.Context) (*config.Config, []byte, error) { return src.read() },
		Prepare:  func(c *config.Config) { c.Defaults(f.addr) },
		Problems: func(p string) { fmt.Fprintf(env.stderr, "praxa mcp: %s\n", p) }})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	gw.Run(ctx)
	return gw, func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		gw.Close(closeCtx)
		st.Close()
	}, nil
}

// metricsAddrUsage documents praxa mcp --metrics-addr.
const metricsAddrUsage = "serve the server's Prometheus metrics at /metrics on this address (`HOST:PORT`, e.g. 127.0.0.1:9464): " +
	"the requests it serves, under route \"stdio\", and with a local store the gateway's own; default none"

// serveMetrics serves m at /metrics on ln, apart from stdio, until the
// returned function is called.
func serveMetrics(ln net.Listener, m *httpapi.Metrics, log *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	return func() { srv.Close() }
}
