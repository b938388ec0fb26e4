//go:build unix

package connect_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

// BenchmarkMCPCall calls a go-sdk upstream's echo over streamable HTTP
// from 1 (seq) or 8 (par8) goroutines: through the connection (connect),
// and directly with go-sdk clients over a transport that keeps its
// connections, one session per goroutine (direct) or one session shared
// by all (direct1session), so that one run gives the ratios. dials/op
// counts the TCP connections the upstream accepted per call.
func BenchmarkMCPCall(b *testing.B) {
	for _, par := range []int{1, 8} {
		b.Run(map[int]string{1: "seq", 8: "par8"}[par], func(b *testing.B) {
			b.Run("direct", func(b *testing.B) { benchDirect(b, par, par) })
			if par > 1 {
				b.Run("direct1session", func(b *testing.B) { benchDirect(b, par, 1) })
			}
			b.Run("connect", func(b *testing.B) { benchConnect(b, par) })
		})
	}
}

// cpuTime is the CPU time the process has used (user and system).
var cpuTime = connect.CPUTime

// runN makes b.N calls from par goroutines and reports, besides the wall
// time, the process's CPU time per call (client and upstream together:
// on a shared machine it varies less than the wall time).
func runN(b *testing.B, par int, call func() error) {
	b.Helper()
	var next atomic.Int64
	errs := make(chan error, par)
	b.ResetTimer()
	cpu := cpuTime()
	for range par {
		go func() {
			for next.Add(1) <= int64(b.N) {
				if err := call(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range par {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

func benchDirect(b *testing.B, par, nsessions int) {
	srv, dials := echoUpstream(b)
	ctx := context.Background()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer hc.CloseIdleConnections()
	sessions := make(chan *mcp.ClientSession, par)
	for range nsessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true, HTTPClient: hc}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		sessions <- cs
	}
	before := dials.Load()
	if nsessions == 1 {
		cs := <-sessions
		for range par {
			sessions <- cs
		}
	}
	runN(b, par, func() error {
		cs := <-sessions
		defer func() { sessions <- cs }()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
		return err
	})
	b.ReportMetric(float64(dials.Load()-before)/float64(b.N), "dials/op")
}

func benchConnect(b *testing.B, par int) {
	srv, dials := echoUpstream(b)
	m := connect.New(map[string]config.Connection{"up": {Kind: "mcp", URL: srv.URL}}, &connect.Options{Logger: quiet()})
	defer m.Close()
	r := m.Runners()["mcp"]
	x := config.Executor{Kind: "mcp", Connection: "up", Tool: "echo"}
	ctx := context.Background()
	if _, err := r.Run(ctx, x, workflow.Scope{Arguments: map[string]any{"message": "hi"}}); err != nil {
		b.Fatal(err)
	}
	before := dials.Load()
	runN(b, par, func() error {
		_, err := r.Run(ctx, x, workflow.Scope{Arguments: map[string]any{"message": "hi"}})
		return err
	})
	b.ReportMetric(float64(dials.Load()-before)/float64(b.N), "dials/op")
	b.ReportMetric(float64(m.Starts("up")), "sessions")
}
