// Package benchmcp holds what the MCP baselines of bench/ share: serving a
// go-sdk server the way Praxa's /mcp does (streamable HTTP, stateless), a
// listener that prints where it listens and stops on a signal (bench/barechi,
// the REST baseline, serves with it too), and a client session over
// streamable HTTP with an optional bearer token.
//
// It is part of the load harness only: nothing in the gateway imports it.
package benchmcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/restclient"
)

// ProtocolVersion is the MCP revision Praxa's /mcp speaks; every baseline
// checks that its client sessions negotiated it.
const ProtocolVersion = "2026-07-28"

// Handler serves srv over streamable HTTP with the transport options of
// Praxa's /mcp (mcpadapter.NewHTTPHandler): stateless, one server for every
// request.
func Handler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true})
}

// Serve listens on addr, prints "NAME: listening on http://ADDR" on stderr
// (the line bench's scripts wait for), serves h
// and returns once SIGINT or SIGTERM has shut the server down.
func Serve(name, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "%s: listening on http://%s\n", name, ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	return nil
}

// Client returns an HTTP client with a transport of its own (no connection
// shared with another client) that sends token as a bearer token when it
// is not empty.
func Client(token string) *http.Client {
	var rt http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
	if token != "" {
		rt = &restclient.BearerTransport{Token: token, Base: rt}
	}
	return &http.Client{Transport: rt}
}

// Connect opens a client session to the streamable HTTP endpoint through
// hc (http.DefaultClient when nil), without the standalone SSE stream,
// and checks that it negotiated ProtocolVersion.
func Connect(ctx context.Context, name, endpoint string, hc *http.Client) (*mcp.ClientSession, error) {
	return ConnectAt(ctx, name, endpoint, hc, ProtocolVersion)
}

// ConnectAt is Connect with the client pinned to the MCP revision version
// (2026-07-28: server/discover and per-request _meta; 2025-11-25 and
// earlier: the initialize handshake), which the session must negotiate.
func ConnectAt(ctx context.Context, name, endpoint string, hc *http.Client, version string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc,
		DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		cs.Close()
		return nil, fmt.Errorf("%s negotiated protocol %s, want %s", endpoint, v, version)
	}
	return cs, nil
}
