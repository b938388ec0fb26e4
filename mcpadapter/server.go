package mcpadapter

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/mcpadapter/mcptool"
)

// Outcome is the answer of one tool call, whichever backend gave it.
type Outcome struct {
	// Body is the JSON of a successful answer.
	Body json.RawMessage
	// Err is a refusal or failure of the call.
	Err *contracts.Error
	// Replayed says the answer was replayed for an idempotency key.
	Replayed bool
	// TraceID is the trace id an error's envelope names (traceId): the
	// call's, or for a replayed refusal the original request's.
	TraceID string
}

// Backend runs tool calls: the gateway's service in process, or a remote
// gateway through its REST API. args are the raw JSON arguments exactly as
// the client sent them.
type Backend interface {
	Call(ctx context.Context, tool string, args json.RawMessage) Outcome
}

// Options configure the MCP server. The zero value registers every tool.
type Options struct {
	// ToolSet names the contract tool set to register ("" or "all": every
	// tool; "aura", "praxec" or a named smallest set).
	ToolSet string
	// Logger receives the server's logs (never stdout under stdio).
	Logger *slog.Logger
	// Allowed, when set, narrows tools/list to the tools the caller may
	// use (its token's tool allowlist); calls outside it are refused by the
	// service whatever the list shows.
	Allowed func(ctx context.Context, tool string) bool
	// Direct lists the capabilities exposed directly: each becomes an MCP
	// tool of its own (see DirectTool).
	Direct []DirectTool
	// DirectSet, when set, holds the direct tools instead of Direct, so
	// that a configuration reload can replace them (see DirectSet).
	DirectSet *DirectSet
	// ToolListChanged advertises tools.listChanged: the server notifies
	// its sessions when DirectSet's tools change (stdio; stateless /mcp
	// keeps no session to notify).
	ToolListChanged bool
	// RequestState, when set, lets the server ask 2026-07-28 clients for
	// what a move needs with input requests (input.go), their
	// requestState protected by its keys; without it, no input request is
	// made. Only the in-process backend (Local) asks.
	RequestState *RequestStateCodec
	// PublicURL is the gateway's public base URL, under which the approval
	// page of a host-approvable approval is offered (ApprovalPagePath);
	// empty, approvals are never offered to the host's user.
	PublicURL string
	// JoinTrace, when set, is told the trace id of a request whose _meta
	// carries a valid W3C traceparent, before the request is handled
	// (praxa serve and praxa mcp: telemetry.JoinTrace). The audit events
	// of the request's calls carry that trace whether it is set or not.
	JoinTrace func(ctx context.Context, trace string) bool
	// CallTimeout, when positive, bounds each tools/call of a contract
	// tool as server.limits.requestTimeout bounds its /v8 route (praxa
	// serve sets it for /mcp): a move still running when it passes goes
	// on, and the call answers 504 outcome-unknown, or a task to a client
	// that declared the Tasks extension (tasks.go). Direct tools are not
	// bounded. Zero: no call is bounded.
	CallTimeout time.Duration
	// MaxBodyBytes bounds a request body on /mcp (NewHTTPHandler), as
	// server.limits.maxBodyBytes bounds /v8's: praxa serve sets both from
	// that one setting. Zero: config.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SDKOnly serves every /mcp request (NewHTTPHandler) with go-sdk's
	// stateless handler, leaving out the stateless request path
	// (stateless.go): the differential test and the benchmarks compare
	// the two.
	SDKOnly bool
}

// ReplayedMetaKey marks, in a result's _meta, an answer replayed for an
// idempotency key (REST says Idempotent-Replayed: true).
const ReplayedMetaKey = "io.praxa/replayed"

// New builds an MCP server that registers the contract's tools, with their
// input and output schemas and annotations exactly as contracts declares
// them, and hands every call to backend. The backend validates: the SDK's
// raw registration does none.
func New(backend Backend, opts *Options) (*mcp.Server, error) {
	b, err := newServer(backend, opts)
	if err != nil {
		return nil, err
	}
	return b.srv, nil
}

// toolSet is the name of the tool set o registers: ToolSet, or
// contracts.SetAll when unset.
func (o *Options) toolSet() string { return cmp.Or(o.ToolSet, contracts.SetAll) }

// server is what newServer builds: the SDK's server, and the same parts for
// the stateless request path (stateless.go), which serves what needs no
// session without the SDK's per-request session.
type server struct {
	srv *mcp.Server
	// params returns the x-mcp-header bindings of the tool of that name
	// (none for a tool the server does not register).
	params func(name string) []paramBinding
	// tool returns the handler the server registers for the tool of that
	// name, false for a name it does not register.
	tool func(name string) (mcp.ToolHandler, bool)
	// middleware is the server's receiving middleware, outermost first.
	middleware []mcp.Middleware
	// impl is the server's Implementation (its serverInfo).
	impl *mcp.Implementation
}

// newServer is New, returning the server's parts too.
func newServer(backend Backend, opts *Options) (*server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	set, ok := contracts.LookupToolSet(o.toolSet())
	if !ok {
		return nil, fmt.Errorf("mcpadapter: unknown tool set %q", o.toolSet())
	}
	impl := &mcp.Implementation{Name: contracts.ServerName, Title: "Praxa gateway", Version: contracts.ServerVersion}
	srv := mcp.NewServer(impl,
		&mcp.ServerOptions{Logger: o.Logger, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: o.ToolListChanged},
			Extensions: map[string]any{TasksExtension: map[string]any{}}},
			SetCacheable: setCacheable(o.Allowed != nil, listTTL(o.ToolListChanged)),
			Instructions: "Praxa puts governed tools behind one contract. Start with praxec.query and no arguments, " +
				"then follow the links[] of each answer: copy a link's args verbatim as the next call."})
	ask := newInputs(&o, backend) // input.go
	params := map[string][]paramBinding{}
	handlers := map[string]mcp.ToolHandler{}
	for t := range contracts.All() {
		if !set.Contains(t.Name) {
			continue
		}
		b, err := paramBindings(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("mcpadapter: contract tool %s: %w", t.Name, err)
		}
		if len(b) > 0 {
			params[t.Name] = b
		}
		handlers[t.Name] = handler(backend, t.Name, ask)
		srv.AddTool(mcptool.Tool(t), handlers[t.Name])
	}
	lookup := func(name string) []paramBinding { return params[name] }
	var direct func(name string) bool
	if o.DirectSet != nil {
		o.DirectSet.attach(srv, backend)
		lookup = func(name string) []paramBinding {
			if b, ok := params[name]; ok {
				return b
			}
			return o.DirectSet.params(name)
		}
		direct = o.DirectSet.has
	} else {
		bindings, names, err := addDirect(srv, backend, o.Direct, o.Logger)
		if err != nil {
			return nil, err
		}
		maps.Copy(params, bindings)
		direct = func(name string) bool { return names[name] }
	}
	if err := addTaskMethods(srv, backend, ask); err != nil { // tasks.go
		return nil, err
	}
	// Outermost first: the trace is joined before anything runs, and the
	// cache fields are stripped from the final result; the call's own
	// deadline is innermost.
	var middleware []mcp.Middleware
	var tool func(name string) (mcp.ToolHandler, bool)
	registered := func(name string) bool { _, ok := tool(name); return ok }
	middleware = append(middleware, stripCacheable, joinTrace(o.JoinTrace, registered))
	if o.Allowed != nil {
		middleware = append(middleware, narrowToolList(o.Allowed))
	}
	middleware = append(middleware, answerAsTask)
	if o.CallTimeout > 0 {
		middleware = append(middleware, boundCalls(o.CallTimeout))
	}
	srv.AddReceivingMiddleware(middleware...)
	tool = func(name string) (mcp.ToolHandler, bool) {
		if h, ok := handlers[name]; ok {
			return h, true
		}
		if direct(name) {
			return directHandler(backend, name), true
		}
		return nil, false
	}
	return &server{srv: srv, params: lookup, tool: tool, middleware: middleware, impl: impl}, nil
}

// boundCalls gives every tools/call of a contract tool a deadline d from
// its start, as /v8 bounds the same tools' routes. Direct tools (which
// have no route) are not bounded: their light path has no lease to
// outlive the call under, so a deadline would cut the executor off.
func boundCalls(d time.Duration) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil {
				return next(ctx, method, req)
			}
			if _, contract := contracts.Lookup(call.Params.Name); !contract {
				return next(ctx, method, req)
			}
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			return next(ctx, method, req)
		}
	}
}

// narrowToolList filters tools/list answers to the tools the caller may use.
func narrowToolList(allowed func(context.Context, string) bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
				kept := list.Tools[:0:0]
				for _, t := range list.Tools {
					if allowed(ctx, t.Name) {
						kept = append(kept, t)
					}
				}
				list.Tools = kept
			}
			return res, err
		}
	}
}

func handler(backend Backend, name string, ask *inputs) mcp.ToolHandler {
	if name != contracts.ToolSignalMission {
		ask = nil
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if ask != nil {
			res, merged, done := ask.before(ctx, req, args) // input.go
			if done {
				return res, nil
			}
			args = merged
		}
		o := backend.Call(ctx, name, args)
		if ask != nil {
			if res, ok := ask.after(ctx, req, o); ok {
				return res, nil
			}
		}
		if offerTask(ctx, backend, req, name, o) { // tasks.go: answerAsTask answers
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
		}
		res := Result(o)
		noteRefusal(ctx, res, o.Err)
		return res, nil
	}
}

// Result renders an outcome as an MCP tool result: structuredContent plus a
// text rendering on success; on a refusal, isError with the seeds/000
// envelope {error:{code,message,hint}, links, traceId} as text and no
// structuredContent (clients validate any structuredContent against the
// output schema, errors included). It is the one place MCP errors are made.
func Result(o Outcome) *mcp.CallToolResult {
	if o.Err != nil {
		env := o.Err.Envelope()
		env.TraceID = o.TraceID
		if o.Err.Code == contracts.CodeInternal {
			env.Error.Message, env.Error.Hint, env.Fields = "internal error", "", nil
		}
		b, err := json.Marshal(env)
		if err != nil {
			b = []byte(`{"error":{"code":"internal","message":"internal error"},"links":[]}`)
		}
		r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
		if o.Replayed {
			r.Meta = mcp.Meta{ReplayedMetaKey: true}
		}
		return r
	}
	r := &mcp.CallToolResult{StructuredContent: o.Body, Content: []mcp.Content{&mcp.TextContent{Text: string(o.Body)}}}
	if o.Replayed {
		r.Meta = mcp.Meta{ReplayedMetaKey: true}
	}
	return r
}
