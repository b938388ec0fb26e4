package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/telemetry"
)

// StdioRoute is the route label of the requests an MCP server on stdio
// serves (Instrument): their metrics and log lines are /mcp's, under this
// route.
const StdioRoute = "stdio"

// Instrument is the receiving middleware that does, for an MCP server on
// stdio, what package httpapi's middleware does for every HTTP request:
// add it to the server last, so that it is outermost. Each request (and
// notification) it receives gets a request id and a trace id in its
// context (telemetry.NewContext: Local's IDs, the log lines and, through
// Options.JoinTrace, a _meta.traceparent read them there); a panic of its
// handler is logged to log and answered as a JSON-RPC internal error; and
// rec records it under route StdioRoute with its MCP method and name
// (the tool of tools/call, the prompt of prompts/get, the URI of
// resources/read) and a status: 200 for a result (a tool's isError result
// included, as over HTTP), 400 for a JSON-RPC error, 500 for an internal
// error or a panic.
func Instrument(rec *telemetry.Recorder, log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			start := time.Now()
			r := &telemetry.Request{}
			r.Start(ids.Request(), ids.Trace(), nil)
			ctx = telemetry.NewContext(ctx, r)
			defer func() {
				if v := recover(); v != nil {
					log.ErrorContext(ctx, "panic serving request", "panic", fmt.Sprint(v))
					res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
				}
				rec.Record(ctx, telemetry.Observation{Route: StdioRoute, MCPMethod: method, MCPName: requestName(req),
					Status: stdioStatus(err), Duration: time.Since(start)})
			}()
			return next(ctx, method, req)
		}
	}
}

// requestName is the name a request acts on, as the Mcp-Name header of an
// HTTP request carries it: the tool of tools/call, the prompt of
// prompts/get, the URI of resources/read; "" for the others.
func requestName(req mcp.Request) string {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil {
			return r.Params.Name
		}
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			return r.Params.Name
		}
	case *mcp.ReadResourceRequest:
		if r.Params != nil {
			return r.Params.URI
		}
	}
	return ""
}

// stdioStatus is the status a request on stdio is recorded with (see
// Instrument).
func stdioStatus(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != jsonrpc.CodeInternalError {
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
