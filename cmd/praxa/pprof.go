package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// pprofEnv names the environment variable that turns the profiling
// listener on: a loopback address (127.0.0.1:6060, [::1]:0) on which
// net/http/pprof is served, apart from the gateway's own listener. It is
// for benchmarks (bench/load.sh) and is not a documented flag: the
// profiles show the gateway's internals, so it refuses any address that
// is not loopback. With it set, the block and mutex profiles are on too.
const pprofEnv = "PRAXA_PPROF_ADDR"

// startPprof serves net/http/pprof on addr until ctx ends; "" does
// nothing.
func startPprof(ctx context.Context, addr string, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %w", pprofEnv, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s: %q is not a loopback address", pprofEnv, addr)
	}
	ln, err := listen(addr, listenSetting{name: pprofEnv})
	if err != nil {
		return err
	}
	runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	runtime.SetMutexProfileFraction(10)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return nil
}
