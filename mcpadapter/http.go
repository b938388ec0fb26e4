package mcpadapter

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
)

// NewHTTPHandler returns the streamable HTTP handler of /mcp: a stateless
// server (protocol 2026-07-28, no session pinned to a process, so any
// replica answers any call) whose calls act as the principal the
// transport's authentication put in the request context, and whose
// tools/list shows only the tools that principal may use. The caller mounts
// it behind that authentication (httpapi does).
func NewHTTPHandler(backend Backend, opts *Options) (http.Handler, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Allowed == nil {
		o.Allowed = func(ctx context.Context, tool string) bool {
			p, ok := auth.FromContext(ctx)
			return ok && p.AllowsTool(tool)
		}
	}
	// Stateless, every request is a session of its own, which the SDK
	// logs at Info three times (connecting, connected, disconnected): no
	// news for an operator, and three writes per call. Its warnings and
	// errors are kept; the gateway logs the request itself.
	if o.Logger != nil {
		o.Logger = slog.New(minLevel{Handler: o.Logger.Handler(), min: slog.LevelWarn})
	}
	b, err := newServer(backend, &o)
	if err != nil {
		return nil, err
	}
	maxBody := o.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = config.DefaultMaxBodyBytes
	}
	// The edge (edge.go) reads each body within the limit and strictly
	// (envelope.go), checks the headers that mirror the body where the
	// SDK does not (headers.go), answers the SDK's text/plain refusals as
	// JSON-RPC errors and a tools/call refused for want of a scope as a 403
	// scope challenge. The SDK gets the same limit, so it refuses no body
	// the edge let through.
	edge := rpcEdge{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.srv },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: o.Logger, MaxRequestBodyBytes: maxBody}),
		params: b.params, maxBody: maxBody}
	if !o.SDKOnly {
		edge.stateless = newStatelessPath(b) // stateless.go
	}
	return edge, nil
}

// minLevel is a slog handler that drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
