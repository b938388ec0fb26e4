// Command mcpecho is the upstream of the MCP load harness: a go-sdk server
// with one tool, echo, that answers its text argument as text content,
// served over streamable HTTP with the transport options of Praxa's /mcp
// (stateless). bench/mcp.sh calls it directly (the floor), through
// bench/mcprelay and through Praxa.
//
// Usage:
//
//	mcpecho [-addr 127.0.0.1:0]
//
// It prints "mcpecho: listening on URL" on stderr once it listens (the MCP
// endpoint is that URL itself, any path), and stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/mcpadapter"
)

// echoArgs are the echo tool's arguments.
type echoArgs struct {
	Text string `json:"text"`
}

// newServer returns the go-sdk server with the echo tool.
func newServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpecho", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Answer the text argument as it is.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a echoArgs
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + err.Error()}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
	})
	return srv
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	flag.Parse()
	srv := newServer()
	// With OTEL_EXPORTER_OTLP_ENDPOINT set, every call is an MCP server
	// span whose parent its _meta.traceparent names (the gateway's test of
	// its OpenTelemetry export uses mcpecho as the upstream); otherwise
	// nothing is added.
	export, err := telemetry.Start(context.Background(), telemetry.Settings{ServiceName: "mcpecho"}, os.Getenv, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpecho:", err)
		os.Exit(1)
	}
	if export != nil {
		srv.AddReceivingMiddleware(mcpadapter.Traced(func(name string) bool { return name == "echo" }))
	}
	err = benchmcp.Serve("mcpecho", *addr, benchmcp.Handler(srv))
	export.Shutdown(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpecho:", err)
		os.Exit(1)
	}
}
