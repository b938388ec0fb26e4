package gatewaytest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/restclient"
)

// BearerTransport sends every request through Base (nil:
// http.DefaultTransport) with the bearer token Token.
type BearerTransport = restclient.BearerTransport

// MCPSession connects a go-sdk client over streamable HTTP, without the
// standalone stream, to the MCP endpoint url (a gateway's URL + "/mcp")
// with the bearer token tok. It fails the test when the session does not
// open, and closes it when the test ends.
func MCPSession(t testing.TB, url, tok string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gatewaytest", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &BearerTransport{Token: tok}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// MCP is MCPSession to this gateway's /mcp.
func (g *Gateway) MCP(t testing.TB, tok string) *mcp.ClientSession {
	t.Helper()
	return MCPSession(t, g.URL+"/mcp", tok)
}

// LateMCPServer serves srv over streamable HTTP, answering 503 until up is
// set: an MCP upstream that is not up yet when a gateway starts. It closes
// when the test ends.
func LateMCPServer(t testing.TB, srv *mcp.Server, up *atomic.Bool) *httptest.Server {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}
