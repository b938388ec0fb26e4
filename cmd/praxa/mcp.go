package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/httpapi"
	"github.com/praxa/praxa/gateway/restclient"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/issuer"
	"github.com/praxa/praxa/mcpadapter"
)

func init() {
	register(command{name: "mcp", summary: "serve the contract's tools over MCP on stdio (local store, or --gateway URL)", run: runMCP})
}

func runMCP(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "mcp", "[--token TOKEN] [--tools SET] [--gateway URL | --data-dir DIR [--config FILE] [--dev]]")
	token := fs.String("token", "", "access token the server acts with (default $PRAXA_TOKEN)")
	tools := fs.String("tools", contracts.SetAll, "tool set to register: "+setNames())
	remote := fs.String("gateway", "", "act as a client of the gateway at this URL instead of the local store")
	var f serveFlags
	f.registerFor(env, fs, true, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if _, ok := contracts.LookupToolSet(*tools); !ok {
		fmt.Fprintf(env.stderr, "praxa mcp: unknown tool set %q (known: %s)\n", *tools, setNames())
		return errUsage
	}
	tok := *token
	if tok == "" {
		tok = env.getenv("PRAXA_TOKEN")
	}
	if tok == "" {
		return errors.New("no credential: pass --token or set PRAXA_TOKEN (the MCP server never runs anonymously)")
	}
	log := telemetry.Logger(slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	var backend mcpadapter.Backend
	var allowed func(context.Context, string) bool
	var direct *mcpadapter.DirectSet
	// localBackend sets the requestState keys and the public URL of the
	// input requests (a remote gateway's backend asks for none).
	var mcpOpts mcpadapter.Options
	if *remote != "" {
		client, err := restclient.New(*remote, &restclient.Options{Token: restclient.StaticToken(tok),
			HTTPClient: &http.Client{Timeout: 60 * time.Second}})
		if err != nil {
			return err
		}
		// Check the credential once at start: a gateway that refuses it
		// stops the server here rather than failing every call.
		resp, err := client.CallTool(ctx, contracts.ToolPraxecQuery, []byte(`{}`))
		if err != nil {
			return fmt.Errorf("gateway %s: %w", *remote, err)
		}
		if resp.Status == http.StatusUnauthorized || resp.Status == http.StatusBadRequest && resp.Problem != nil && resp.Problem.Code == contracts.CodeInvalidRequest {
			return fmt.Errorf("gateway %s refuses the credential: %s", *remote, resp.Problem.Detail)
		}
		backend = &mcpadapter.Remote{Client: client}
	} else {
		local, directTools, reloader, closeFn, err := localBackend(ctx, env, f, tok, *tools, log, &mcpOpts)
		if err != nil {
			return err
		}
		defer closeFn()
		backend = local
		// The capabilities marked exposeDirectly are tools of their own, as
		// on serve's /mcp; SIGHUP reloads the configuration, those tools
		// included (the session is told the tool list changed).
		direct = directTools
		reloadOnHangup(ctx, reloader, log, env.stderr)
		allowed = func(ctx context.Context, tool string) bool {
			p, err := local.Bind(ctx)
			return err == nil && p.AllowsTool(tool)
		}
	}
	mcpOpts.ToolSet, mcpOpts.Logger, mcpOpts.Allowed, mcpOpts.DirectSet, mcpOpts.ToolListChanged = *tools, log, allowed, direct, direct != nil
	mcpOpts.JoinTrace = telemetry.JoinTrace
	srv, err := mcpadapter.New(backend, &mcpOpts)
	if err != nil {
		return err
	}
	// Every request gets its ids, is recovered and recorded, as over HTTP.
	rec := telemetry.NewRecorder(httpapi.NewMetrics().Requests(), log, mcpOpts.Registers)
	srv.AddReceivingMiddleware(mcpadapter.Instrument(rec, log))
	// Requests read before stdin ends are answered before the session
	// closes (stdio_drain.go).
	drain := newStdioDrain(ctx)
	err = srv.Run(ctx, &mcp.IOTransport{Reader: drain.reader(env.stdin), Writer: drain.writer(env.stdout)})
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

// localBackend opens the data directory's store and binds every call to the
// principal of tok, verified like any bearer token.
//
// It also returns the capabilities marked exposeDirectly (proxy.import's
// included), which the server lists as tools of their own, and the
// Reloader that reads the configuration again (SIGHUP).
func localBackend(ctx context.Context, env *environment, f serveFlags, tok, toolSet string, log *slog.Logger, opts *mcpadapter.Options) (*mcpadapter.Local, *mcpadapter.DirectSet, *gateway.Reloader, func(), error) {
	fail := func(err error) (*mcpadapter.Local, *mcpadapter.DirectSet, *gateway.Reloader, func(), error) {
		return nil, nil, nil, nil, err
	}
	path := configPath(f.config)
	cfg, err := readConfig(path, f.dev)
	if err != nil {
		return fail(err)
	}
	cfg.Defaults(f.addr)
	var statics []auth.StaticIssuer
	if f.dev {
		info, err := readDevIssuer(f.dataDir)
		if err != nil {
			return fail(err)
		}
		is, err := issuer.LoadOrCreate(devDir(f.dataDir))
		if err != nil {
			return fail(err)
		}
		keys := []auth.StaticKey{}
		for _, k := range is.PublicKeys() {
			keys = append(keys, auth.StaticKey{KeyID: k.KeyID, Algorithm: k.Algorithm, Key: k.Key})
		}
		statics = append(statics, auth.StaticIssuer{Issuer: info.Issuer, Keys: keys})
		cfg.Auth.Resource = info.Audience
	}
	st, err := openAuditedStore(ctx, f, cfg, env.stderr, log)
	if err != nil {
		return fail(err)
	}
	revs, err := gateway.NewRevocations(ctx, st, 2*time.Second, nil, log)
	if err != nil {
		st.Close()
		return fail(err)
	}
	verifier, err := auth.NewVerifier(ctx, cfg.Auth, &auth.Options{Revocations: revs, StaticIssuers: statics})
	if err != nil {
		st.Close()
		return fail(err)
	}
	p, err := verifier.Verify(ctx, tok)
	if err != nil {
		st.Close()
		return fail(fmt.Errorf("the credential is not accepted: %w", err))
	}
	built, err := buildService(ctx, cfg, st, log, gateway.Options{})
	if err != nil {
		st.Close()
		return fail(err)
	}
	svc, conns := built.service, built.conns
	built.tokens.SetRevocations(revs)
	for _, p := range built.problems {
		fmt.Fprintf(env.stderr, "praxa mcp: %s\n", p)
	}
	// Input requests protect their requestState with the configured keys
	// (--dev: a fresh one); their approval pages are the gateway's.
	opts.RequestState, err = mcpadapter.RequestStateCodecFor(cfg.Server.RequestStateKeys, env.getenv, f.dev)
	if err != nil {
		svc.Close(ctx)
		conns.Close(ctx)
		st.Close()
		return fail(err)
	}
	opts.PublicURL = cfg.Server.PublicURL
	direct, err := mcpadapter.NewDirectSet(mcpadapter.DirectTools(cfg.Exposed()), log)
	if err != nil {
		svc.Close(ctx)
		conns.Close(ctx)
		st.Close()
		return fail(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	go revs.Run(runCtx)
	fmt.Fprintf(env.stderr, "praxa mcp: serving %s tools on stdio for %s (tenant %s)\n", toolSet, p.Subject, p.Tenant)
	bind := func(ctx context.Context) (*auth.Principal, error) { return verifier.Verify(ctx, tok) }
	local := &mcpadapter.Local{Service: svc, Bind: bind, Credential: auth.NewCredential(tok, p), MaxDepth: cfg.Server.Limits.MaxDepth, MaxElements: cfg.Server.Limits.MaxElements, ToolSet: toolSet,
		IDs: func(ctx context.Context) (string, string) { return telemetry.RequestID(ctx), telemetry.TraceID(ctx) }}
	reloader := newReloader(reloaderOptions{log: log, stderr: env.stderr, service: svc, conns: conns, direct: direct,
		path: path, dev: f.dev, addr: f.addr, running: cfg, tokens: built.tokens})
	go reloader.RetryImports(runCtx)
	return local, direct, reloader, func() {
		// No reload swaps into what closes below (a SIGHUP reload in
		// progress finishes first).
		reloader.Close()
		cancel()
		closeCtx, closeCancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer closeCancel()
		svc.Close(closeCtx)
		conns.Close(closeCtx)
		st.Close()
	}, nil
}
