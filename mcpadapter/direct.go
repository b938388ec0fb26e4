package mcpadapter

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/strictjson"
	"github.com/praxa/praxa/gateway/workflow"
)

// DirectTool is a proxy capability exposed directly: an MCP tool of its own
// beside the praxec pair (seeds/002's hot path).
//
// A call of a direct tool is the praxec.command start its describe link
// stands for (proxy_default with the call's arguments beside
// input.capability), with that call's scope (missions:write), tool
// allowlist, input schema and policy. A capability that needs no run (no
// guard, no evidence produced, no approval) takes the service's light
// path: its executor is called once and one audit event is committed
// before the answer; no run is kept. Any other is a one-move run of
// proxy_default: its guards see the evidence of that one run only, so a
// capability guarded by evidence answers GUARD_REJECTED when called
// directly, with links that start the moves producing the evidence, and
// is reached through praxec.command instead. On success the result is the
// capability's output: its text as content, the output object as
// structuredContent, and in _meta its links (io.praxa/links) and, for a
// run, the run (io.praxa/workflow). A failed upstream call answers isError
// with the upstream's message and output.
type DirectTool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the capability's input schema ({"type":"object"}
	// when nil); its root must be an object schema.
	InputSchema json.RawMessage
	// OutputSchema is the capability's declared output schema (nil:
	// none), listed as the tool's outputSchema: the gateway checks every
	// successful output, the structuredContent of the tool's result,
	// against it before answering.
	OutputSchema json.RawMessage
	// Hints are the tool's annotations (DirectTools takes the
	// capability's: those the configuration sets, the others derived from
	// the executor); nil: the cautious default, destructive and
	// open-world.
	Hints *Hints
}

// Hints are a direct tool's MCP annotations: config.ExposedCapability's
// Hints, the configured ones over those derived from the executor.
type Hints = config.Hints

// The _meta members of a direct tool's result.
const (
	WorkflowMetaKey = "io.praxa/workflow"
	LinksMetaKey    = "io.praxa/links"
)

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// addDirect registers the direct tools and returns the x-mcp-header
// bindings of those that have some, and the names registered. A tool whose
// name is not a valid MCP tool name, or is a contract tool's, is skipped
// with a log line.
func addDirect(srv *mcp.Server, backend Backend, tools []DirectTool, log *slog.Logger) (map[string][]paramBinding, map[string]bool, error) {
	prepared, params, err := prepareDirect(tools, log)
	if err != nil {
		return nil, nil, err
	}
	names := map[string]bool{}
	for _, t := range prepared {
		srv.AddTool(t, directHandler(backend, t.Name))
		names[t.Name] = true
	}
	return params, names, nil
}

// prepareDirect turns direct tools into the MCP tools a server registers,
// with the x-mcp-header bindings of those that have some. A tool whose
// name is not a valid MCP tool name, is a contract tool's or repeats
// another's is skipped with a log line, and so is one whose x-mcp-header
// annotations the MCP specification forbids (clients must leave such a
// tool out; the SDK's AddTool would panic on some); one whose input
// schema's root is not an object schema is an error.
func prepareDirect(tools []DirectTool, log *slog.Logger) ([]*mcp.Tool, map[string][]paramBinding, error) {
	log = cmp.Or(log, slog.Default())
	var out []*mcp.Tool
	params := map[string][]paramBinding{}
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
			return nil, nil, fmt.Errorf("mcpadapter: direct tool %s: the input schema's root is not an object schema", d.Name)
		}
		bindings, err := paramBindings(schema)
		if err != nil {
			log.Warn("exposeDirectly: capability not listed as an MCP tool (invalid x-mcp-header)", "capability", d.Name, "error", err)
			continue
		}
		if len(bindings) > 0 {
			params[d.Name] = bindings
		}
		h := d.Hints
		if h == nil {
			h = &Hints{Destructive: true, OpenWorld: true}
		}
		destructive, openWorld := h.Destructive, h.OpenWorld
		title := cmp.Or(h.Title, d.Title)
		tool := &mcp.Tool{Name: d.Name, Title: d.Title, Description: d.Description, InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{Title: title, ReadOnlyHint: h.ReadOnly, IdempotentHint: h.Idempotent,
				DestructiveHint: &destructive, OpenWorldHint: &openWorld}}
		if len(d.OutputSchema) > 0 {
			tool.OutputSchema = d.OutputSchema
		}
		out = append(out, tool)
	}
	return out, params, nil
}

// DirectSet holds the direct tools of MCP servers so that a configuration
// reload can replace them while the servers run: Stage checks a new set,
// and the function it returns registers the added and changed tools on
// every server the set was given to (Options.DirectSet) and removes the
// tools that are gone. A client that lists the tools afterwards sees the
// new set; a call of a removed tool answers the protocol's unknown-tool
// error. The contract's tools are never touched. Over stateless
// streamable HTTP each request sees the set in force when it arrives;
// between the registration of the new tools and the removal of the old
// ones a listing may show both for an instant, and a call of an old tool
// then is answered by the service, which already runs the new
// configuration.
type DirectSet struct {
	log *slog.Logger

	mu       sync.Mutex
	tools    []*mcp.Tool
	bindings map[string][]paramBinding // x-mcp-header bindings by tool name
	servers  []directServer
}

// directServer is one server a DirectSet registers its tools on.
type directServer struct {
	srv     *mcp.Server
	backend Backend
}

// NewDirectSet returns a set holding tools (checked as Stage checks
// them); log receives the lines of skipped tools (nil: slog.Default()).
func NewDirectSet(tools []DirectTool, log *slog.Logger) (*DirectSet, error) {
	log = cmp.Or(log, slog.Default())
	prepared, params, err := prepareDirect(tools, log)
	if err != nil {
		return nil, err
	}
	return &DirectSet{log: log, tools: prepared, bindings: params}, nil
}

// params returns the x-mcp-header bindings of the set's tool named name.
func (d *DirectSet) params(name string) []paramBinding {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bindings[name]
}

// attach registers the set's tools on srv, whose calls go to backend, and
// keeps srv for later replacements.
func (d *DirectSet) attach(srv *mcp.Server, backend Backend) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.tools {
		srv.AddTool(t, directHandler(backend, t.Name))
	}
	d.servers = append(d.servers, directServer{srv: srv, backend: backend})
}

// has reports whether the set holds a tool named name.
func (d *DirectSet) has(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Stage checks tools as the set's next tools and returns the function
// that makes them so; an error (an input schema whose root is not an
// object schema) changes nothing. Tools with unusable names are skipped
// with a log line, as at start.
func (d *DirectSet) Stage(tools []DirectTool) (apply func(), err error) {
	prepared, params, err := prepareDirect(tools, d.log)
	if err != nil {
		return nil, err
	}
	return func() { d.replace(prepared, params) }, nil
}

// replace registers the added and changed tools of next on every server
// (AddTool replaces a tool of the same name) and removes the tools of the
// current set that next lacks; a tool that did not change is left alone,
// so a reload that changes none tells no session the list changed.
func (d *DirectSet) replace(next []*mcp.Tool, params map[string][]paramBinding) {
	d.mu.Lock()
	defer d.mu.Unlock()
	current := make(map[string][]byte, len(d.tools))
	for _, t := range d.tools {
		current[t.Name] = toolJSON(t)
	}
	var changed []*mcp.Tool
	keep := make(map[string]bool, len(next))
	for _, t := range next {
		keep[t.Name] = true
		if old, ok := current[t.Name]; !ok || old == nil || !bytes.Equal(old, toolJSON(t)) {
			changed = append(changed, t)
		}
	}
	var gone []string
	for _, t := range d.tools {
		if !keep[t.Name] {
			gone = append(gone, t.Name)
		}
	}
	for _, s := range d.servers {
		for _, t := range changed {
			s.srv.AddTool(t, directHandler(s.backend, t.Name))
		}
		if len(gone) > 0 {
			s.srv.RemoveTools(gone...)
		}
	}
	d.tools, d.bindings = next, params
}

// toolJSON is a tool's wire form, to tell a changed tool from the same.
func toolJSON(t *mcp.Tool) []byte {
	b, err := json.Marshal(t)
	if err != nil {
		return nil // replace counts it as changed
	}
	return b
}

// directCaller is a backend that runs direct tools itself: Local through
// the service's typed entry point (gateway.Service.CallDirect, which takes
// the light path where the call needs no run), Remote as the
// praxec.command start it stands for, in one request (directStart). Other
// backends run it as that start through Call.
type directCaller interface {
	CallDirect(ctx context.Context, capability string, args json.RawMessage) *gateway.DirectResult
}

func directHandler(backend Backend, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if string(bytes.TrimSpace(args)) == "null" {
			args = nil // no arguments, as the run path has always read them
		}
		var r *gateway.DirectResult
		if dc, ok := backend.(directCaller); ok {
			r = dc.CallDirect(ctx, name, args)
		} else {
			r = callDirectStart(ctx, backend, name, args)
		}
		res := directAnswer(r)
		noteRefusal(ctx, res, r.Err)
		return res, nil
	}
}

// callDirectStart runs a direct call on backend as the praxec.command start
// it stands for.
func callDirectStart(ctx context.Context, backend Backend, name string, args json.RawMessage) *gateway.DirectResult {
	start, ce := directStart(name, args)
	if ce != nil {
		return &gateway.DirectResult{Err: ce}
	}
	o := backend.Call(ctx, contracts.ToolPraxecCommand, start)
	if o.Err != nil {
		return &gateway.DirectResult{Err: o.Err, TraceID: o.TraceID}
	}
	return runAnswer(o.Body, name)
}

// directStart is the one encoding of a direct call as the praxec.command
// start its describe link stands for: {"definitionId":"proxy_default",
// "input":{"capability":NAME, ...the arguments}}, the arguments' members
// copied as they came (a capability argument named capability cannot be
// sent this way: it is left out). Arguments that are not one JSON object
// are refused as the service refuses them.
func directStart(name string, args json.RawMessage) (json.RawMessage, *contracts.Error) {
	quoted, err := json.Marshal(name)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidParams, "the tool name cannot be encoded")
	}
	var b bytes.Buffer
	b.WriteString(`{"definitionId":"` + config.ProxyDefaultWorkflow + `","input":{"capability":`)
	b.Write(quoted)
	if len(bytes.TrimSpace(args)) > 0 {
		if err := strictjson.Check(args, 0); err != nil {
			return nil, contracts.AsError(err)
		}
		if firstByte(args) != '{' {
			return nil, contracts.Errorf(contracts.CodeInvalidParams, "the arguments are not a JSON object")
		}
		for n, v := range strictjson.Members(args) {
			if string(n) == "capability" {
				continue
			}
			key, err := json.Marshal(string(n))
			if err != nil {
				return nil, contracts.Errorf(contracts.CodeInvalidParams, "an argument's name cannot be encoded")
			}
			b.WriteByte(',')
			b.Write(key)
			b.WriteByte(':')
			b.Write(v)
		}
	}
	b.WriteString("}}")
	return b.Bytes(), nil
}

// runAnswer reads the projection of a one-move run as a direct call's
// answer.
func runAnswer(body json.RawMessage, name string) *gateway.DirectResult {
	var p struct {
		Workflow gateway.WorkflowRef `json:"workflow"`
		Context  struct {
			LastRun struct {
				OK     bool           `json:"ok"`
				Output map[string]any `json:"output"`
				Error  string         `json:"error"`
			} `json:"lastRun"`
		} `json:"context"`
		Links []contracts.Link `json:"links"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return &gateway.DirectResult{Err: contracts.Errorf(contracts.CodeInternal, "internal error")}
	}
	run := p.Context.LastRun
	return &gateway.DirectResult{Call: &workflow.Call{Capability: name, OK: run.OK, Output: run.Output, Error: run.Error},
		Workflow: &p.Workflow, Links: p.Links}
}

// directAnswer renders a direct call's answer as the tool's result: the
// capability's output as structuredContent and its text (the output's
// text member, else its JSON) as content; a failed upstream call is
// isError with the upstream's message and output. _meta carries the
// links (io.praxa/links) and, when the call ran as a one-move run, the
// run (io.praxa/workflow: id, definition, state, version), so a client
// can go on in it through praxec.command. A call on the light path has no
// run: its one link starts a run of proxy_default with this capability,
// for a caller that wants evidence, a runId or an idempotency key.
func directAnswer(r *gateway.DirectResult) *mcp.CallToolResult {
	if r.Err != nil {
		return Result(Outcome{Err: r.Err, TraceID: r.TraceID})
	}
	out := r.Call.Output
	if out == nil {
		out = map[string]any{}
	}
	text, _ := out["text"].(string)
	if text == "" {
		b, _ := json.Marshal(out)
		text = string(b)
	}
	links := r.Links
	if links == nil {
		links = []contracts.Link{}
	}
	meta := mcp.Meta{LinksMetaKey: links}
	if r.Workflow != nil {
		meta[WorkflowMetaKey] = r.Workflow
	}
	res := &mcp.CallToolResult{Meta: meta}
	if !r.Call.OK {
		res.IsError = true
		res.Content = []mcp.Content{&mcp.TextContent{Text: r.Call.Error + "\n" + text}}
		return res
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	res.StructuredContent = out
	return res
}

// DirectTools lists the capabilities marked exposeDirectly as direct
// tools, leaving out the imported ones their pins quarantine (they come
// back, with tools/list_changed, once an operator accepts them).
func DirectTools(caps []config.ExposedCapability) []DirectTool {
	var out []DirectTool
	for _, c := range caps {
		if !c.ExposeDirectly || c.Quarantined {
			continue
		}
		h := c.Hints()
		d := DirectTool{Name: c.ID, Title: c.Title, Description: c.Description, Hints: &h}
		if c.InputSchema != nil {
			d.InputSchema, _ = json.Marshal(c.InputSchema)
		}
		if c.OutputSchema != nil {
			d.OutputSchema, _ = json.Marshal(c.OutputSchema)
		}
		out = append(out, d)
	}
	return out
}
