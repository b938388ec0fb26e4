package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/telemetry"
)

// revisionCaching is the first MCP revision that defines ttlMs and
// cacheScope on list results (SEP-2549) and W3C trace context in _meta
// (SEP-414).
const revisionCaching = "2026-07-28"

// ListTTL is the ttlMs a list result carries, at revisions that define
// it, from a server that tells its sessions when the tool list changes
// (Options.ToolListChanged: praxa mcp over stdio, where a configuration
// reload sends notifications/tools/list_changed, which empties the
// client's cache). A server that cannot tell (stateless /mcp keeps no
// session to notify) answers ttlMs 0, immediately stale: a reload that
// changes the directly exposed tools is seen by the next tools/list, as
// before 2026-07-28.
const ListTTL = 60 * time.Second

// listTTL is the ttl of a server's list results: ListTTL when it tells
// its sessions of changes, 0 otherwise.
func listTTL(announces bool) time.Duration {
	if announces {
		return ListTTL
	}
	return 0
}

// protocolVersion is the revision a request was made at ("" when the SDK
// does not say).
func protocolVersion(req mcp.Request) string {
	if r, ok := req.(interface{ ProtocolVersion() string }); ok {
		return r.ProtocolVersion()
	}
	return ""
}

// setCacheable is the server's ServerOptions.SetCacheable: at 2026-07-28
// and later, a result may be kept ttl (see ListTTL); its cacheScope is
// "private" where the answer depends on the caller's token (tools/list
// narrowed by the token's tool allowlist), "public" otherwise
// (server/discover, the same for every caller; tools/list of a server
// that does not narrow it). Earlier revisions do not define the fields:
// stripCacheable removes them from the answer.
func setCacheable(private bool, ttl time.Duration) func(context.Context, mcp.Request, *mcp.Cacheable) {
	return func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
		if protocolVersion(req) < revisionCaching {
			return
		}
		c.TTLMs = int(ttl / time.Millisecond)
		c.CacheScope = "public"
		if _, list := req.(*mcp.ListToolsRequest); list && private {
			c.CacheScope = "private"
		}
	}
}

// stripCacheable is the outermost receiving middleware: at revisions
// before 2026-07-28 a result that carries ttlMs and cacheScope (go-sdk
// writes them at every revision) is answered without them.
func stripCacheable(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if _, ok := res.(mcp.CacheableResult); ok && err == nil && protocolVersion(req) < revisionCaching {
			return legacyResult{res}, nil
		}
		return res, err
	}
}

// legacyResult is a result answered without ttlMs and cacheScope.
type legacyResult struct{ mcp.Result }

// MarshalJSON implements json.Marshaler.
func (r legacyResult) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(r.Result)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "ttlMs")
	delete(m, "cacheScope")
	return marshalNoEscape(m)
}

// marshalNoEscape is json.Marshal without HTML escaping, as the SDK writes
// its messages.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// traceKey is the context key of the trace a request joined.
type traceKey struct{}

// revisionNoBatch is the first MCP revision without JSON-RPC batches.
const revisionNoBatch = "2025-06-18"

// joinTrace is a receiving middleware: a request whose _meta carries a
// valid W3C traceparent (SEP-414; honoured at every revision) is handled in
// that trace: the audit events of its calls carry the traceparent's trace
// id (Local reads it from the context), and join, when set, is told (praxa
// serve: telemetry.JoinTrace, so the answer's Traceparent header and the
// request's log line carry it too) unless the request may be one of a
// batch (revisions before 2025-06-18), whose HTTP answer is shared. A
// malformed traceparent is ignored, as W3C Trace Context says: the request
// keeps the trace it had.
//
// While telemetry.Tracing, each request is also an MCP server span
// (traceCall), and the span's trace is the request's trace.
func joinTrace(join func(context.Context, string) bool, registered func(name string) bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if telemetry.Tracing() {
				return traceCall(ctx, method, req, join, registered, next)
			}
			if trace, ok := requestTrace(req); ok {
				ctx = context.WithValue(ctx, traceKey{}, trace)
				if join != nil && protocolVersion(req) >= revisionNoBatch {
					join(ctx, trace)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// requestTrace reads the trace id of a request's _meta.traceparent.
func requestTrace(req mcp.Request) (string, bool) {
	p := req.GetParams()
	if p == nil {
		return "", false
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return "", false
	}
	tp, _ := p.GetMeta()["traceparent"].(string)
	return ids.ParseTraceparent(tp)
}

// joinedTrace is the trace a request joined (joinTrace), if any.
func joinedTrace(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(traceKey{}).(string)
	return t, ok
}

// Registers reports whether a server built with these options registers a
// tool named name: a contract tool of the tool set, or a direct tool. It
// bounds the tool label of /mcp's metrics (httpapi.Options.MCPTool).
func (o *Options) Registers(name string) bool {
	if _, contract := contracts.Lookup(name); contract {
		set, ok := contracts.LookupToolSet(o.toolSet())
		return ok && set.Contains(name)
	}
	if o.DirectSet != nil {
		return o.DirectSet.has(name)
	}
	for _, d := range o.Direct {
		if d.Name == name && toolNameRE.MatchString(name) {
			return true
		}
	}
	return false
}
