package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
)

// This file is the input requests of aura_signal_mission (multi round-trip
// requests, 2026-07-28):
//
//   - a move whose transition declares a required argument the agent
//     cannot know (its input schema's property says "x-praxa-ask": "user")
//     and whose call lacks it asks the client for it with a form
//     elicitation, before anything reaches the service; the retry carries
//     the user's answer, which becomes the argument;
//   - a move that queued an approval its human executor lets the host's
//     user grant (approver: host; gateway.Service.HostApprovable) asks the
//     client to open the gateway's approval page
//     (<public URL>/console/approvals/{approvalId}) with a URL elicitation;
//     the person signs in there on their own, and the retry reads the
//     mission back.
//
// Both bind their requestState (requeststate.go) to the principal, the
// tenant, the call and the mission's version. Clients at earlier
// revisions, clients that do not declare the elicitation mode, and a
// gateway without server.requestStateKeys get today's answers.

// AskKeyword is the input-schema keyword that marks a transition argument
// the agent cannot know and the gateway asks the host's user for:
// "x-praxa-ask": "user" on a property listed in required.
const AskKeyword = "x-praxa-ask"

// AskUser is AskKeyword's one value.
const AskUser = "user"

// ApprovalPagePath is where the gateway's approval page serves an
// approval, under the public URL: ApprovalPagePath + approvalId.
const ApprovalPagePath = "/console/approvals/"

// revisionMRTR is the first MCP revision with multi round-trip requests.
const revisionMRTR = "2026-07-28"

// The keys of the inputRequests this file issues.
const (
	inputKeyArguments = "praxa_arguments"
	inputKeyApproval  = "praxa_approval"
)

// The kinds of requestState.
const (
	stateInput    = "input"
	stateApproval = "approval"
)

// inputs asks for what a move needs (see the file comment).
type inputs struct {
	codec     *RequestStateCodec
	publicURL string
	local     *Local
}

// newInputs returns the input requests of a server, nil when it has no
// requestState codec or its backend is not in process (a remote gateway
// would need the keys too).
func newInputs(o *Options, backend Backend) *inputs {
	local, ok := backend.(*Local)
	if o.RequestState == nil || !ok {
		return nil
	}
	return &inputs{codec: o.RequestState, publicURL: strings.TrimRight(o.PublicURL, "/"), local: local}
}

// signalCall is what an input request reads of an aura_signal_mission call.
type signalCall struct {
	RunID           string         `json:"runId"`
	Signal          string         `json:"signal"`
	ExpectedVersion *int64         `json:"expectedVersion"`
	Arguments       map[string]any `json:"arguments"`
}

// callerCaps are the client capabilities of a call, nil before 2026-07-28.
func callerCaps(req *mcp.CallToolRequest) *mcp.ClientCapabilities {
	if protocolVersion(req) < revisionMRTR {
		return nil
	}
	return req.ClientCapabilities()
}

// before runs before an aura_signal_mission call reaches the service: it
// answers the call itself (done) with an input request or a refusal, or
// returns the arguments to call with (the user's answers merged in).
func (in *inputs) before(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (res *mcp.CallToolResult, out json.RawMessage, done bool) {
	caps := callerCaps(req)
	state := req.Params.RequestState
	if caps == nil {
		// Before 2026-07-28 there are no input requests (and a
		// requestState means nothing).
		return nil, args, false
	}
	var c signalCall
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // the arguments go back to the service as they came
	if dec.Decode(&c) != nil || c.RunID == "" || c.Signal == "" || c.ExpectedVersion == nil {
		return nil, args, false // the service refuses it as it stands
	}
	_, p, ce := in.local.principal(ctx)
	if ce != nil {
		return nil, args, false
	}
	bind := RequestState{Subject: p.Subject, Tenant: p.Tenant, Tool: contracts.ToolSignalMission, RunID: c.RunID, Signal: c.Signal, Version: *c.ExpectedVersion}
	if state != "" {
		return in.retry(ctx, req, c, bind, args)
	}
	if caps.Elicitation == nil || caps.Elicitation.Form == nil || !in.local.Service.AsksUser(c.Signal, AskKeyword, AskUser) {
		return nil, args, false
	}
	m, ok := in.read(ctx, c.RunID)
	if !ok || m.Workflow.Version != *c.ExpectedVersion {
		return nil, args, false
	}
	asked, schema := askedArguments(m, c.Signal, c.Arguments)
	if len(asked) == 0 {
		return nil, args, false
	}
	return in.askArguments(c, bind, asked, schema), nil, true
}

// retry serves a call that came back with a requestState: refused unless
// it verifies and binds this call; an approval's reads the mission back;
// an argument request's merges the user's answers into the arguments.
func (in *inputs) retry(ctx context.Context, req *mcp.CallToolRequest, c signalCall, bind RequestState, args json.RawMessage) (*mcp.CallToolResult, json.RawMessage, bool) {
	st, err := in.codec.Open(req.Params.RequestState)
	if err == nil {
		bind.Kind = st.Kind
		err = st.Check(bind)
	}
	if err != nil {
		return stateRefused(c.RunID, err), nil, true
	}
	if st.Kind == stateApproval {
		// The approval is decided on its page; the call's answer is the
		// mission as it is now (its own answer was the approval queued).
		// Still pending, a client that declared Tasks gets a task to wait
		// on; the approval is never offered twice in one call.
		o := in.local.Call(ctx, contracts.ToolGetMission, mustJSON(map[string]any{"runId": c.RunID}))
		if offerTask(ctx, in.local, req, contracts.ToolSignalMission, o) { // tasks.go
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil, true
		}
		return Result(o), nil, true
	}
	m, ok := in.read(ctx, c.RunID)
	if !ok {
		return nil, args, false // the service answers the move as sent
	}
	if m.Workflow.Version != st.Version {
		return stateRefused(c.RunID, ErrStateReplayed), nil, true
	}
	var answer *mcp.ElicitResult
	if r, ok := req.Params.InputResponses[inputKeyArguments].(*mcp.ElicitResult); ok {
		answer = r
	}
	if answer == nil || answer.Action != "accept" {
		// Declined, cancelled or not answered: the move goes to the
		// service as the agent sent it, which refuses what is missing.
		return nil, args, false
	}
	if c.Arguments == nil {
		c.Arguments = map[string]any{}
	}
	for _, k := range st.Asked {
		if v, ok := answer.Content[k]; ok {
			c.Arguments[k] = v
		}
	}
	if asked, schema := askedArguments(m, c.Signal, c.Arguments); len(asked) > 0 {
		// Still missing: ask again, as the MRTR pattern says.
		return in.askArguments(c, bind, asked, schema), nil, true
	}
	var all map[string]any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&all) != nil {
		return nil, args, false
	}
	all["arguments"] = c.Arguments
	return nil, mustJSON(all), false
}

// askArguments is the input request for the asked arguments.
func (in *inputs) askArguments(c signalCall, bind RequestState, asked []string, schema map[string]any) *mcp.CallToolResult {
	bind.Kind, bind.Asked = stateInput, asked
	state, err := in.codec.Seal(bind)
	if err != nil {
		return Result(Outcome{Err: &contracts.Error{Code: contracts.CodeInternal, Message: "internal error", Cause: err}})
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{inputKeyArguments: askForm(c.RunID, c.Signal, asked, schema)},
		RequestState:  state,
	}
}

// askForm is the form elicitation of the asked arguments of a move: their
// properties of the transition's input schema, without AskKeyword.
func askForm(runID, signal string, asked []string, schema map[string]any) *mcp.ElicitParams {
	props := map[string]any{}
	for _, k := range asked {
		prop, _ := schema[k].(map[string]any)
		clean := map[string]any{}
		for pk, pv := range prop {
			if pk != AskKeyword {
				clean[pk] = pv
			}
		}
		props[k] = clean
	}
	return &mcp.ElicitParams{Mode: "form",
		Message:         "The move " + signal + " of mission " + runID + " needs " + strings.Join(asked, ", ") + " from you.",
		RequestedSchema: map[string]any{"type": "object", "properties": props, "required": asked}}
}

// after runs on the service's answer to an aura_signal_mission call: an
// approval the host's user may grant, for a client that declares URL
// elicitation, becomes an input request to open its page.
func (in *inputs) after(ctx context.Context, req *mcp.CallToolRequest, o Outcome) (*mcp.CallToolResult, bool) {
	caps := callerCaps(req)
	if o.Err != nil || caps == nil {
		return nil, false
	}
	var m missionView
	if json.Unmarshal(o.Body, &m) != nil || m.RunID == "" || !in.offersPage(caps, m) {
		return nil, false
	}
	var c signalCall
	_, p, ce := in.local.principal(ctx)
	if json.Unmarshal(req.Params.Arguments, &c) != nil || c.ExpectedVersion == nil || ce != nil {
		return nil, false
	}
	state, err := in.codec.Seal(RequestState{Kind: stateApproval, Subject: p.Subject, Tenant: p.Tenant, Tool: contracts.ToolSignalMission,
		RunID: m.RunID, Signal: c.Signal, Version: *c.ExpectedVersion, Approval: m.Approval.ID})
	if err != nil {
		return nil, false
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputKeyApproval: in.approvalPage(m)}, RequestState: state}, true
}

// offersPage reports whether the mission's pending approval is offered
// to the host's user: the client declares URL elicitation, the gateway
// knows its public URL, and the approval is one the host's user may grant
// (gateway.Service.HostApprovable).
func (in *inputs) offersPage(caps *mcp.ClientCapabilities, m missionView) bool {
	return in != nil && caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil && in.publicURL != "" &&
		m.Approval != nil && in.local.Service.HostApprovable(m.Workflow.DefinitionID, m.Approval.Transition)
}

// approvalPage is the URL elicitation of the mission's pending approval.
func (in *inputs) approvalPage(m missionView) *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "url",
		Message: "The move " + m.Approval.Transition + " of mission " + m.RunID + " waits for approval " + m.Approval.ID +
			". Open the approval page, sign in, and approve or reject it there.",
		URL: in.publicURL + ApprovalPagePath + url.PathEscape(m.Approval.ID)}
}

// read reads a mission through the service (aura_get_mission: the
// caller's scopes and tenant apply, and the read is audited).
func (in *inputs) read(ctx context.Context, runID string) (missionView, bool) {
	var m missionView
	o := in.local.Call(ctx, contracts.ToolGetMission, mustJSON(map[string]any{"runId": runID}))
	if o.Err != nil || json.Unmarshal(o.Body, &m) != nil {
		return m, false
	}
	return m, true
}

// askedArguments are the arguments of the mission's legal move signal that
// its input schema marks for the user to give (required, AskKeyword: user)
// and args lacks, with the schema's properties.
func askedArguments(m missionView, signal string, args map[string]any) ([]string, map[string]any) {
	for _, l := range m.Links {
		if l.Rel != signal || l.Method != contracts.ToolSignalMission {
			continue
		}
		var s struct {
			Required   []string       `json:"required"`
			Properties map[string]any `json:"properties"`
		}
		if json.Unmarshal(l.InputSchema, &s) != nil {
			return nil, nil
		}
		var asked []string
		for _, k := range s.Required {
			prop, _ := s.Properties[k].(map[string]any)
			if _, given := args[k]; !given && prop[AskKeyword] == AskUser {
				asked = append(asked, k)
			}
		}
		slices.Sort(asked)
		return asked, s.Properties
	}
	return nil, nil
}

// stateRefused is the refusal of a requestState that does not verify or
// bind the call: nothing was done; the next move is to read the mission
// and make the move again without the state.
func stateRefused(runID string, err error) *mcp.CallToolResult {
	detail := "tampered"
	switch {
	case errors.Is(err, ErrStateExpired):
		detail = "expired"
	case errors.Is(err, ErrStateForeign):
		detail = "foreign"
	case errors.Is(err, ErrStateReplayed):
		detail = "replayed"
	}
	return Result(Outcome{Err: &contracts.Error{Code: contracts.CodeInvalidParams, Message: err.Error(),
		Hint:   "Read the mission again and make the move without this requestState; the gateway asks again for what it needs.",
		Fields: []contracts.FieldError{{Pointer: "/requestState", Keyword: "requestState", Detail: detail}},
		Links:  []contracts.Link{{Rel: "get", Title: "Read the mission", Method: contracts.ToolGetMission, Args: map[string]any{"runId": runID}}}}})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and decoded JSON always marshal
	}
	return b
}
