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
//	mcprelay -upstream URL [-tool echo] [-addr 127.0.0.1:0]
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
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	upstream := flag.String("upstream", "", "streamable HTTP endpoint of the upstream MCP server")
	tool := flag.String("tool", "echo", "the upstream tool to relay")
	flag.Parse()
	if err := run(*addr, *upstream, *tool); err != nil {
		fmt.Fprintln(os.Stderr, "mcprelay:", err)
		os.Exit(1)
	}
}

func run(addr, upstream, tool string) error {
	if upstream == "" {
		return errors.New("-upstream is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// http.DefaultClient, as a relay written without thought for load has.
	cs, err := benchmcp.Connect(ctx, "mcprelay", upstream, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	srv, err := newRelay(ctx, cs, tool)
	if err != nil {
		return fmt.Errorf("%s: %w", upstream, err)
	}
	return benchmcp.Serve("mcprelay", addr, benchmcp.Handler(srv))
}

// newRelay returns the relay's server: one tool, named and described as
// the upstream's tool is in its tools/list, whose calls go to that tool
// through cs. An upstream error is answered as a tool error.
func newRelay(ctx context.Context, cs *mcp.ClientSession, tool string) (*mcp.Server, error) {
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
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: req.Params.Arguments})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "upstream: " + err.Error()}}}, nil
			}
			return res, nil
		})
	return srv, nil
}
