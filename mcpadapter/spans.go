package mcpadapter

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
)

// rpcIDKey is the context key of the JSON-RPC id of the one request an
// HTTP body carries (the edge puts it there while telemetry.Tracing).
type rpcIDKey struct{}

// traceCall serves a request as an MCP server span (OpenTelemetry's MCP
// semantic conventions), while telemetry.Tracing: its parent is the
// request's _meta.traceparent when valid (SEP-414; a remote parent,
// sampled by ratio like a root, with a link to the HTTP request's span),
// the HTTP request's span otherwise (none on stdio). The span's trace is
// the request's: the audit events of its calls carry it (Local reads it
// from the context), and join is told it as joinTrace tells it a
// traceparent's. It records mcp.server.operation.duration too.
func traceCall(ctx context.Context, method string, req mcp.Request, join func(context.Context, string) bool,
	registered func(name string) bool, next mcp.MethodHandler) (res mcp.Result, err error) {
	start := time.Now()
	parent := ctx
	opts := make([]trace.SpanStartOption, 1, 2)
	opts[0] = trace.WithSpanKind(trace.SpanKindServer)
	meta := requestMeta(req)
	if _, ok := meta["traceparent"].(string); ok {
		remote := telemetry.Propagator().Extract(ctx, telemetry.MetaCarrier(meta))
		if sc := trace.SpanContextFromContext(remote); sc.IsValid() && sc.IsRemote() {
			if l := trace.LinkFromContext(ctx); l.SpanContext.IsValid() {
				opts = append(opts, trace.WithLinks(l))
			}
			parent = remote
		}
	}
	boundedMethod := telemetry.MCPMethod(method)
	name, boundedTool := requestName(req), ""
	if _, call := req.(*mcp.CallToolRequest); call && name != "" {
		boundedTool = "_OTHER"
		if registered != nil && registered(name) {
			boundedTool = name
		}
	}
	spanName := boundedMethod
	if boundedTool != "" {
		spanName += " " + boundedTool
	}
	ctx, span := tracing.Tracer().Start(parent, spanName, opts...)
	traceID := span.SpanContext().TraceID().String()
	ctx = context.WithValue(ctx, traceKey{}, traceID)
	if join != nil && protocolVersion(req) >= revisionNoBatch {
		join(ctx, traceID)
	}
	recording := span.IsRecording()
	if recording {
		attrs := make([]attribute.KeyValue, 0, 6)
		attrs = append(attrs, tracing.KeyMCPMethod.String(boundedMethod))
		if boundedTool != "" {
			attrs = append(attrs, tracing.KeyToolName.String(tracing.Bounded(name)))
		}
		if id, ok := ctx.Value(rpcIDKey{}).(string); ok {
			attrs = append(attrs, tracing.KeyJSONRPCRequestID.String(tracing.Bounded(id)))
		}
		if v := protocolVersion(req); v != "" {
			attrs = append(attrs, tracing.KeyMCPProtocolVersion.String(tracing.Bounded(v)))
		}
		transport := "pipe"
		if x := req.GetExtra(); x != nil && x.Header != nil {
			transport = "tcp"
		}
		attrs = append(attrs, tracing.KeyNetworkTransport.String(transport))
		span.SetAttributes(attrs...)
	}
	defer func() {
		errType := operationError(res, err)
		if errType != "" && recording {
			span.SetAttributes(tracing.KeyErrorType.String(errType))
			span.SetStatus(codes.Error, "")
		}
		span.End()
		telemetry.RecordMCPOperation(ctx, time.Since(start), boundedMethod, boundedTool, errType)
	}()
	return next(ctx, method, req)
}

// operationError is the error.type of a request that answered res or err:
// the JSON-RPC error's code, tool_error for a tool's result marked
// isError, _OTHER for any other error, "" for a success.
func operationError(res mcp.Result, err error) string {
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return strconv.FormatInt(we.Code, 10)
		}
		return "_OTHER"
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
		return "tool_error"
	}
	return ""
}

// requestMeta is the _meta of a request's params, nil when it has none.
func requestMeta(req mcp.Request) mcp.Meta {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// Traced is the receiving middleware that makes every request a go-sdk
// MCP server serves an MCP server span while telemetry.Tracing (see
// traceCall): for a server other than the gateway's own, whose New adds
// it already. registered reports whether the server registers a tool of
// that name (nil: none), the names spans and metrics are labelled with.
func Traced(registered func(name string) bool) mcp.Middleware {
	return joinTrace(nil, registered)
}
