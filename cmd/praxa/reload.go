package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/mcpadapter"
)

// This file reloads the configuration of a running gateway: on SIGHUP and
// through POST /v8/config/reload (serve), on SIGHUP (mcp on a local
// store). gateway.Reloader does the work and audits every attempt.

// configPath is the file serve reads its configuration from: path, else
// ./praxec.yaml when it exists, else "" (the embedded configuration).
func configPath(path string) string {
	if path == "" {
		if _, err := os.Stat("praxec.yaml"); err == nil {
			path = "praxec.yaml"
		}
	}
	return path
}

// readConfigData is readConfig with the bytes read, for a reload's
// digest: the file's, the embedded example's, or none for the defaults.
func readConfigData(path string, dev bool) (*config.Config, []byte, error) {
	switch {
	case path != "":
		return config.LoadData(path)
	case dev:
		cfg, err := config.Parse(examples.PraxecYAMLName, examples.PraxecYAML)
		return cfg, examples.PraxecYAML, err
	default:
		return config.Default(), nil, nil
	}
}

// reloaderOptions say what a reload reads and swaps.
type reloaderOptions struct {
	log     *slog.Logger
	stderr  io.Writer
	service *gateway.Service
	conns   *connect.Switch
	direct  *mcpadapter.DirectSet
	// path and dev say where the configuration is read from (path empty:
	// the embedded one with dev, else the defaults); addr is what
	// Defaults completes it with, as at start.
	path string
	dev  bool
	addr string
	// tls: the gateway terminates TLS (its default public URL is https).
	tls bool
	// running is the configuration the gateway started on (prepared):
	// the import retry imports it again.
	running *config.Config
	// tokens is the upstream token cache the reloaded connections share.
	tokens *connect.Tokens
}

// newReloader returns the Reloader of a running gateway: it reads the
// configuration again from the file it started with (--config, or
// ./praxec.yaml as found at start; with --dev and no file, the embedded
// example, so a reload changes nothing) and swaps in its connections,
// workflows, discovery index, lexicon, policy, skills, certificate issuers
// and the directly exposed MCP tools at once. Auth and server settings
// keep their values from the start. The caller runs its RetryImports, so
// that a proxy.import connection that could not be listed at start is
// retried in the background.
func newReloader(o reloaderOptions) *gateway.Reloader {
	return &gateway.Reloader{
		Service: o.service, Switch: o.conns, Source: o.path,
		Load:    func(context.Context) (*config.Config, []byte, error) { return readConfigData(o.path, o.dev) },
		Prepare: func(cfg *config.Config) { completeConfig(cfg, o.addr, o.tls) },
		Connect: &connect.Options{Logger: o.log, Tokens: o.tokens},
		Skills: func(cfg *config.Config) (*skills.Catalog, error) {
			return skills.FromConfig(cfg, examples.FS, examples.Root)
		},
		Stage: func(cfg *config.Config) (func(), error) {
			return o.direct.Stage(mcpadapter.DirectTools(cfg.Exposed()))
		},
		Problems: func(p string) { fmt.Fprintf(o.stderr, "praxa: %s\n", p) },
		Running:  o.running,
	}
}

// reloadOnHangup reloads the configuration on every SIGHUP until ctx ends,
// logging the outcome to log and stderr; a refused file leaves the running
// configuration. SIGHUP then stays caught until the process exits, each
// one logged and ignored: its default action would end the process in the
// middle of the shutdown's drain. A reload racing the shutdown is the
// Reloader's to refuse (the caller closes it first when it shuts down).
func reloadOnHangup(ctx context.Context, r *gateway.Reloader, log *slog.Logger, stderr io.Writer) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ignore := func() {
		log.Warn("SIGHUP ignored: the gateway is shutting down")
		fmt.Fprintln(stderr, "praxa: SIGHUP ignored: the gateway is shutting down")
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				// Never signal.Stop: SIGHUP stays caught until exit.
				for range hup {
					ignore()
				}
				return
			case <-hup:
				if ctx.Err() != nil {
					ignore()
					continue
				}
				trace := ids.Trace()
				res, err := r.Reload(ctx, gateway.ReloadTrigger{Via: gateway.ReloadViaSignal, TraceID: trace})
				if err != nil {
					log.Error("SIGHUP: configuration reload refused; the running configuration stays", "err", err, "trace_id", trace)
					fmt.Fprintf(stderr, "praxa: reload refused, the running configuration stays (trace %s):\n%v\n", trace, err)
					continue
				}
				log.Info("SIGHUP: configuration reloaded", "source", res.Source, "sha256", res.SHA256, "workflows", res.Workflows,
					"capabilities", res.Capabilities, "connections", res.Connections, "skills", res.Skills,
					"certificate_issuers", res.CertificateIssuers, "trace_id", res.TraceID)
				fmt.Fprintf(stderr, "praxa: configuration reloaded from %s: %d workflows, %d capabilities, %d connections (trace %s)\n",
					sourceName(res.Source), res.Workflows, res.Capabilities, res.Connections, res.TraceID)
			}
		}
	}()
}

// sourceName names a configuration source for a message.
func sourceName(source string) string {
	if source == "" {
		return "the embedded configuration"
	}
	return source
}
