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
	// Renewal says how the operator renews the client's credential: a
	// refusal of the token (invalid-token), or a token that could not be
	// obtained, carries it. With none, the gateway's refusal stands as it
	// came.
	Renewal *Renewal
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
		return Outcome{Err: r.unsent(err)}
	}
	if resp.Problem != nil {
		return Outcome{Err: r.problem(resp), Replayed: resp.Replayed(), TraceID: resp.Problem.TraceID}
	}
	return Outcome{Body: json.RawMessage(bytes.TrimSpace(resp.Body)), Replayed: resp.Replayed()}
}

// unsent is the refusal of a call that got no answer: its token could not
// be obtained (invalid-token, with how to renew it), or the gateway could
// not be reached.
func (r *Remote) unsent(err error) *contracts.Error {
	if restclient.RenewalReason(err) != "" {
		return r.Renewal.refusal(err)
	}
	return &contracts.Error{Code: contracts.CodeUnavailable, Message: "the gateway could not be reached", Cause: err}
}

// problem is the gateway's refusal; one of the token says how to renew.
func (r *Remote) problem(resp *restclient.Response) *contracts.Error {
	e := resp.Problem.Err()
	if e.Code == contracts.CodeInvalidToken {
		e = r.Renewal.remoteRefusal(e, resp.RenewErr)
	}
	return e
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
		return &gateway.DirectResult{Err: r.unsent(err)}
	}
	if resp.Problem != nil {
		return &gateway.DirectResult{Err: r.problem(resp), TraceID: resp.Problem.TraceID}
	}
	return runAnswer(bytes.TrimSpace(resp.Body), capability)
}
