package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/restclient"
)

// Remote is the backend of a client of a remote gateway: every call is
// the tool's REST operation on that gateway, which decides everything.
type Remote struct {
	Client *restclient.Client
}

// Call implements Backend.
func (r *Remote) Call(ctx context.Context, tool string, args json.RawMessage) Outcome {
	resp, err := r.Client.CallTool(ctx, tool, args)
	var refused *contracts.Error
	if errors.As(err, &refused) {
		// Arguments that cannot be sent: nothing left the adapter. The
		// refusal links the next moves the gateway would have.
		if t, ok := contracts.Lookup(tool); ok {
			var decoded map[string]any
			_ = json.Unmarshal(args, &decoded)
			refused = gateway.WithNextMoves(refused, t, decoded)
		}
		return Outcome{Err: refused}
	}
	if err != nil {
		return Outcome{Err: &contracts.Error{Code: contracts.CodeUnavailable, Message: "the gateway could not be reached", Cause: err}}
	}
	if resp.Problem != nil {
		return Outcome{Err: resp.Problem.Err(), Replayed: resp.Replayed(), TraceID: resp.Problem.TraceID}
	}
	return Outcome{Body: json.RawMessage(bytes.TrimSpace(resp.Body)), Replayed: resp.Replayed()}
}

// CallDirect runs a call of a directly exposed capability on the remote
// gateway: the praxec.command start it stands for, encoded once
// (directStart) and sent as its REST operation.
func (r *Remote) CallDirect(ctx context.Context, capability string, args json.RawMessage) *gateway.DirectResult {
	start, ce := directStart(capability, args)
	if ce != nil {
		return &gateway.DirectResult{Err: ce}
	}
	t, _ := contracts.Lookup(contracts.ToolPraxecCommand)
	resp, err := r.Client.Do(ctx, t.Method, t.Path, nil, nil, start)
	if err != nil {
		return &gateway.DirectResult{Err: &contracts.Error{Code: contracts.CodeUnavailable, Message: "the gateway could not be reached", Cause: err}}
	}
	if resp.Problem != nil {
		return &gateway.DirectResult{Err: resp.Problem.Err(), TraceID: resp.Problem.TraceID}
	}
	return runAnswer(bytes.TrimSpace(resp.Body), capability)
}
