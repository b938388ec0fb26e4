// Command barechi is the load harness's floor: a chi router with one route,
// GET /v8/ping, answering a small JSON object with encoding/json, and no
// middleware at all. bench/load.sh runs it beside praxa serve so that every
// gateway figure has a baseline measured in the same run.
//
// Usage:
//
//	barechi [-addr 127.0.0.1:0]
//
// It prints "barechi: listening on URL" on stderr once it listens, and
// stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
)

// pingResponse is the answer's shape (the same as bench.BenchmarkBareChi's).
type pingResponse struct {
	OK      bool   `json:"ok"`
	Service string `json:"service"`
	Version string `json:"version"`
	TS      int64  `json:"ts"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	flag.Parse()
	r := chi.NewRouter()
	r.Get("/v8/ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(pingResponse{OK: true, Service: "gateway", Version: "v8", TS: time.Now().Unix()})
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "barechi:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "barechi: listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "barechi:", err)
		os.Exit(1)
	}
}
