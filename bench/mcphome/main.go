// Command mcphome is the floor of the MCP home read: a bare go-sdk server
// (stateless streamable HTTP, the transport options of Praxa's /mcp) whose
// one tool answers exactly the bytes of Praxa's praxec.query {} home
// answer, the way mcpadapter.Result carries a body: as structuredContent
// and as the same JSON in one text content, under the tool's declaration
// as Praxa's /mcp registers it (mcpadapter/mcptool). Praxa's
// /mcp praxec.query is compared with it: the gap is the gateway's own
// cost, the rest is the SDK's for that tool and a result of that size.
//
// Usage:
//
//	mcphome -home-from URL [-via rest|mcp] [-tool praxec.query] [-addr 127.0.0.1:0]
//	mcphome -home-file FILE ...
//
// -home-from asks a running Praxa once, at start, with the bearer token in
// the environment variable -token-env names (PRAXA_TOKEN): with -via rest
// (the default) POST URL/v8/praxec/query {}; with -via mcp, praxec.query {}
// on URL/mcp, whose text content is the body byte for byte. -home-file
// reads the body from a file instead. It prints "mcphome: listening on
// URL" and "mcphome: body N bytes" on stderr, and stops on SIGINT or
// SIGTERM.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/mcpadapter/mcptool"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	from := flag.String("home-from", "", "base URL of a running Praxa to take the home body from")
	via := flag.String("via", "rest", "how -home-from is asked: rest (POST /v8/praxec/query) or mcp (praxec.query on /mcp)")
	file := flag.String("home-file", "", "file holding the home body (instead of -home-from)")
	tokenEnv := flag.String("token-env", "PRAXA_TOKEN", "environment variable holding the bearer token for -home-from")
	tool := flag.String("tool", "praxec.query", "name of the tool answering the body")
	flag.Parse()
	if err := run(*addr, *from, *via, *file, os.Getenv(*tokenEnv), *tool); err != nil {
		fmt.Fprintln(os.Stderr, "mcphome:", err)
		os.Exit(1)
	}
}

func run(addr, from, via, file, token, tool string) error {
	var body []byte
	var err error
	switch {
	case from != "" && file != "":
		return errors.New("give -home-from or -home-file, not both")
	case file != "":
		body, err = os.ReadFile(file)
	case from != "" && via == "rest":
		body, err = homeREST(from, token)
	case from != "" && via == "mcp":
		body, err = homeMCP(from, token)
	case from != "":
		return fmt.Errorf("-via %q: want rest or mcp", via)
	default:
		return errors.New("-home-from or -home-file is required")
	}
	if err != nil {
		return err
	}
	srv, err := newServer(body, tool)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mcphome: body %d bytes\n", len(bytes.TrimSpace(body)))
	return benchmcp.Serve("mcphome", addr, benchmcp.Handler(srv))
}

// newServer returns the bare server: one tool, answering body (a JSON
// object, surrounding white space dropped) as structuredContent and as
// the same JSON in one text content, as mcpadapter.Result does.
func newServer(body []byte, tool string) (*mcp.Server, error) {
	body = bytes.TrimSpace(body)
	if !json.Valid(body) || !bytes.HasPrefix(body, []byte("{")) {
		return nil, fmt.Errorf("the home body is not a JSON object: %.200s", body)
	}
	raw := json.RawMessage(body)
	text := string(body)
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcphome", Version: "0"}, nil)
	srv.AddTool(declaration(tool),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: raw, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	return srv, nil
}

// declaration is the tool mcphome registers: a tool of the contract is
// declared as Praxa's /mcp declares it (mcptool), because go-sdk does work
// in proportion to a tool's input schema on every call (its Mcp-Param
// header check marshals and decodes the whole schema again); any other name
// gets the smallest object schema.
func declaration(name string) *mcp.Tool {
	if t, ok := contracts.Lookup(name); ok {
		return mcptool.Tool(t)
	}
	return &mcp.Tool{Name: name, Description: "Answer the recorded home body.", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

// homeREST answers the body of POST base/v8/praxec/query {}.
func homeREST(base, token string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/v8/praxec/query", strings.NewReader("{}"))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST /v8/praxec/query answered %s: %.300s", res.Status, b)
	}
	return b, nil
}

// homeMCP answers the text content of praxec.query {} on base/mcp, which
// carries the body byte for byte.
func homeMCP(base, token string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := benchmcp.Connect(ctx, "mcphome", strings.TrimSuffix(base, "/")+"/mcp", benchmcp.Client(token))
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "praxec.query", Arguments: map[string]any{}})
	if err != nil {
		return nil, fmt.Errorf("praxec.query: %w", err)
	}
	if res.IsError || len(res.Content) != 1 {
		return nil, fmt.Errorf("praxec.query answered an error or %d contents", len(res.Content))
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return nil, fmt.Errorf("praxec.query answered %T, want text", res.Content[0])
	}
	return []byte(t.Text), nil
}
