package contracts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
)

// Iterate over the contract to print each tool's name and the OAuth scope
// its token must carry.
func ExampleAll() {
	n := 0
	for tool := range contracts.All() {
		fmt.Println(tool.Name, tool.RequiredScope)
		if n++; n == 4 {
			break
		}
	}
	// Output:
	// aura_submit_intent missions:write
	// aura_create_mission missions:write
	// aura_get_mission missions:read
	// aura_signal_mission missions:write
}

// Look a tool up by its exact wire name; names are case-sensitive.
func ExampleLookup() {
	tool, ok := contracts.Lookup("aura_get_mission")
	fmt.Println(ok, tool.Method, tool.Path, tool.RequiredScope, tool.Idempotency, tool.PathArgument)

	_, ok = contracts.Lookup("AURA_GET_MISSION")
	fmt.Println(ok)
	// Output:
	// true GET /v8/missions/{runId} missions:read safe-read runId
	// false
}

// Which keys are present, not their values, selects a praxec operation; an
// empty query and a zero version are present.
func ExampleClassify() {
	calls := []struct {
		tool string
		args string
	}{
		{"praxec.query", `{}`},
		{"praxec.query", `{"query": "", "kind": "workflow"}`},
		{"praxec.query", `{"subject": "lexicon:evidence-pack"}`},
		{"praxec.command", `{"workflowId": "wf_1", "expectedVersion": 0, "transition": "deploy"}`},
		{"praxec.command", `{"subject": "lexicon:evidence-pack", "definition": {"definition_short": "..."}}`},
		{"praxec.command", `{"definitionId": "d", "workflowId": "w"}`},
	}
	for _, c := range calls {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			log.Fatal(err)
		}
		d, err := contracts.Classify(c.tool, args)
		if err != nil {
			e := contracts.AsError(err)
			fmt.Println(c.tool, e.Code, len(e.Links), "example links")
			continue
		}
		fmt.Println(c.tool, d.Operation, d.Row.Scope)
	}
	// Output:
	// praxec.query home capabilities:read
	// praxec.query search capabilities:read
	// praxec.query lexicon_lookup capabilities:read
	// praxec.command submit missions:write
	// praxec.command define lexicon:write
	// praxec.command AMBIGUOUS_INTENT 3 example links
}

// A tool set's fingerprint depends only on which tools it holds.
func ExampleFingerprint() {
	a := contracts.Fingerprint([]string{"aura_get_mission", "aura_get_trace", "aura_get_skill", "aura_get_coverage"})
	b := contracts.Fingerprint([]string{"aura_get_coverage", "aura_get_skill", "aura_get_trace", "aura_get_mission"})
	set, _ := contracts.LookupToolSet("read-only-incident-review")
	fmt.Println(a)
	fmt.Println(a == b, a == set.Fingerprint)
	// Output:
	// 129180fe7e991e24bdad764391aaafabe3f792ddac4efede881508b7e7099b83
	// true true
}

// Register every contract tool with an MCP server of the official go-sdk,
// then list them from an in-memory client. The raw 2020-12 schemas are
// passed through unchanged; a real handler validates the arguments with
// contracts.ValidateInput and calls the service layer.
func ExampleTools_mcp() {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: contracts.ServerName, Version: contracts.ServerVersion}, nil)
	for _, t := range contracts.Tools() {
		srv.AddTool(&mcp.Tool{
			Name:         t.Name,
			Title:        t.Title,
			Description:  t.Description,
			InputSchema:  json.RawMessage(t.InputSchema),
			OutputSchema: json.RawMessage(t.OutputSchema),
			Annotations: &mcp.ToolAnnotations{
				Title:           t.Title,
				ReadOnlyHint:    t.Annotations.ReadOnlyHint,
				DestructiveHint: &t.Annotations.DestructiveHint,
				IdempotentHint:  t.Annotations.IdempotentHint,
				OpenWorldHint:   &t.Annotations.OpenWorldHint,
			},
		}, notImplemented(t.Name))
	}

	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverTransport, nil) // the server first
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "example-host", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	n := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		if tool.Name == contracts.ToolPraxecQuery {
			fmt.Println("registered", tool.Name)
		}
		n++
	}
	fmt.Println(n, "tools")
	// Output:
	// registered praxec.query
	// 14 tools
}

// notImplemented answers every call with a tool error carrying the seeds/000
// error envelope as text, as the MCP surface does.
func notImplemented(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		e := contracts.Errorf(contracts.CodeUnavailable, "%s is not served by this example", name)
		body, err := json.Marshal(e.Envelope())
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}, nil
	}
}
