package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/reload"
	"github.com/praxa/praxa/gateway/telemetry"
)

// This file reloads the configuration of a running gateway: on SIGHUP and
// through POST /v8/config/reload (serve), on SIGHUP (mcp on a local
// store). reload.Reloader does the work and audits every attempt.

// reloadOnHangup reloads the configuration on every SIGHUP until ctx ends,
// logging the outcome to log and stderr; a refused file leaves the running
// configuration. SIGHUP then stays caught until the process exits, each
// one logged and ignored: its default action would end the process in the
// middle of the shutdown's drain. A reload racing the shutdown is the
// Reloader's to refuse (the caller closes it first when it shuts down).
func reloadOnHangup(ctx context.Context, r *reload.Reloader, log *slog.Logger, stderr io.Writer) {
	// A reload's lines carry its trace_id (telemetry.WithTrace).
	log = telemetry.Logger(log)
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
				rctx := telemetry.WithTrace(ctx, trace)
				res, err := r.Reload(rctx, reload.Trigger{Via: reload.ViaSignal, TraceID: trace})
				if err != nil {
					log.ErrorContext(rctx, "SIGHUP: configuration reload refused; the running configuration stays", "err", err)
					fmt.Fprintf(stderr, "praxa: reload refused, the running configuration stays (trace %s):\n%v\n", trace, err)
					continue
				}
				log.InfoContext(rctx, "SIGHUP: configuration reloaded", "source", res.Source, "sha256", res.SHA256, "workflows", res.Workflows,
					"capabilities", res.Capabilities, "connections", res.Connections, "skills", res.Skills,
					"certificate_issuers", res.CertificateIssuers)
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
