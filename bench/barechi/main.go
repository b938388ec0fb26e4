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
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/bench/internal/benchmcp"
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
	if err := benchmcp.Serve("barechi", *addr, r); err != nil {
		fmt.Fprintln(os.Stderr, "barechi:", err)
		os.Exit(1)
	}
}
