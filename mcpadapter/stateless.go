package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/strictjson"
)

// This file is /mcp's own stateless request path (DESIGN, "The MCP edge").
// go-sdk's stateless handler serves every request with a session of its
// own: it reads the body again, parses it twice, connects a ServerSession
// with a JSON-RPC connection and its reader goroutine, and reads the tool's
// schema again for its header checks, for each request. A tools/call at
// 2026-07-28 needs none of it: the request carries its protocol version,
// its client's capabilities and its identity in its own _meta, and the
// edge has already read it once, strictly (ParseEnvelope), and checked the
// headers that mirror it (checkHeaders).
//
// The path answers such a call itself: it hands the call to the same tool
// handler, through the same receiving middleware, that go-sdk's server
// would run, and writes the same JSON-RPC response as one JSON body (a
// streamable HTTP server may answer a call with application/json). What it
// takes is narrow and checked up front (take); everything else, and every
// request that does not pass every check go-sdk's handler would make of it,
// goes on to go-sdk's handler, which answers or refuses it as before:
//
//   - initialize, server/discover, tools/list, the tasks methods and every
//     other method; any revision before 2026-07-28;
//   - a call whose _meta lacks its client capabilities or holds a client
//     info that is not one; a client that declares the Tasks extension (its
//     call may be answered as a task); params other than name, arguments
//     and _meta (a task augmentation);
//   - aura_signal_mission, which may ask its client for input (input.go);
//     a tool whose arguments are mirrored in Mcp-Param-* headers; a tool
//     the server does not register;
//   - a request that go-sdk's transport refuses: not JSON by Content-Type,
//     an Accept without JSON and an event stream, a Last-Event-ID, a Host
//     that is not loopback on a loopback listener (DNS rebinding), headers
//     that do not mirror the body.
//
// TestStatelessPathMatchesSDK sends one corpus of requests to both and
// requires the same answers.

// revisionStateless is the revision whose calls carry everything in their
// own _meta (SEP-2575): the one the path serves.
const revisionStateless = "2026-07-28"

// statelessPath serves the calls it takes (see the file's comment).
type statelessPath struct {
	b *server
	// handle runs a request through the server's receiving middleware to
	// callTool, as go-sdk's session would.
	handle mcp.MethodHandler
}

func newStatelessPath(b *server) *statelessPath {
	p := &statelessPath{b: b}
	h := mcp.MethodHandler(p.callTool)
	for _, mw := range slices.Backward(b.middleware) {
		h = mw(h)
	}
	p.handle = h
	return p
}

// callTool runs a tools/call's tool handler, as go-sdk's server does for a
// tool registered with a raw handler.
func (p *statelessPath) callTool(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
	call := req.(*mcp.CallToolRequest)
	h, _ := p.b.tool(call.Params.Name) // take found it
	res, err := h(ctx, call)
	if err == nil && res != nil && res.Content == nil {
		c := *res
		c.Content = []mcp.Content{} // as the SDK answers it: never "content": null
		res = &c
	}
	return res, err
}

// statelessCall is a tools/call the path takes.
type statelessCall struct {
	id   contracts.ID
	name string
	args json.RawMessage
	meta mcp.Meta
}

// take reports whether the path answers the request r, whose body the edge
// parsed as env, and returns the call when it does.
func (p *statelessPath) take(r *http.Request, env *Envelope) (statelessCall, bool) {
	var c statelessCall
	h := r.Header
	if env.ID == nil || env.Method != "tools/call" || len(env.Batch) > 0 ||
		h.Get(headerProtocolVersion) != revisionStateless || h.Get(headerMethod) != "tools/call" ||
		len(h.Values("Last-Event-ID")) > 0 || !isJSON(h.Get("Content-Type")) || !acceptsJSONAndStream(h.Values("Accept")) ||
		!hostAllowed(r) {
		return c, false
	}
	c.id = *env.ID
	var meta json.RawMessage
	for n, raw := range strictjson.Members(env.Params) {
		switch string(n) {
		case "name":
			name, ok := strictjson.String(raw)
			if !ok {
				return c, false
			}
			c.name = name
		case "arguments":
			if t := firstByte(raw); t != '{' {
				return c, false
			}
			c.args = raw
		case "_meta":
			meta = raw
		default:
			return c, false
		}
	}
	if c.name == "" || h.Get(headerName) != c.name || c.name == contracts.ToolSignalMission || len(p.b.params(c.name)) > 0 {
		return c, false
	}
	if _, ok := p.b.tool(c.name); !ok {
		return c, false
	}
	m, ok := statelessMeta(meta)
	if !ok {
		return c, false
	}
	c.meta = m
	return c, true
}

// statelessMeta reads a call's _meta as the path needs it: its protocol
// version 2026-07-28, its client capabilities an object that declares no
// Tasks extension, its client info, when present, an object of the
// members an Implementation has. Anything else is left to go-sdk.
func statelessMeta(raw json.RawMessage) (mcp.Meta, bool) {
	if firstByte(raw) != '{' {
		return nil, false
	}
	var version, caps, info json.RawMessage
	hasInfo := false
	for n, v := range strictjson.Members(raw) {
		switch string(n) {
		case mcp.MetaKeyProtocolVersion:
			version = v
		case mcp.MetaKeyClientCapabilities:
			caps = v
		case mcp.MetaKeyClientInfo:
			info, hasInfo = v, true
		}
	}
	if v, ok := strictjson.String(version); !ok || v != revisionStateless {
		return nil, false
	}
	if firstByte(caps) != '{' {
		return nil, false
	}
	for n, v := range strictjson.Members(caps) {
		if string(n) == "extensions" {
			if firstByte(v) != '{' {
				return nil, false
			}
			for ext := range strictjson.Members(v) {
				if string(ext) == TasksExtension {
					return nil, false
				}
			}
		}
	}
	if hasInfo && !implementation(info) {
		return nil, false
	}
	v, ok := plainDecode(raw)
	out, isMap := v.(map[string]any)
	return out, ok && isMap
}

// plainDecode is what json.Unmarshal decodes raw, text strictjson.Check
// accepted, into an any (nil, booleans, strings, float64s, []any,
// map[string]any), built by strictjson's one builder without reflection;
// ok is false where json.Unmarshal fails on such text (a number beyond
// float64's range).
func plainDecode(raw []byte) (any, bool) {
	v, err := strictjson.DecodeWith(raw, strictjson.Limits{MaxDepth: maxMessageDepth, MaxElements: math.MaxInt32, Float64: true})
	return v, err == nil
}

// implementation reports whether raw is an object holding only string
// members an Implementation declares, name among them.
func implementation(raw json.RawMessage) bool {
	if firstByte(raw) != '{' {
		return false
	}
	named := false
	for n, v := range strictjson.Members(raw) {
		switch string(n) {
		case "name", "title", "version", "websiteUrl", "description":
			if _, ok := strictjson.String(v); !ok {
				return false
			}
			named = named || string(n) == "name"
		default:
			return false
		}
	}
	return named
}

func firstByte(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// acceptsJSONAndStream reports whether Accept admits both
// application/json and text/event-stream, as go-sdk's handler reads it.
func acceptsJSONAndStream(values []string) bool {
	var jsonOK, streamOK bool
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// hostAllowed is go-sdk's DNS rebinding protection: a request that reached
// a loopback listener must name a loopback Host.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback(local.String()) {
		return true
	}
	return loopback(r.Host)
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// serve answers the call c of the request r; refusal is the slot where a
// tool handler leaves a refusal for want of a scope (noteRefusal).
func (p *statelessPath) serve(w http.ResponseWriter, r *http.Request, c statelessCall, refusal *atomic.Pointer[scopeRefusal]) {
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: c.name, Arguments: c.args, Meta: c.meta},
		Extra: &mcp.RequestExtra{Header: r.Header}}
	res, err := p.handle(r.Context(), "tools/call", req)
	if ref := refusal.Load(); ref != nil && err == nil {
		writeScopeChallenge(w, c.id, ref)
		return
	}
	body, rerr := p.response(c.id, res, err)
	if rerr != nil {
		writeRPCError(w, http.StatusOK, c.id, rerr)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// response encodes the JSON-RPC response of a call with id that answered
// res or err, as go-sdk's session completes a 2026-07-28 result: its
// resultType complete and the server's Implementation in its _meta.
func (p *statelessPath) response(id contracts.ID, res mcp.Result, err error) ([]byte, *contracts.RPCError) {
	if err != nil {
		return nil, &contracts.RPCError{Code: contracts.RPCInternalError, Message: err.Error()}
	}
	meta := res.GetMeta()
	if meta == nil {
		meta = map[string]any{}
	}
	if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
		meta[mcp.MetaKeyServerInfo] = p.b.impl
		res.SetMeta(meta)
	}
	idText, merr := json.Marshal(id)
	if merr != nil {
		return nil, &contracts.RPCError{Code: contracts.RPCInternalError, Message: "the id cannot be encoded"}
	}
	var b bytes.Buffer
	b.Grow(len(idText) + 1024)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idText)
	b.WriteString(`,"result":`)
	start := b.Len()
	tool, typed := res.(*mcp.CallToolResult)
	if !typed || !appendToolResult(&b, tool) {
		result, merr := json.Marshal(res)
		if merr != nil || len(result) < 2 || result[len(result)-1] != '}' {
			return nil, &contracts.RPCError{Code: contracts.RPCInternalError, Message: "the result cannot be encoded"}
		}
		b.Write(result)
	}
	// The result's closing brace gives way to its resultType.
	b.Truncate(b.Len() - 1)
	if typed {
		if b.Len()-start > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"resultType":"complete"`)
	}
	b.WriteString("}}")
	return b.Bytes(), nil
}
