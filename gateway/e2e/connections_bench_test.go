package e2e_test

import (
	"context"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect/connecttest"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// BenchmarkProxiedToolsCall measures, in one run, the same tools/call of
// the MCP test server's echo tool made directly (a go-sdk client on the
// server over stdio) and through the gateway (a go-sdk client on /mcp
// calling the capability ev.echo exposed directly: authentication, a run
// of proxy_default started and stored durably, the call over the held
// stdio connection, the answer). The difference is the gateway's overhead
// per proxied call.
func BenchmarkProxiedToolsCall(b *testing.B) {
	node, args := connecttest.Everything(b)
	ctx := context.Background()
	call := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "bench"}}

	b.Run("direct", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(node, args...)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ResetTimer()
		for b.Loop() {
			if res, err := cs.CallTool(ctx, call); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})

	b.Run("gateway", func(b *testing.B) {
		ti := newIssuer(b)
		g := githubGateway(b, ti, "connections.yaml", node, args, "", func(cfg *config.Config) { cfg.Proxy.Import[0].ExposeDirectly = true })
		tok := mint(b, ti, tenantA, userA)
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp",
			HTTPClient: &http.Client{Transport: &gatewaytest.BearerTransport{Token: tok}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		proxied := &mcp.CallToolParams{Name: "ev.echo", Arguments: map[string]any{"message": "bench"}}
		if res, err := cs.CallTool(ctx, proxied); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		b.ResetTimer()
		for b.Loop() {
			if res, err := cs.CallTool(ctx, proxied); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
