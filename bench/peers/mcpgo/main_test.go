package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// upstream serves two tools on a stateless mark3labs server: echo, which
// answers its text with a prefix, and fail, which answers a tool error.
func upstream(t *testing.T) string {
	t.Helper()
	srv := server.NewMCPServer("up", "0")
	srv.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo it."), mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("up:" + req.GetString("text", "")), nil
		})
	srv.AddTool(mcp.NewTool("fail", mcp.WithDescription("Fail.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("it failed"), nil
		})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithStateLess(true)))
	t.Cleanup(hs.Close)
	return hs.URL
}

// relay builds the relay on the upstream at url and serves it, with the
// bearer token when it is not empty; it returns the relay's URL and the
// held client session.
func relay(t *testing.T, url, token string) (string, *client.Client) {
	t.Helper()
	ctx := context.Background()
	up, _, err := connect(ctx, url, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	srv := server.NewMCPServer("relay", "0", server.WithRecovery())
	if n, err := forwardTools(ctx, up, srv); err != nil || n != 2 {
		t.Fatalf("forwardTools: %d, %v", n, err)
	}
	hs := httptest.NewServer(bearer(token, server.NewStreamableHTTPServer(srv, server.WithStateLess(true))))
	t.Cleanup(hs.Close)
	return hs.URL, up
}

// session opens a client session on url, sending token when not empty.
func session(t *testing.T, url, token string) (*client.Client, error) {
	t.Helper()
	var opts []transport.StreamableHTTPCOption
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		return nil, err
	}
	return c, nil
}

func TestRelayListsToolsUnchanged(t *testing.T) {
	ctx := context.Background()
	url, up := relay(t, upstream(t), "")
	c, err := session(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := up.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got.Tools)
	w, _ := json.Marshal(want.Tools)
	if string(g) != string(w) {
		t.Errorf("the relay lists\n%s\nthe upstream\n%s", g, w)
	}
}

func TestRelayForwardsCalls(t *testing.T) {
	ctx := context.Background()
	url, _ := relay(t, upstream(t), "")
	c, err := session(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		text    string
		isError bool
	}{
		{"echo", map[string]any{"text": "hi"}, "up:hi", false},
		{"fail", map[string]any{}, "it failed", true},
	} {
		var req mcp.CallToolRequest
		req.Params.Name = tc.tool
		req.Params.Arguments = tc.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		var texts []string
		for _, content := range res.Content {
			if tx, ok := content.(mcp.TextContent); ok {
				texts = append(texts, tx.Text)
			}
		}
		if res.IsError != tc.isError || !reflect.DeepEqual(texts, []string{tc.text}) {
			t.Errorf("%s: isError %v, texts %q; want %v, %q", tc.tool, res.IsError, texts, tc.isError, tc.text)
		}
	}
}

func TestRelayChecksTheBearerToken(t *testing.T) {
	url, _ := relay(t, upstream(t), "s3cret")
	for _, tc := range []struct {
		header string
		status int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Bearer s3cret-and-more", http.StatusUnauthorized},
		{"Bearer s3cret", http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("Authorization %q: %s, want %d", tc.header, res.Status, tc.status)
		}
	}
	if _, err := session(t, url, "s3cret"); err != nil {
		t.Errorf("a session with the token: %v", err)
	}
}

func TestRunRefusesAnUpstreamWithoutTools(t *testing.T) {
	hs := httptest.NewServer(server.NewStreamableHTTPServer(server.NewMCPServer("empty", "0"), server.WithStateLess(true)))
	t.Cleanup(hs.Close)
	up, _, err := connect(context.Background(), hs.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if _, err := forwardTools(context.Background(), up, server.NewMCPServer("relay", "0")); err == nil {
		t.Error("forwardTools on an upstream without tools: no error")
	}
}
