// Command mcpgorelay is the peer of Praxa's proxied MCP call in bench/: an
// MCP proxy written here on github.com/mark3labs/mcp-go (the library
// TBXark/mcp-proxy is built on) with TBXark/mcp-proxy's design and nothing
// more:
//
//   - one mark3labs server on streamable HTTP, stateless (TBXark's
//     streamable-http server type);
//   - one client session to the upstream, opened at start and held open,
//     on mark3labs' streamable HTTP client with its defaults (TBXark sets
//     only headers and a timeout, when configured);
//   - the upstream's tools listed once at start (every page) and
//     registered unchanged, each with the client's CallTool as its
//     handler, so every call is forwarded as it came and its result
//     answered as it went;
//   - the server's recovery option, and, when -token-env names a set
//     variable, TBXark's bearer check (the token must equal it).
//
// It forwards tools only: the upstream's prompts and resources, which
// TBXark also registers, are not part of a tools/call, and bench's
// upstream has none.
//
// It lives in a Go module of its own (bench/peers/mcpgo) so that the main
// module never depends on mark3labs/mcp-go. go.mod pins the version
// TBXark/mcp-proxy pins (v0.44.0), whose server serves MCP 2025-11-25 at
// most; the code builds on the newest releases too (v1.6.0 serves
// 2026-07-28), which bench/mcp.sh's PEER_MCPGO selects.
//
// Usage:
//
//	mcpgorelay -upstream URL [-addr 127.0.0.1:0] [-token-env NAME] [-idle-conns N]
//
// It prints "mcpgorelay: listening on URL" on stderr once it listens (the
// MCP endpoint is that URL, any path), and before it "mcpgorelay:
// mark3labs/mcp-go V serves up to P, upstream protocol Q, N tools";
// SIGINT or SIGTERM stop it.
package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	upstream := flag.String("upstream", "", "streamable HTTP endpoint of the upstream MCP server")
	tokenEnv := flag.String("token-env", "", "environment variable holding the bearer token every request must carry (unset or empty: none, as TBXark without authTokens)")
	idle := flag.Int("idle-conns", 0, "idle connections kept to the upstream (0: the Go default of 2, as TBXark has)")
	flag.Parse()
	var token string
	if *tokenEnv != "" {
		token = os.Getenv(*tokenEnv)
	}
	if err := run(*addr, *upstream, token, *idle); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgorelay:", err)
		os.Exit(1)
	}
}

func run(addr, upstream, token string, idle int) error {
	if upstream == "" {
		return errors.New("-upstream is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up, info, err := connect(ctx, upstream, idle)
	if err != nil {
		return fmt.Errorf("%s: %w", upstream, err)
	}
	defer up.Close()
	srv := server.NewMCPServer("mcpgorelay", "0", server.WithRecovery())
	n, err := forwardTools(ctx, up, srv)
	if err != nil {
		return fmt.Errorf("%s: %w", upstream, err)
	}
	fmt.Fprintf(os.Stderr, "mcpgorelay: mark3labs/mcp-go %s serves up to %s, upstream protocol %s, %d tools\n",
		mcpgoVersion(), mcp.LATEST_PROTOCOL_VERSION, info.ProtocolVersion, n)
	return serve(addr, bearer(token, server.NewStreamableHTTPServer(srv, server.WithStateLess(true))))
}

// connect opens the held client session: mark3labs' streamable HTTP client,
// started and initialized at the newest revision it knows.
func connect(ctx context.Context, upstream string, idle int) (*client.Client, *mcp.InitializeResult, error) {
	var opts []transport.StreamableHTTPCOption
	if idle > 0 {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = idle
		opts = append(opts, transport.WithHTTPBasicClient(&http.Client{Transport: tr}))
	}
	c, err := client.NewStreamableHttpClient(upstream, opts...)
	if err != nil {
		return nil, nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, nil, err
	}
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "mcpgorelay", Version: "0"}
	info, err := c.Initialize(ctx, req)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("initialize: %w", err)
	}
	return c, info, nil
}

// forwardTools registers every tool of the upstream on srv, unchanged, with
// the held client's CallTool as its handler, and returns how many there
// were.
func forwardTools(ctx context.Context, up *client.Client, srv *server.MCPServer) (int, error) {
	res, err := up.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return 0, fmt.Errorf("tools/list: %w", err)
	}
	if len(res.Tools) == 0 {
		return 0, errors.New("tools/list: the upstream has no tools")
	}
	for _, t := range res.Tools {
		srv.AddTool(t, up.CallTool)
	}
	return len(res.Tools), nil
}

// mcpgoVersion is the version of mark3labs/mcp-go built in.
func mcpgoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/mark3labs/mcp-go" {
				return m.Version
			}
		}
	}
	return "?"
}

// bearer is TBXark's authTokens check with one token: a request whose
// Authorization header does not carry it is 401. An empty token checks
// nothing.
func bearer(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serve listens on addr, prints "mcpgorelay: listening on http://ADDR" on
// stderr (the line bench's scripts wait for) and serves h until the process
// is stopped (SIGTERM ends it: it holds nothing to flush).
func serve(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mcpgorelay: listening on http://%s\n", ln.Addr())
	return (&http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}).Serve(ln)
}
