package mcpadapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/mcpadapter"
)

// askingRelease edits release_approval: request_release's version is for
// the user to give (x-praxa-ask: user), and approve_release's approval may
// be granted by the host's user when host is set.
func askingRelease(host bool) func(*config.Config) {
	return func(cfg *config.Config) {
		w := cfg.Workflows["release_approval"]
		ts := make([]config.Transition, len(w.Transitions))
		copy(ts, w.Transitions)
		for i := range ts {
			switch ts[i].Name {
			case "request_release":
				ts[i].InputSchema = map[string]any{"type": "object", "required": []any{"version"},
					"properties": map[string]any{"version": map[string]any{"type": "string", "minLength": 1, "title": "Release version", mcpadapter.AskKeyword: mcpadapter.AskUser}}}
			case "approve_release":
				if host {
					ex := *ts[i].Executor
					ex.Approver = config.ApproverHost
					ts[i].Executor = &ex
				}
			}
		}
		w.Transitions = ts
		cfg.Workflows["release_approval"] = w
	}
}

// approveRelease starts a release_approval mission with cs, signals
// request_release for the version release and then approve_release; it
// returns the answer to approve_release.
func approveRelease(t testing.TB, cs *mcp.ClientSession, release string) *answer {
	t.Helper()
	run, v := startRelease(t, cs)
	requested := call(t, cs, contracts.ToolSignalMission, map[string]any{"idempotencyKey": ids.Request() + "-request", "runId": run,
		"signal": "request_release", "expectedVersion": v, "arguments": map[string]any{"version": release}})
	return call(t, cs, contracts.ToolSignalMission, map[string]any{"idempotencyKey": ids.Request() + "-approve", "runId": run,
		"signal": "approve_release", "expectedVersion": version(requested)})
}

// startRelease creates a release_approval mission and returns its runId
// and version.
func startRelease(t testing.TB, cs *mcp.ClientSession) (string, int64) {
	t.Helper()
	created := call(t, cs, contracts.ToolCreateMission, map[string]any{"idempotencyKey": ids.Request() + "-create",
		"goal": "ship the release", "definitionId": "release_approval"})
	return created.str("runId"), version(created)
}

func TestInputRequestCompletesAMove(t *testing.T) {
	h := newHarness(t, &harnessOptions{edit: askingRelease(false)})
	var asked atomic.Int32
	var message string
	cs, _ := h.tasksClient(t, h.token(t, nil, nil), false, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			message = req.Params.Message
			if req.Params.Mode != "form" {
				t.Errorf("asked with mode %q, want form", req.Params.Mode)
			}
			schema, _ := json.Marshal(req.Params.RequestedSchema)
			if !strings.Contains(string(schema), `"version"`) || strings.Contains(string(schema), mcpadapter.AskKeyword) {
				t.Errorf("requested schema %s: want version, without %s", schema, mcpadapter.AskKeyword)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"version": "2.0.0"}}, nil
		}})
	run, v := startRelease(t, cs)
	// The agent cannot know the version: it moves without it, the user is
	// asked, and the move completes with the user's answer.
	got := call(t, cs, contracts.ToolSignalMission, map[string]any{"idempotencyKey": ids.Request() + "-request", "runId": run,
		"signal": "request_release", "expectedVersion": v})
	if asked.Load() != 1 || !strings.Contains(message, "version") {
		t.Errorf("the user was asked %d times (%q), want once for the version", asked.Load(), message)
	}
	ctxv, _ := got.body["context"].(map[string]any)
	if got.str("workflow.state") != "awaiting_approval" || ctxv["version"] != "2.0.0" {
		t.Errorf("the move answered %s, want awaiting_approval with version 2.0.0", got.raw)
	}
	// A move no workflow asks the user for reads nothing before it runs:
	// its trace holds the move's events only.
	trace := ids.Trace()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolSignalMission,
		Meta:      mcp.Meta{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"},
		Arguments: map[string]any{"idempotencyKey": ids.Request() + "-withdraw", "runId": run, "signal": "withdraw", "expectedVersion": version(got)}})
	if err != nil {
		t.Fatal(err)
	}
	success(t, contracts.ToolSignalMission, res)
	events := h.g.Events(t, tenantA, trace)
	if len(events) == 0 {
		t.Fatalf("no events in the withdraw's trace %s", trace)
	}
	for _, e := range events {
		if e.Tool == contracts.ToolGetMission {
			t.Errorf("a move nothing asks for read the mission first: %+v", e)
		}
	}
	// An argument the agent gave is not asked for.
	run2, v2 := startRelease(t, cs)
	call(t, cs, contracts.ToolSignalMission, map[string]any{"idempotencyKey": ids.Request() + "-request", "runId": run2,
		"signal": "request_release", "expectedVersion": v2, "arguments": map[string]any{"version": "3.0.0"}})
	if asked.Load() != 1 {
		t.Errorf("the user was asked for an argument the agent gave")
	}
}

// rawClient is a 2026-07-28 client that handles input requests itself.
func rawClient(t testing.TB, h *harness, tok string) *mcp.ClientSession {
	cs, _ := h.tasksClient(t, tok, false, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	return cs
}

func TestInputRequestStateRefused(t *testing.T) {
	h := newHarness(t, &harnessOptions{edit: askingRelease(false)})
	cs := rawClient(t, h, h.token(t, nil, nil))
	ctx := context.Background()
	run, v := startRelease(t, cs)
	args := map[string]any{"idempotencyKey": ids.Request() + "-request", "runId": run, "signal": "request_release", "expectedVersion": v}
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolSignalMission, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || first.RequestState == "" || first.InputRequests == nil {
		t.Fatalf("a move without the asked argument answered %+v, want an input request", first)
	}
	answer := mcp.InputResponseMap{"praxa_arguments": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"version": "4.0.0"}}}
	retry := func(cs *mcp.ClientSession, state string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolSignalMission, Arguments: args, InputResponses: answer, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Tampered: one character of the state changed.
	b := []byte(first.RequestState)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	for name, state := range map[string]string{"tampered": string(b), "garbage": "not a state"} {
		env := failure(t, contracts.ToolSignalMission, retry(cs, state), contracts.CodeInvalidParams)
		if len(env.Errors) != 1 || env.Errors[0].Pointer != "/requestState" || env.Errors[0].Detail != "tampered" {
			t.Errorf("%s state refused with %+v", name, env.Errors)
		}
	}
	// Foreign: another principal of the tenant, with every scope.
	bob := rawClient(t, h, h.g.Token(t, tenantA, "bob", gatewaytest.AllScopes(), nil))
	env := failure(t, contracts.ToolSignalMission, retry(bob, first.RequestState), contracts.CodeInvalidParams)
	if len(env.Errors) != 1 || env.Errors[0].Detail != "foreign" {
		t.Errorf("another principal's state refused with %+v", env.Errors)
	}
	// Nothing moved: the mission is where it was.
	if got := call(t, cs, contracts.ToolGetMission, map[string]any{"runId": run}); version(got) != v {
		t.Fatalf("a refused state moved the mission to version %d", version(got))
	}
	// The genuine state completes the move once...
	done := success(t, contracts.ToolSignalMission, retry(cs, first.RequestState))
	if done.str("workflow.state") != "awaiting_approval" {
		t.Fatalf("the answered move: %s", done.raw)
	}
	// ...and replayed after the mission moved on, with a fresh key, it is refused.
	args["idempotencyKey"] = ids.Request() + "-replay"
	env = failure(t, contracts.ToolSignalMission, retry(cs, first.RequestState), contracts.CodeInvalidParams)
	if len(env.Errors) != 1 || env.Errors[0].Detail != "replayed" {
		t.Errorf("a replayed state refused with %+v", env.Errors)
	}
}

// TestInputRequestHostApproval: an approval its executor lets the host's
// user grant is a URL elicitation of the approval page; once approved
// there, the retry answers the mission.
func TestInputRequestHostApproval(t *testing.T) {
	h := newHarness(t, &harnessOptions{edit: askingRelease(true)})
	ctx := context.Background()
	bob, err := h.verifier.Verify(ctx, h.g.Token(t, tenantA, "bob", gatewaytest.AllScopes(), nil))
	if err != nil {
		t.Fatal(err)
	}
	var opened []string
	cs, _ := h.tasksClient(t, h.token(t, nil, nil), false, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" {
				t.Errorf("an approval asked with mode %q", req.Params.Mode)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			opened = append(opened, req.Params.URL)
			// The person signs in on the page and approves there.
			pending, err := h.service.ListApprovals(ctx, bob, "pending", 10)
			if err != nil || len(pending.Approvals) != 1 {
				t.Fatalf("pending approvals %+v, %v", pending, err)
			}
			if _, err := h.service.ResolveApproval(ctx, bob, pending.Approvals[0].ID, true, "", ids.Request(), ids.Trace()); err != nil {
				t.Fatal(err)
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
	got := approveRelease(t, cs, "5.0.0")
	if len(opened) != 1 || !strings.HasPrefix(opened[0], h.g.Config.Server.PublicURL+"/console/approvals/") {
		t.Errorf("opened %v, want the approval page under %s/console/approvals/", opened, h.g.Config.Server.PublicURL)
	}
	if got.str("workflow.state") != "released" {
		t.Errorf("after the approval, the move answered %s", got.raw)
	}

	// A queue approval (the example's approver) is never offered to the
	// host's user: today's answer.
	q := newHarness(t, &harnessOptions{edit: askingRelease(false)})
	qs, _ := q.tasksClient(t, q.token(t, nil, nil), false, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("a queue approval was offered to the host's user")
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	got = approveRelease(t, qs, "5.0.0")
	if got.str("result.status") != "pending_approval" {
		t.Errorf("a queue approval answered %s", got.raw)
	}
}

// TestInputRequestHostApprovalThenTask: the host's user opened the page
// but the approval is still pending when the client retries: a client
// that declared Tasks gets a task to wait on, never the page twice.
func TestInputRequestHostApprovalThenTask(t *testing.T) {
	h := newHarness(t, &harnessOptions{edit: askingRelease(true)})
	opened := 0
	cs, rec := h.tasksClient(t, h.token(t, nil, nil), true, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			opened++
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
	run, v := startRelease(t, cs)
	requested := call(t, cs, contracts.ToolSignalMission, map[string]any{"idempotencyKey": ids.Request() + "-request", "runId": run,
		"signal": "request_release", "expectedVersion": v, "arguments": map[string]any{"version": "6.0.0"}})
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolSignalMission, Arguments: map[string]any{
		"idempotencyKey": ids.Request() + "-approve", "runId": run, "signal": "approve_release", "expectedVersion": version(requested)}}); err != nil {
		t.Fatal(err)
	}
	var task mcpadapter.Task
	if err := json.Unmarshal(rec.result("tools/call"), &task); err != nil || opened != 1 || task.ResultType != "task" || task.TaskID != run || task.Status != "working" {
		t.Errorf("page opened %d times, then %s; want once, then a working task", opened, rec.result("tools/call"))
	}
	// While it waits, the task asks for the page: input_required, its one
	// input request the approval's URL elicitation.
	waiting := getTask(t, cs, run)
	var reqs map[string]struct {
		Method string `json:"method"`
		Params struct {
			Mode string `json:"mode"`
			URL  string `json:"url"`
		} `json:"params"`
	}
	if err := json.Unmarshal(waiting.InputRequests, &reqs); err != nil || waiting.Status != "input_required" || len(reqs) != 1 {
		t.Fatalf("tasks/get while the host's user may approve: %+v (%v)", waiting, err)
	}
	var key string
	for k, r := range reqs {
		key = k
		if r.Method != "elicitation/create" || r.Params.Mode != "url" || !strings.HasPrefix(r.Params.URL, h.g.Config.Server.PublicURL+"/console/approvals/apr_") {
			t.Errorf("input request %s: %+v", k, r)
		}
	}
	// The person approves on the page; tasks/update acknowledges the
	// page's response and decides nothing; the task completes.
	ctx := context.Background()
	bob, err := h.verifier.Verify(ctx, h.g.Token(t, tenantA, "bob", gatewaytest.AllScopes(), nil))
	if err != nil {
		t.Fatal(err)
	}
	pending, err := h.service.ListApprovals(ctx, bob, "pending", 10)
	if err != nil || len(pending.Approvals) != 1 || key != "approval:"+pending.Approvals[0].ID {
		t.Fatalf("pending %+v (%v), input request key %q", pending, err, key)
	}
	if _, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.TaskAck](ctx, cs, "tasks/update",
		&mcpadapter.TaskParams{TaskID: run, InputResponses: map[string]json.RawMessage{key: json.RawMessage(`{"action":"accept"}`)}}); err != nil {
		t.Fatal(err)
	}
	if got := getTask(t, cs, run); got.Status != "input_required" {
		t.Errorf("tasks/update decided the approval: %+v", got)
	}
	if _, err := h.service.ResolveApproval(ctx, bob, pending.Approvals[0].ID, true, "", ids.Request(), ids.Trace()); err != nil {
		t.Fatal(err)
	}
	if got := getTask(t, cs, run); got.Status != "completed" || got.InputRequests != nil {
		t.Errorf("tasks/get after the approval: %+v", got)
	}
}

// TestInputRequestSelfApprovalQueue: where the approval's queue allows
// self-approval, the host's user (who may be the requester) is never
// offered the page, even with approver: host.
func TestInputRequestSelfApprovalQueue(t *testing.T) {
	edit := askingRelease(true)
	h := newHarness(t, &harnessOptions{edit: func(cfg *config.Config) {
		edit(cfg)
		cfg.Policy.AllowSelfApproval = []string{"releases"}
	}})
	cs, _ := h.tasksClient(t, h.token(t, nil, nil), false, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("a self-approvable approval was offered to the host's user")
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	got := approveRelease(t, cs, "7.0.0")
	if got.str("result.status") != "pending_approval" {
		t.Errorf("answered %s, want today's pending_approval", got.raw)
	}
}
