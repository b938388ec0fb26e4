package contracts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
)

// TestMCPRegistration registers every tool with the official go-sdk the way
// ExampleTools_mcp does and checks what a client lists: no tool is refused
// or logged as invalid (praxec.query's dot included), and names, schemas and
// annotations arrive as declared.
func TestMCPRegistration(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := mcp.NewServer(&mcp.Implementation{Name: contracts.ServerName, Version: contracts.ServerVersion}, &mcp.ServerOptions{Logger: logger})
	for _, tool := range contracts.Tools() {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("AddTool(%s) panicked: %v", tool.Name, r)
				}
			}()
			srv.AddTool(&mcp.Tool{
				Name: tool.Name, Title: tool.Title, Description: tool.Description,
				InputSchema: json.RawMessage(tool.InputSchema), OutputSchema: json.RawMessage(tool.OutputSchema),
				Annotations: &mcp.ToolAnnotations{
					ReadOnlyHint: tool.Annotations.ReadOnlyHint, DestructiveHint: &tool.Annotations.DestructiveHint,
					IdempotentHint: tool.Annotations.IdempotentHint, OpenWorldHint: &tool.Annotations.OpenWorldHint,
				},
			}, notImplemented(tool.Name))
		}()
	}

	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "contracts-test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	listed := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tool.Name] = tool
	}
	for _, want := range contracts.Tools() {
		got, ok := listed[want.Name]
		if !ok {
			t.Errorf("%s is not listed", want.Name)
			continue
		}
		if got.Title != want.Title || got.Description != want.Description {
			t.Errorf("%s: title/description changed", want.Name)
		}
		for _, s := range []struct {
			name string
			got  any
			want json.RawMessage
		}{{"inputSchema", got.InputSchema, want.InputSchema}, {"outputSchema", got.OutputSchema, want.OutputSchema}} {
			b, _ := json.Marshal(s.got)
			if !jsonEqual(t, b, s.want) {
				t.Errorf("%s: %s arrived as %s", want.Name, s.name, b)
			}
		}
		a := got.Annotations
		if a == nil || a.ReadOnlyHint != want.Annotations.ReadOnlyHint || a.IdempotentHint != want.Annotations.IdempotentHint ||
			a.DestructiveHint == nil || *a.DestructiveHint != want.Annotations.DestructiveHint ||
			a.OpenWorldHint == nil || *a.OpenWorldHint != want.Annotations.OpenWorldHint {
			t.Errorf("%s: annotations arrived as %+v", want.Name, a)
		}
	}
	if len(listed) != len(contracts.Names()) {
		t.Errorf("%d tools listed, want %d", len(listed), len(contracts.Names()))
	}

	// A call answers a tool error, never a protocol error.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolPraxecQuery, Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Errorf("CallTool = %+v, %v; want a tool error", res, err)
	}
	if logs.Len() > 0 {
		t.Errorf("the server logged:\n%s", logs.String())
	}
}
