// Command mcpload is the MCP load driver of bench/: it opens N client
// sessions on the go-sdk client (each over streamable HTTP with a transport
// and connection of its own, like N agents), has each call one tool in a
// loop, one call at a time, for a duration or a number of calls, and
// prints one machine-readable line:
//
//	mcpload label=L tool=T sessions=N calls=C errors=E secs=S calls_per_s=R p50_ms=X p99_ms=Y text_bytes=B protocol=P
//
// text_bytes is the size of the first answer's text content. Sequential
// load is -sessions 1. Everything is bounded: at most -duration (and
// never more than ten minutes), at most -count calls when it is set.
//
// Usage:
//
//	mcpload -url http://127.0.0.1:PORT/mcp -tool echo -args '{"text":"hi"}' [-sessions 8] [-duration 5s] [-warmup 1s] [-protocol 2025-11-25]
//
// -protocol pins the MCP revision every session negotiates (default
// 2026-07-28, what Praxa's /mcp speaks; 2025-11-25 measures the same calls
// at the previous revision, initialize handshake and no mirrored headers).
// The bearer token, when the environment variable -token-env names
// (PRAXA_TOKEN) is set, goes with every request. It exits 1 when a session
// cannot be opened or when any call failed (the line is printed first).
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
)

// maxDuration bounds every run, whatever the flags say.
const maxDuration = 10 * time.Minute

type options struct {
	url, tool, label string
	args             json.RawMessage
	sessions         int
	duration, warmup time.Duration
	count            int64
	timeout          time.Duration
	token            string
	protocol         string
}

func main() {
	var o options
	var args, tokenEnv string
	flag.StringVar(&o.url, "url", "", "streamable HTTP endpoint of the MCP server")
	flag.StringVar(&o.tool, "tool", "echo", "tool to call")
	flag.StringVar(&args, "args", "{}", "the call's arguments, a JSON object")
	flag.StringVar(&o.label, "label", "", "label printed on the result line")
	flag.IntVar(&o.sessions, "sessions", 1, "client sessions calling at the same time, each one call at a time")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "how long to measure (at most 10m)")
	flag.DurationVar(&o.warmup, "warmup", 0, "calls made first and not counted")
	flag.Int64Var(&o.count, "count", 0, "stop after this many measured calls in all (0: no limit but -duration)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Second, "longest one call may take")
	flag.StringVar(&tokenEnv, "token-env", "PRAXA_TOKEN", "environment variable holding the bearer token (unset or empty: none)")
	flag.StringVar(&o.protocol, "protocol", benchmcp.ProtocolVersion, "MCP revision every session negotiates")
	flag.Parse()
	o.args = json.RawMessage(args)
	if tokenEnv != "" {
		o.token = os.Getenv(tokenEnv)
	}
	o.label = cmp.Or(o.label, o.tool)
	r, err := run(context.Background(), o)
	if r != nil {
		fmt.Println(r.line(o))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpload:", err)
		os.Exit(1)
	}
}

// result is what one measured stretch gave.
type result struct {
	lat       []time.Duration // every successful call's latency, sorted
	errors    int64
	elapsed   time.Duration
	textBytes int
}

func (r *result) line(o options) string {
	n := len(r.lat)
	rate := 0.0
	if s := r.elapsed.Seconds(); s > 0 {
		rate = float64(n) / s
	}
	return fmt.Sprintf("mcpload label=%s tool=%s sessions=%d calls=%d errors=%d secs=%.3f calls_per_s=%.1f p50_ms=%.3f p99_ms=%.3f text_bytes=%d protocol=%s",
		o.label, o.tool, o.sessions, n, r.errors, r.elapsed.Seconds(), rate, ms(quantile(r.lat, 0.50)), ms(quantile(r.lat, 0.99)), r.textBytes, o.protocol)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// quantile is the nearest-rank q-quantile of sorted latencies.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func run(ctx context.Context, o options) (*result, error) {
	switch {
	case o.url == "":
		return nil, errors.New("-url is required")
	case o.sessions < 1 || o.sessions > 1024:
		return nil, fmt.Errorf("-sessions %d: want 1 to 1024", o.sessions)
	case o.duration <= 0 || o.duration > maxDuration || o.warmup < 0 || o.warmup > maxDuration:
		return nil, fmt.Errorf("-duration and -warmup: want at most %s, -duration above 0", maxDuration)
	case !json.Valid(o.args) || len(o.args) == 0 || o.args[0] != '{':
		return nil, fmt.Errorf("-args %q is not a JSON object", o.args)
	}
	o.protocol = cmp.Or(o.protocol, benchmcp.ProtocolVersion)
	sessions := make([]*mcp.ClientSession, o.sessions)
	defer func() {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	for i := range sessions {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cs, err := benchmcp.ConnectAt(cctx, "mcpload", o.url, benchmcp.Client(o.token), o.protocol)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("session %d: %w", i, err)
		}
		sessions[i] = cs
	}
	params := &mcp.CallToolParams{Name: o.tool, Arguments: o.args}
	// One call first: it must succeed, and its text is measured.
	first, err := call(ctx, sessions[0], params, o.timeout)
	if err != nil {
		return nil, fmt.Errorf("first call: %w", err)
	}
	textBytes := 0
	for _, c := range first.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			textBytes += len(t.Text)
		}
	}
	if o.warmup > 0 {
		stretch(ctx, sessions, params, o.warmup, 0, o.timeout)
	}
	r := stretch(ctx, sessions, params, o.duration, o.count, o.timeout)
	r.textBytes = textBytes
	if r.errors > 0 {
		return r, fmt.Errorf("%d calls failed", r.errors)
	}
	return r, nil
}

// call makes one call within timeout; an answer with isError is an error.
func call(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams, timeout time.Duration) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		return nil, fmt.Errorf("isError: %.300s", b)
	}
	return res, nil
}

// stretch has every session call in a loop, one call at a time, until d
// has passed or count calls were started (count 0: no limit), and returns
// the latencies of the successful calls and the number of failed ones.
func stretch(ctx context.Context, sessions []*mcp.ClientSession, params *mcp.CallToolParams, d time.Duration, count int64, timeout time.Duration) *result {
	var started, failed atomic.Int64
	var firstErr sync.Once
	lats := make([][]time.Duration, len(sessions))
	var wg sync.WaitGroup
	begin := time.Now()
	deadline := begin.Add(d)
	for i, cs := range sessions {
		// CallTool writes into its params (_meta): one value per session.
		params := &mcp.CallToolParams{Name: params.Name, Arguments: params.Arguments}
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for {
				now := time.Now()
				if !now.Before(deadline) || (count > 0 && started.Add(1) > count) {
					break
				}
				if _, err := call(ctx, cs, params, timeout); err != nil {
					failed.Add(1)
					firstErr.Do(func() { fmt.Fprintln(os.Stderr, "mcpload: call failed:", err) })
					continue
				}
				lat = append(lat, time.Since(now))
			}
			lats[i] = lat
		})
	}
	wg.Wait()
	r := &result{elapsed: time.Since(begin), errors: failed.Load()}
	for _, l := range lats {
		r.lat = append(r.lat, l...)
	}
	slices.Sort(r.lat)
	return r
}
