package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/strictjson"
)

// Local is the in-process backend: calls go to the gateway's service layer
// with the same strict decoding, scopes, tenancy, idempotency and audit as
// REST.
type Local struct {
	Service *gateway.Service
	// Bind, when set, gives the principal every call acts as (stdio: the
	// configured credential, verified again on each call so an expired or
	// revoked token stops working). When nil the principal comes from the
	// request context, where the HTTP transport's authentication put it.
	Bind func(ctx context.Context) (*auth.Principal, error)
	// MaxDepth bounds argument nesting (default 32).
	MaxDepth int
	// ToolSet is the tool set the server registers; policy may match on it.
	ToolSet string
	// IDs mints request and trace ids.
	IDs func(ctx context.Context) (requestID, traceID string)
}

// Call implements Backend.
func (l *Local) Call(ctx context.Context, tool string, args json.RawMessage) Outcome {
	var p *auth.Principal
	if l.Bind != nil {
		var err error
		if p, err = l.Bind(ctx); err != nil {
			code := contracts.CodeInvalidToken
			if !errors.Is(err, auth.ErrInvalidToken) {
				code = contracts.CodeUnavailable
			}
			return Outcome{Err: &contracts.Error{Code: code, Message: "the server's credential is no longer accepted: " + auth.Reason(err),
				Hint: "Restart the MCP server with a fresh token.", Cause: err}}
		}
	} else {
		var ok bool
		if p, ok = auth.FromContext(ctx); !ok {
			return Outcome{Err: &contracts.Error{Code: contracts.CodeUnauthenticated, Message: "this call needs a bearer access token"}}
		}
	}
	var rid, trace string
	if l.IDs != nil {
		rid, trace = l.IDs(ctx)
	}
	res := l.Service.Invoke(ctx, p, gateway.Call{
		Tool: tool, Surface: gateway.SurfaceMCP, RequestID: rid, TraceID: trace, ToolSet: l.ToolSet,
		Args: func() (map[string]any, error) { return strictjson.DecodeObject(args, l.MaxDepth) },
	})
	return Outcome{Body: res.Body, Err: res.Err, Replayed: res.Replayed}
}
