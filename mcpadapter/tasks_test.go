package mcpadapter_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/mcpadapter"
)

// resultRecorder is an HTTP transport that adds a bearer token and keeps the
// JSON-RPC result of the last answer to each method: go-sdk's client
// decodes a tools/call answer into a CallToolResult, which has no place
// for a CreateTaskResult's members, so the tests read them here.
type resultRecorder struct {
	token string
	base  http.RoundTripper
	mu    sync.Mutex
	last  map[string]json.RawMessage
}

func (r *resultRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+r.token)
	method := req.Header.Get("Mcp-Method")
	res, err := r.base.RoundTrip(req)
	if err != nil || method == "" {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(b))
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	// The answer is one JSON message or an SSE stream of them.
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			line = data
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result != nil {
			r.mu.Lock()
			if r.last == nil {
				r.last = map[string]json.RawMessage{}
			}
			r.last[method] = msg.Result
			r.mu.Unlock()
		}
	}
	return res, nil
}

func (r *resultRecorder) result(method string) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[method]
}

// tasksClient connects a 2026-07-28 client to /mcp that declares the
// Tasks extension when tasks is true, and can send the tasks/* methods.
func (h *harness) tasksClient(t testing.TB, tok string, tasks bool, opts *mcp.ClientOptions) (*mcp.ClientSession, *resultRecorder) {
	t.Helper()
	o := &mcp.ClientOptions{}
	if opts != nil {
		*o = *opts
	}
	if tasks {
		caps := &mcp.ClientCapabilities{}
		if o.Capabilities != nil {
			c := *o.Capabilities
			caps = &c
		}
		caps.AddExtension(mcpadapter.TasksExtension, map[string]any{})
		o.Capabilities = caps
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpadapter-tasks-test", Version: "0"}, o)
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		var err error
		if m == "tasks/get" {
			err = mcp.AddSendingCustomMethod[*mcpadapter.TaskParams, *mcpadapter.Task](c, m)
		} else {
			err = mcp.AddSendingCustomMethod[*mcpadapter.TaskParams, *mcpadapter.TaskAck](c, m)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	rec := &resultRecorder{token: tok, base: h.client.Transport}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + "/mcp",
		HTTPClient: &http.Client{Transport: rec}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	return cs, rec
}

// parkRelease creates a release_approval mission, requests the release
// and fires approve_release, which waits for a person: it returns the
// runId and the tools/call answer of approve_release.
func parkRelease(t testing.TB, cs *mcp.ClientSession) (string, *mcp.CallToolResult) {
	t.Helper()
	created := call(t, cs, contracts.ToolCreateMission, map[string]any{"idempotencyKey": ids.Request() + "-create",
		"goal": "ship the release", "definitionId": "release_approval"})
	run := created.str("runId")
	requested := call(t, cs, contracts.ToolSignalMission, map[string]any{"idempotencyKey": ids.Request() + "-request", "runId": run,
		"signal": "request_release", "expectedVersion": version(created), "arguments": map[string]any{"version": "1.2.3"}})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolSignalMission, Arguments: map[string]any{
		"idempotencyKey": ids.Request() + "-approve", "runId": run, "signal": "approve_release", "expectedVersion": version(requested)}})
	if err != nil {
		t.Fatal(err)
	}
	return run, res
}

// version is the workflow version of a mission answer.
func version(a *answer) int64 {
	w, _ := a.body["workflow"].(map[string]any)
	switch v := w["version"].(type) {
	case float64:
		return int64(v)
	case json.Number:
		n, _ := v.Int64()
		return n
	}
	return -1
}

func getTask(t testing.TB, cs *mcp.ClientSession, id string) *mcpadapter.Task {
	t.Helper()
	task, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.Task](context.Background(), cs, "tasks/get", &mcpadapter.TaskParams{TaskID: id})
	if err != nil {
		t.Fatalf("tasks/get %s: %v", id, err)
	}
	return task
}

func TestTasksMissionFollowedToCompletion(t *testing.T) {
	h := newHarness(t, nil)
	cs, rec := h.tasksClient(t, h.token(t, nil, nil), true, nil)

	// server/discover declares the extension.
	if _, ok := cs.InitializeResult().Capabilities.Extensions[mcpadapter.TasksExtension]; !ok {
		t.Errorf("the server's capabilities do not declare %s: %+v", mcpadapter.TasksExtension, cs.InitializeResult().Capabilities)
	}
	run, _ := parkRelease(t, cs)
	var created mcpadapter.Task
	if err := json.Unmarshal(rec.result("tools/call"), &created); err != nil {
		t.Fatal(err)
	}
	if created.ResultType != "task" || created.TaskID != run || created.Status != "working" || created.CreatedAt == "" || created.PollIntervalMs <= 0 {
		t.Fatalf("approve_release answered %s, want a working task %s", rec.result("tools/call"), run)
	}
	if !strings.Contains(string(rec.result("tools/call")), `"ttlMs":null`) {
		t.Errorf("a task's ttlMs is required (null for unlimited): %s", rec.result("tools/call"))
	}
	if got := getTask(t, cs, run); got.Status != "working" || got.ResultType != "complete" || got.Result != nil {
		t.Errorf("tasks/get while the approval is pending: %+v", got)
	}

	// An operator approves through the service, as the console and REST do.
	ctx := context.Background()
	bob, err := h.verifier.Verify(ctx, h.g.Token(t, tenantA, "bob", gatewaytest.AllScopes(), nil))
	if err != nil {
		t.Fatal(err)
	}
	pending, err := h.service.ListApprovals(ctx, bob, "pending", 10)
	if err != nil || len(pending.Approvals) != 1 || pending.Approvals[0].RunID != run {
		t.Fatalf("pending approvals %+v, %v", pending, err)
	}
	if _, err := h.service.ResolveApproval(ctx, bob, pending.Approvals[0].ID, true, "ship it", ids.Request(), ids.Trace()); err != nil {
		t.Fatal(err)
	}
	done := getTask(t, cs, run)
	if done.Status != "completed" {
		t.Fatalf("tasks/get after the approval: %+v", done)
	}
	var result struct {
		StructuredContent struct {
			RunID    string `json:"runId"`
			Workflow struct {
				State string `json:"state"`
			} `json:"workflow"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(done.Result, &result); err != nil || result.IsError || result.StructuredContent.Workflow.State != "released" || result.StructuredContent.RunID != run {
		t.Errorf("completed task's result %s (%v), want the released mission", done.Result, err)
	}

	// Another tenant's token knows no such task.
	other, _ := h.tasksClient(t, h.g.Token(t, "globex", userA, gatewaytest.AllScopes(), nil), true, nil)
	_, err = mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.Task](ctx, other, "tasks/get", &mcpadapter.TaskParams{TaskID: run})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("tasks/get of another tenant's mission: %v, want -32602 task not found", err)
	}
	// A token without missions:read is refused by the service, with its envelope.
	ro, _ := h.tasksClient(t, h.token(t, scopesWithout(contracts.ScopeMissionsRead), nil), true, nil)
	_, err = mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.Task](ctx, ro, "tasks/get", &mcpadapter.TaskParams{TaskID: run})
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcpadapter.RPCTaskRefused || !strings.Contains(string(rpcErr.Data), string(contracts.CodeInsufficientScope)) {
		t.Errorf("tasks/get without missions:read: %v, want %d with the insufficient-scope envelope", err, mcpadapter.RPCTaskRefused)
	}
}

func TestTasksCancel(t *testing.T) {
	h := newHarness(t, nil)
	cs, rec := h.tasksClient(t, h.token(t, nil, nil), true, nil)
	run, _ := parkRelease(t, cs)
	if !strings.Contains(string(rec.result("tools/call")), `"resultType":"task"`) {
		t.Fatalf("approve_release answered %s, want a task", rec.result("tools/call"))
	}
	ctx := context.Background()
	for range 2 { // a retried cancel is acknowledged again
		ack, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.TaskAck](ctx, cs, "tasks/cancel", &mcpadapter.TaskParams{TaskID: run})
		if err != nil || ack.ResultType != "complete" {
			t.Fatalf("tasks/cancel: %+v, %v", ack, err)
		}
	}
	if got := getTask(t, cs, run); got.Status != "cancelled" {
		t.Errorf("tasks/get after tasks/cancel: %+v", got)
	}
	// The mission is cancelled, as REST reads it, and the cancel audited
	// as aura_cancel_mission over MCP.
	got := call(t, cs, contracts.ToolGetMission, map[string]any{"runId": run})
	if s := got.str("workflow.state"); s != "cancelled" {
		t.Errorf("mission state %s after tasks/cancel", s)
	}
	// tasks/update is acknowledged for a known task (no inputRequests are
	// outstanding, so its responses are ignored), refused for an unknown one.
	if _, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.TaskAck](ctx, cs, "tasks/update",
		&mcpadapter.TaskParams{TaskID: run, InputResponses: map[string]json.RawMessage{"nope": json.RawMessage(`{"action":"accept"}`)}}); err != nil {
		t.Errorf("tasks/update: %v", err)
	}
	var rpcErr *jsonrpc.Error
	if _, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.TaskAck](ctx, cs, "tasks/cancel", &mcpadapter.TaskParams{TaskID: "no-such-run"}); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("tasks/cancel of an unknown task: %v, want -32602", err)
	}
}

// TestTasksUndeclared: a client that does not declare the extension gets
// today's answers: the mission answer itself, and -32021 for tasks/*.
func TestTasksUndeclared(t *testing.T) {
	h := newHarness(t, nil)
	cs, rec := h.tasksClient(t, h.token(t, nil, nil), false, nil)
	run, res := parkRelease(t, cs)
	a := success(t, contracts.ToolSignalMission, res)
	if s := a.str("result.status"); s != "pending_approval" || a.str("runId") != run {
		t.Errorf("approve_release without the extension answered %s", a.raw)
	}
	if strings.Contains(string(rec.result("tools/call")), `"task"`) {
		t.Errorf("a client without the extension got a task: %s", rec.result("tools/call"))
	}
	_, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.Task](context.Background(), cs, "tasks/get", &mcpadapter.TaskParams{TaskID: run})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(rpcErr.Data), mcpadapter.TasksExtension) {
		t.Errorf("tasks/get without the extension: %v, want -32021 naming it", err)
	}
}

// TestTasksSessionDeclared: over a session (praxa mcp's stdio), a client
// at 2025-11-25 declares the extension once, in initialize's capabilities
// (go-sdk reads them for every request of the session); one that does not
// gets today's answer.
func TestTasksSessionDeclared(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.token(t, nil, nil)
	for _, declared := range []bool{true, false} {
		local := &mcpadapter.Local{Service: h.service, ToolSet: contracts.SetAll,
			Bind: h.bind(tok),
			IDs:  func(context.Context) (string, string) { return ids.Request(), ids.Trace() }}
		srv, err := mcpadapter.New(local, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		opts := &mcp.ClientOptions{}
		if declared {
			opts.Capabilities = &mcp.ClientCapabilities{Extensions: map[string]any{mcpadapter.TasksExtension: map[string]any{}}}
		}
		var wire gatewaytest.LogBuffer
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-like", Version: "0"}, opts).Connect(ctx,
			&mcp.LoggingTransport{Transport: ct, Writer: &wire}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
			t.Fatalf("negotiated %s", v)
		}
		run, res := parkRelease(t, cs)
		gotTask := strings.Contains(wire.String(), `"resultType":"task","taskId":"`+run+`"`)
		if gotTask != declared {
			t.Errorf("declared %v: task answer %v (wire %s)", declared, gotTask, wire.String())
		}
		if !declared {
			if a := success(t, contracts.ToolSignalMission, res); a.str("result.status") != "pending_approval" {
				t.Errorf("undeclared: %s", a.raw)
			}
		}
		cs.Close()
		ss.Wait()
	}
}

// TestTasksUpdateFiresTheMove: a mission whose next move needs what only
// the user gives (x-praxa-ask: user on every required argument) is a task
// input_required with a form per such move, to a client that declares
// form elicitation; tasks/update with the accepted form fires the move
// through aura_signal_mission, once however often the update is retried;
// responses to keys that are not outstanding change nothing.
func TestTasksUpdateFiresTheMove(t *testing.T) {
	h := newHarness(t, &harnessOptions{edit: askingRelease(false)})
	tok := h.token(t, nil, nil)
	cs, _ := h.tasksClient(t, tok, true, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	ctx := context.Background()
	run, v := startRelease(t, cs)

	task := getTask(t, cs, run)
	key := fmt.Sprintf("move:request_release@%d", v)
	var reqs map[string]struct {
		Method string `json:"method"`
		Params struct {
			Mode            string `json:"mode"`
			Message         string `json:"message"`
			RequestedSchema struct {
				Required   []string                  `json:"required"`
				Properties map[string]map[string]any `json:"properties"`
			} `json:"requestedSchema"`
		} `json:"params"`
	}
	if task.Status != "input_required" || json.Unmarshal(task.InputRequests, &reqs) != nil {
		t.Fatalf("tasks/get of a mission whose next move asks the user: %+v (%s)", task, task.InputRequests)
	}
	form, ok := reqs[key]
	if !ok || form.Method != "elicitation/create" || form.Params.Mode != "form" || len(form.Params.RequestedSchema.Required) != 1 ||
		form.Params.RequestedSchema.Required[0] != "version" || form.Params.RequestedSchema.Properties["version"][mcpadapter.AskKeyword] != nil {
		t.Fatalf("inputRequests %s, want the form of %s asking for version", task.InputRequests, key)
	}

	// A response to a key that is not outstanding, and a declined form,
	// change nothing.
	update := func(responses map[string]string) {
		t.Helper()
		raw := map[string]json.RawMessage{}
		for k, v := range responses {
			raw[k] = json.RawMessage(v)
		}
		if _, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.TaskAck](ctx, cs, "tasks/update",
			&mcpadapter.TaskParams{TaskID: run, InputResponses: raw}); err != nil {
			t.Fatalf("tasks/update: %v", err)
		}
	}
	update(map[string]string{"move:request_release@99": `{"action":"accept","content":{"version":"9.9.9"}}`, key: `{"action":"decline"}`})
	if got := call(t, cs, contracts.ToolGetMission, map[string]any{"runId": run}); version(got) != v {
		t.Fatalf("a response not outstanding moved the mission: %s", got.raw)
	}

	// The accepted form fires the move, audited as aura_signal_mission in
	// the update's trace; a retried update does not move again.
	accepted := map[string]string{key: `{"action":"accept","content":{"version":"2.0.0"}}`}
	trace := ids.Trace()
	if _, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.TaskAck](ctx, cs, "tasks/update", &mcpadapter.TaskParams{
		ParamsBase: mcp.ParamsBase{Meta: mcp.Meta{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}}, TaskID: run,
		InputResponses: map[string]json.RawMessage{key: json.RawMessage(accepted[key])}}); err != nil {
		t.Fatalf("tasks/update: %v", err)
	}
	update(accepted)
	signalled := false
	for _, e := range h.g.Events(t, tenantA, trace) {
		signalled = signalled || e.Tool == contracts.ToolSignalMission && e.Outcome == "allowed" && e.RunID == run
	}
	if !signalled {
		t.Errorf("no aura_signal_mission event of run %s in the update's trace: %+v", run, h.g.Events(t, tenantA, trace))
	}
	got := call(t, cs, contracts.ToolGetMission, map[string]any{"runId": run})
	ctxv, _ := got.body["context"].(map[string]any)
	if got.str("workflow.state") != "awaiting_approval" || ctxv["version"] != "2.0.0" || version(got) != v+1 {
		t.Errorf("after tasks/update: %s, want awaiting_approval at version %d with version 2.0.0", got.raw, v+1)
	}
	// Nothing is asked of the user now: the task is the mission, completed.
	if done := getTask(t, cs, run); done.Status != "completed" || done.InputRequests != nil {
		t.Errorf("tasks/get after the move: %+v", done)
	}

	// A client that does not declare form elicitation is not asked.
	run2, _ := startRelease(t, cs)
	plain, _ := h.tasksClient(t, tok, true, nil)
	if got := getTask(t, plain, run2); got.Status != "completed" || got.InputRequests != nil {
		t.Errorf("tasks/get without form elicitation: %+v", got)
	}
	// A token without missions:write cannot fire the move through tasks/update.
	ro, _ := h.tasksClient(t, h.token(t, scopesWithout(contracts.ScopeMissionsWrite), nil), true, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil }})
	var rpcErr *jsonrpc.Error
	_, err := mcp.CallCustomMethod[*mcpadapter.TaskParams, *mcpadapter.TaskAck](ctx, ro, "tasks/update", &mcpadapter.TaskParams{TaskID: run2,
		InputResponses: map[string]json.RawMessage{"move:request_release@1": json.RawMessage(`{"action":"accept","content":{"version":"1.0.0"}}`)}})
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcpadapter.RPCTaskRefused || !strings.Contains(string(rpcErr.Data), string(contracts.CodeInsufficientScope)) {
		t.Errorf("tasks/update without missions:write: %v, want %d with the insufficient-scope envelope", err, mcpadapter.RPCTaskRefused)
	}
}
