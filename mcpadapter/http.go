package mcpadapter

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/gateway/auth"
)

// NewHTTPHandler returns the streamable HTTP handler of /mcp: a stateless
// server (protocol 2026-07-28, no session pinned to a process, so any
// replica answers any call) whose calls act as the principal the
// transport's authentication put in the request context, and whose
// tools/list shows only the tools that principal may use. The caller mounts
// it behind that authentication (httpapi does).
func NewHTTPHandler(backend *Local, opts *Options) (http.Handler, error) {
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
	srv, err := New(backend, &o)
	if err != nil {
		return nil, err
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: o.Logger}), nil
}
