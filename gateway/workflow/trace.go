package workflow

import "context"

// The W3C trace context of the call an executor serves travels in its
// context, so that every runner sends it on (a REST traceparent header, an
// MCP request's _meta.traceparent, a command's TRACEPARENT environment
// variable) and an operator can follow a call across the hop.

type traceKey struct{}

// WithTraceparent returns ctx carrying traceparent, a W3C traceparent
// value ("00-TRACEID-SPANID-01") naming the gateway's span of the call.
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, traceparent)
}

// Traceparent returns the traceparent ctx carries, or "".
func Traceparent(ctx context.Context) string {
	s, _ := ctx.Value(traceKey{}).(string)
	return s
}
