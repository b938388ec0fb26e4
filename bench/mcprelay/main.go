// Command mcprelay is the naive relay baseline of the MCP load harness: a
// go-sdk server (stateless streamable HTTP, the transport options of
// Praxa's /mcp) whose one tool calls the upstream's tool of the same name
// through ONE go-sdk client session, opened at start and held open
// (streamable HTTP, the same protocol revision). It does nothing else: no
// authentication, no validation, no record. It shows what the obvious
// relay costs, so that Praxa's proxied call is compared with it.
//
// Usage:
//
//	mcprelay -upstream URL [-tool echo] [-addr 127.0.0.1:0] [-raw]
//
// With -raw the tool calls the upstream with one hand-written HTTP POST
// per call instead of the client session (raw.go): the cheapest relay a
// go-sdk server allows, whose cost is almost all the go-sdk server's.
//
// It copies the tool's description and input schema from the upstream's
// tools/list, prints "mcprelay: listening on URL" on stderr once it
// listens, and stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	upstream := flag.String("upstream", "", "streamable HTTP endpoint of the upstream MCP server")
	tool := flag.String("tool", "echo", "the upstream tool to relay")
	raw := flag.Bool("raw", false, "call the upstream with hand-written HTTP requests instead of a go-sdk client session")
	flag.Parse()
	if err := run(*addr, *upstream, *tool, *raw); err != nil {
		fmt.Fprintln(os.Stderr, "mcprelay:", err)
		os.Exit(1)
	}
}

func run(addr, upstream, tool string, raw bool) error {
	if upstream == "" {
		return errors.New("-upstream is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// http.DefaultClient, as a relay written without thought for load has;
	// -raw keeps as many idle connections as the load needs.
	var hc *http.Client
	var rec *recorder
	if raw {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		rec = &recorder{next: tr}
		hc = &http.Client{Transport: rec}
	}
	cs, err := benchmcp.Connect(ctx, "mcprelay", upstream, hc)
	if err != nil {
		return err
	}
	defer cs.Close()
	var rc *rawCaller
	if raw {
		if rc, err = newRawCaller(ctx, cs, rec, hc, upstream, tool, map[string]any{"text": "mcprelay"}); err != nil {
			return fmt.Errorf("%s: %w", upstream, err)
		}
	}
	srv, err := newRelay(ctx, cs, rc, tool)
	if err != nil {
		return fmt.Errorf("%s: %w", upstream, err)
	}
	return benchmcp.Serve("mcprelay", addr, benchmcp.Handler(srv))
}

// newRelay returns the relay's server: one tool, named and described as
// the upstream's tool is in its tools/list, whose calls go to that tool
// through cs, or through rc when it is not nil. An upstream error is
// answered as a tool error.
func newRelay(ctx context.Context, cs *mcp.ClientSession, rc *rawCaller, tool string) (*mcp.Server, error) {
	var def *mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if t.Name == tool {
			def = t
		}
	}
	if def == nil {
		return nil, fmt.Errorf("no tool %q", tool)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcprelay", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: def.Name, Description: def.Description, InputSchema: def.InputSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var res *mcp.CallToolResult
			var err error
			if rc != nil {
				res, err = rc.call(ctx, tool, req.Params.Arguments)
			} else {
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: req.Params.Arguments})
			}
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "upstream: " + err.Error()}}}, nil
			}
			return res, nil
		})
	return srv, nil
}
