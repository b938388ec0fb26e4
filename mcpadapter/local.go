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
	// Bind, when set, gives the principal every call acts as and the
	// credential it was verified from (stdio: the configured credential,
	// renewed when it can be and verified again on each call, so that an
	// expired or revoked token stops working). The credential is handed
	// to the moves the call runs, so that a connection whose auth is
	// token-exchange acts as this principal; nil hands none. When Bind is
	// nil, both come from the request context, where the HTTP
	// transport's authentication put them.
	Bind func(ctx context.Context) (*auth.Principal, *auth.Credential, error)
	// Renewal says how the operator renews Bind's credential: the refusal
	// of a credential no longer accepted carries it (nil: restart the
	// server with a fresh token).
	Renewal *Renewal
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
	ctx, p, ce := l.principal(ctx)
	if ce != nil {
		return Outcome{Err: ce, TraceID: trace}
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
	ctx, p, ce := l.principal(ctx)
	if ce != nil {
		return &gateway.DirectResult{Err: ce, TraceID: trace}
	}
	r := l.Service.CallDirect(ctx, p, gateway.DirectCall{Capability: capability, Surface: gateway.SurfaceMCP,
		RequestID: rid, TraceID: trace, ToolSet: l.ToolSet, Args: l.decoder(args)})
	if r.TraceID == "" {
		r.TraceID = trace
	}
	return r
}

// principal is who a call acts as: the bound credential's principal
// (with the credential put in the returned context), or the one the HTTP
// transport's authentication put in ctx.
func (l *Local) principal(ctx context.Context) (context.Context, *auth.Principal, *contracts.Error) {
	if l.Bind != nil {
		p, cred, err := l.Bind(ctx)
		if err != nil {
			return ctx, nil, l.Renewal.refusal(err)
		}
		if cred != nil {
			ctx = auth.WithCredential(ctx, cred)
		}
		return ctx, p, nil
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		return ctx, nil, &contracts.Error{Code: contracts.CodeUnauthenticated, Message: "this call needs a bearer access token"}
	}
	return ctx, p, nil
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
