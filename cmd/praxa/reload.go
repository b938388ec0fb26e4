package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/discovery"
)

// This file reloads the configuration of a running gateway: on SIGHUP and
// through POST /v8/config/reload.

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

// reloadResult is the answer of a reload (POST /v8/config/reload).
type reloadResult struct {
	Reloaded     bool      `json:"reloaded"`
	Source       string    `json:"source"`
	Workflows    int       `json:"workflows"`
	Capabilities int       `json:"capabilities"`
	Connections  int       `json:"connections"`
	At           time.Time `json:"at"`
}

// reload reads the configuration again (SIGHUP, POST /v8/config/reload)
// and swaps it in: the connections first, then the service's workflows,
// discovery index, lexicon and policy. A file that does not load returns
// its *config.LoadError and nothing changes. The configuration is read
// from the file serve started with (--config, or ./praxec.yaml as found at
// start); with --dev and no file, the embedded example is read again, so
// a reload changes nothing. Auth, server settings, skills, certificate
// issuers and the tools /mcp registers keep their values from the start.
func (a *app) reload(ctx context.Context) (*reloadResult, error) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	cfg, err := readConfig(a.configPath, a.dev)
	if err != nil {
		return nil, err
	}
	cfg.Defaults(a.listener.Addr().String())
	conns, workflows, problems, err := connect.Setup(ctx, cfg, &connect.Options{Logger: a.log})
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		fmt.Fprintf(a.env.stderr, "praxa: %s\n", p)
	}
	index, err := discovery.Build(workflows, cfg)
	if err != nil {
		conns.Close()
		return nil, err
	}
	a.conns.Swap(conns)
	a.service.Reload(gateway.Runtime{Workflows: workflows, Discovery: index, Lexicon: cfg.Lexicon, Policy: cfg.Policy})
	return &reloadResult{Reloaded: true, Source: cfg.Source, Workflows: len(workflows.IDs()), Capabilities: len(cfg.Exposed()),
		Connections: len(cfg.Connections), At: time.Now().UTC()}, nil
}

// reloadOnHangup reloads the configuration on every SIGHUP until ctx ends,
// logging the outcome; a refused file leaves the running configuration.
func (a *app) reloadOnHangup(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				res, err := a.reload(ctx)
				if err != nil {
					a.log.Error("SIGHUP: configuration reload refused; the running configuration stays", "err", err)
					fmt.Fprintf(a.env.stderr, "praxa: reload refused, the running configuration stays:\n%v\n", err)
					continue
				}
				a.log.Info("SIGHUP: configuration reloaded", "source", res.Source, "workflows", res.Workflows,
					"capabilities", res.Capabilities, "connections", res.Connections)
				fmt.Fprintf(a.env.stderr, "praxa: configuration reloaded from %s: %d workflows, %d capabilities, %d connections\n",
					sourceName(res.Source), res.Workflows, res.Capabilities, res.Connections)
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
