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
	// Credential is Bind's token, handed to the moves a call runs so that
	// a connection whose auth is token-exchange acts as this principal
	// (nil: the one the HTTP transport put in the request context).
	Credential *auth.Credential
	// MaxDepth bounds argument nesting (default 32); MaxElements the JSON
	// values the arguments hold (default 20000).
	MaxDepth, MaxElements int
	// ToolSet is the tool set the server registers; policy may match on it.
	ToolSet string
	// IDs returns the request and trace ids of the request a call is in
	// (every runtime: telemetry.RequestID and telemetry.TraceID).
	IDs func(ctx context.Context) (requestID, traceID string)
}

// Call implements Backend.
func (l *Local) Call(ctx context.Context, tool string, args json.RawMessage) Outcome {
	rid, trace := l.ids(ctx)
	p, ce := l.principal(ctx)
	if ce != nil {
		return Outcome{Err: ce, TraceID: trace}
	}
	if l.Credential != nil {
		ctx = auth.WithCredential(ctx, l.Credential)
	}
	res := l.Service.Invoke(ctx, p, gateway.Call{
		Tool: tool, Surface: gateway.SurfaceMCP, RequestID: rid, TraceID: trace, ToolSet: l.ToolSet,
		Args: l.decoder(args),
	})
	if res.TraceID == "" {
		res.TraceID = trace
	}
	return Outcome{Body: res.Body, Err: res.Err, Replayed: res.Replayed, TraceID: res.TraceID}
}

// CallDirect runs a call of a directly exposed capability through the
// service's typed entry point (gateway.Service.CallDirect).
func (l *Local) CallDirect(ctx context.Context, capability string, args json.RawMessage) *gateway.DirectResult {
	rid, trace := l.ids(ctx)
	p, ce := l.principal(ctx)
	if ce != nil {
		return &gateway.DirectResult{Err: ce, TraceID: trace}
	}
	if l.Credential != nil {
		ctx = auth.WithCredential(ctx, l.Credential)
	}
	r := l.Service.CallDirect(ctx, p, gateway.DirectCall{Capability: capability, Surface: gateway.SurfaceMCP,
		RequestID: rid, TraceID: trace, ToolSet: l.ToolSet, Args: l.decoder(args)})
	if r.TraceID == "" {
		r.TraceID = trace
	}
	return r
}

// principal is who a call acts as: the bound credential's principal, or the
// one the HTTP transport's authentication put in ctx.
func (l *Local) principal(ctx context.Context) (*auth.Principal, *contracts.Error) {
	if l.Bind != nil {
		p, err := l.Bind(ctx)
		if err != nil {
			code := contracts.CodeInvalidToken
			if !errors.Is(err, auth.ErrInvalidToken) {
				code = contracts.CodeUnavailable
			}
			return nil, &contracts.Error{Code: code, Message: "the server's credential is no longer accepted: " + auth.Reason(err),
				Hint: "Restart the MCP server with a fresh token.", Cause: err}
		}
		return p, nil
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, &contracts.Error{Code: contracts.CodeUnauthenticated, Message: "this call needs a bearer access token"}
	}
	return p, nil
}

// ids mints the request and trace ids of a call; a trace the request
// joined through its _meta.traceparent (joinTrace) is the call's trace.
func (l *Local) ids(ctx context.Context) (requestID, traceID string) {
	if l.IDs != nil {
		requestID, traceID = l.IDs(ctx)
	}
	if trace, ok := joinedTrace(ctx); ok {
		traceID = trace
	}
	return requestID, traceID
}

// decoder decodes a call's raw arguments strictly, an absent or empty
// value as {}.
func (l *Local) decoder(args json.RawMessage) func() (map[string]any, error) {
	return func() (map[string]any, error) {
		if len(args) == 0 {
			return map[string]any{}, nil
		}
		return strictjson.DecodeObjectWith(args, strictjson.Limits{MaxDepth: l.MaxDepth, MaxElements: l.MaxElements})
	}
}
