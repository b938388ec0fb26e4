package mcpadapter

import (
	"context"
	"encoding/json"

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
	// Principal, when set, binds every call to one principal (stdio). When
	// nil the principal comes from the request context, where the HTTP
	// transport's authentication put it.
	Principal *auth.Principal
	// MaxDepth bounds argument nesting (default 32).
	MaxDepth int
	// ToolSet is the tool set the server registers; policy may match on it.
	ToolSet string
	// IDs mints request and trace ids.
	IDs func(ctx context.Context) (requestID, traceID string)
}

// Call implements Backend.
func (l *Local) Call(ctx context.Context, tool string, args json.RawMessage) Outcome {
	p := l.Principal
	if p == nil {
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
