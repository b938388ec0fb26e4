package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/store"
)

// builtService is the service a configuration describes, with the
// connections its executors run on.
type builtService struct {
	service *gateway.Service
	conns   *connect.Switch
	// problems are the connections' start-up warnings (an imported tool
	// skipped, say), one line each.
	problems []string
	// tokens caches the connections' upstream tokens, across reloads;
	// the caller hands it the revocation list.
	tokens *connect.Tokens
}

// buildService builds, from cfg, the service serve, mcp and approvals run
// on: its connections and workflows (proxy_default included), the
// discovery index, skills, scripts and certificate issuers, and the options every
// one of them takes from the configuration (policy, lexicon, retention,
// lease TTL, run retention). extra carries what only the caller decides
// (flags); the members buildService sets are overwritten. The caller
// closes the service, then the connections.
func buildService(ctx context.Context, cfg *config.Config, st store.Store, log *slog.Logger, extra gateway.Options) (*builtService, error) {
	tokens := connect.NewTokens(nil)
	changes := gateway.NewToolListChanges()
	conns, workflows, problems, err := connect.Setup(ctx, cfg, &connect.Options{Logger: log, Tokens: tokens, ToolsChanged: changes.Notify})
	if err != nil {
		return nil, err
	}
	sw := connect.NewSwitch(conns)
	// The imported definitions are checked against their pins before
	// anything is built from them (gateway/pins.go).
	quarantines, err := gateway.CheckPins(ctx, st, cfg.Exposed(), time.Now(), log)
	if err != nil {
		sw.Close(ctx)
		return nil, err
	}
	cfg.SetQuarantined(quarantines.IDs())
	index, err := discovery.Build(workflows, cfg)
	if err != nil {
		sw.Close(ctx)
		return nil, err
	}
	skillCatalog, certIssuers, err := contextOptions(cfg)
	if err != nil {
		sw.Close(ctx)
		return nil, err
	}
	scriptCatalog, err := scripts.FromConfig(cfg)
	if err != nil {
		sw.Close(ctx)
		return nil, err
	}
	for _, w := range cfg.Warnings() {
		log.Warn("configuration: " + w)
	}
	o := extra
	o.Logger = log
	o.Workflows, o.Discovery, o.Runners = workflows, index, sw.Runners()
	o.Policy, o.Lexicon = cfg.Policy, cfg.Lexicon
	o.Retention, o.LeaseTTL = time.Duration(cfg.Server.Idempotency.Retention), cfg.LeaseTTL()
	o.RunRetention = cfg.RunRetention()
	o.Quotas = cfg.Server.Quotas
	o.Quarantines, o.ToolListChanges = quarantines, changes
	o.Skills, o.Scripts, o.CertificateIssuers = skillCatalog, scriptCatalog, certIssuers
	return &builtService{service: gateway.New(st, &o), conns: sw, problems: problems, tokens: tokens}, nil
}
