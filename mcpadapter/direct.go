package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
)

// DirectTool is a proxy capability exposed directly: an MCP tool of its own
// beside the praxec pair (seeds/002's hot path).
//
// A call of a direct tool is a one-move run: it starts a run of the
// built-in proxy_default workflow whose first move is the capability, with
// the call's arguments beside input.capability (the describe link's
// shape), through praxec.command start — so the same scope
// (missions:write), tool allowlist, input schema, guards, executor, audit
// and idempotency rules apply as on the praxec surface. Its guards see the
// evidence of that one run only: a capability guarded by evidence answers
// GUARD_REJECTED when called directly, with links that start the moves
// producing the evidence, and is reached through praxec.command instead.
// On success the result is the capability's output: its text as content,
// the output object as structuredContent, and in _meta the run
// (io.praxa/workflow: id and version) and its links (io.praxa/links), so
// a client can go on in the same run through praxec.command. A failed
// upstream call answers isError with the upstream's message and output.
type DirectTool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the capability's input schema ({"type":"object"}
	// when nil); its root must be an object schema.
	InputSchema json.RawMessage
}

// The _meta members of a direct tool's result.
const (
	WorkflowMetaKey = "io.praxa/workflow"
	LinksMetaKey    = "io.praxa/links"
)

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// addDirect registers the direct tools. A tool whose name is not a valid
// MCP tool name, or is a contract tool's, is skipped with a log line.
func addDirect(srv *mcp.Server, backend Backend, tools []DirectTool, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	seen := map[string]bool{}
	for _, d := range tools {
		if _, contract := contracts.Lookup(d.Name); contract || !toolNameRE.MatchString(d.Name) || seen[d.Name] {
			log.Warn("exposeDirectly: capability not listed as an MCP tool (invalid, duplicate or reserved name)", "capability", d.Name)
			continue
		}
		seen[d.Name] = true
		schema := d.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		var root struct {
			Type any `json:"type"`
		}
		if json.Unmarshal(schema, &root) != nil || root.Type != "object" {
			return fmt.Errorf("mcpadapter: direct tool %s: the input schema's root is not an object schema", d.Name)
		}
		destructive, openWorld := true, true
		srv.AddTool(&mcp.Tool{Name: d.Name, Title: d.Title, Description: d.Description, InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{Title: d.Title, DestructiveHint: &destructive, OpenWorldHint: &openWorld}},
			directHandler(backend, d.Name))
	}
	return nil
}

func directHandler(backend Backend, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		input := map[string]json.RawMessage{}
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &input); err != nil {
				return Result(Outcome{Err: contracts.Errorf(contracts.CodeInvalidParams, "the arguments are not a JSON object")}), nil
			}
		}
		// The start link's shape: the capability and its arguments in
		// input (a capability argument named capability cannot be sent
		// this way).
		input["capability"], _ = json.Marshal(name)
		call, err := json.Marshal(map[string]any{"definitionId": "proxy_default", "input": input})
		if err != nil {
			return Result(Outcome{Err: contracts.Errorf(contracts.CodeInvalidParams, "the arguments are not JSON")}), nil
		}
		o := backend.Call(ctx, contracts.ToolPraxecCommand, call)
		if o.Err != nil {
			return Result(o), nil
		}
		return directResult(o.Body), nil
	}
}

// directResult turns the projection of a one-move run into the tool's
// result.
func directResult(body json.RawMessage) *mcp.CallToolResult {
	var p struct {
		Workflow map[string]any `json:"workflow"`
		Context  struct {
			LastRun struct {
				OK     bool           `json:"ok"`
				Output map[string]any `json:"output"`
				Error  string         `json:"error"`
			} `json:"lastRun"`
		} `json:"context"`
		Links []any `json:"links"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return Result(Outcome{Err: contracts.Errorf(contracts.CodeInternal, "internal error")})
	}
	run := p.Context.LastRun
	out := run.Output
	if out == nil {
		out = map[string]any{}
	}
	text, _ := out["text"].(string)
	if text == "" {
		b, _ := json.Marshal(out)
		text = string(b)
	}
	r := &mcp.CallToolResult{Meta: mcp.Meta{WorkflowMetaKey: p.Workflow, LinksMetaKey: p.Links}}
	if !run.OK {
		r.IsError = true
		r.Content = []mcp.Content{&mcp.TextContent{Text: run.Error + "\n" + text}}
		return r
	}
	r.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	r.StructuredContent = out
	return r
}

// DirectTools lists the capabilities marked exposeDirectly as direct
// tools.
func DirectTools(caps []config.ExposedCapability) []DirectTool {
	var out []DirectTool
	for _, c := range caps {
		if !c.ExposeDirectly {
			continue
		}
		d := DirectTool{Name: c.ID, Title: c.Title, Description: c.Description}
		if c.InputSchema != nil {
			d.InputSchema, _ = json.Marshal(c.InputSchema)
		}
		out = append(out, d)
	}
	return out
}
