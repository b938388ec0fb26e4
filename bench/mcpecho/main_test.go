package main

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/bench/internal/benchmcp"
)

func TestEcho(t *testing.T) {
	hs := httptest.NewServer(benchmcp.Handler(newServer()))
	defer hs.Close()
	ctx := context.Background()
	cs, err := benchmcp.Connect(ctx, "test", hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, tc := range []struct {
		name    string
		args    any
		isError bool
		text    string
	}{
		{"text", map[string]any{"text": "hello"}, false, "hello"},
		{"empty text", map[string]any{"text": ""}, false, ""},
		{"text not a string", map[string]any{"text": 7}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: tc.args})
			if tc.isError {
				if err == nil && !res.IsError {
					t.Fatalf("answered %+v, want an error", res.Content)
				}
				return
			}
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("%v %+v", err, res)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
		})
	}
}
