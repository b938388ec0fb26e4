package mcpadapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
)

// This file maps missions onto the MCP Tasks extension
// (io.modelcontextprotocol/tasks, 2026-07-28): a tools/call that starts or
// moves a mission which is left parked (a human approval pending, a
// sub-workflow waited for), or whose move outlives the call's deadline
// (Options.CallTimeout; gateway/outlive.go), answers, to a client that
// declared the extension on the request, a CreateTaskResult whose taskId
// is the mission's runId; tasks/get, tasks/update and tasks/cancel are the
// mission's read, an acknowledgement, and its cancel, each a call of the
// aura_* tool through the backend, so the same scopes, tenancy,
// idempotency and audit apply as over REST. Any replica answers: the task
// is the mission, in the store, and a move in flight is its lease there
// (the read's moving member, or a start still running).

// TasksExtension is the identifier of the MCP Tasks extension.
const TasksExtension = "io.modelcontextprotocol/tasks"

// TaskPollInterval is the pollIntervalMs a task suggests.
const TaskPollInterval = 2 * time.Second

// RPCTaskRefused is the JSON-RPC error code of a tasks/* request the
// service refused for a reason other than an unknown task (a scope, a
// token): its data is the refusal's seeds/000 envelope, links included.
const RPCTaskRefused = -32031

// The task statuses of the extension.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// taskTools are the tools whose call may answer as a task: they start or
// move a mission (praxec.command names it by workflowId; its task is
// still the run, see praxecTaskID).
var taskTools = map[string]bool{contracts.ToolCreateMission: true, contracts.ToolSignalMission: true, contracts.ToolPraxecCommand: true}

// Task is the extension's Task, with the fields of its status inlined
// (DetailedTask): CreateTaskResult (resultType task) and the answer of
// tasks/get (resultType complete).
type Task struct {
	mcp.ResultBase
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          json.RawMessage `json:"error,omitempty"`
}

// TaskParams are the params of tasks/get, tasks/update and tasks/cancel.
type TaskParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// TaskAck is the empty acknowledgement of tasks/update and tasks/cancel.
type TaskAck struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// missionView is what a task reads of a mission projection.
type missionView struct {
	RunID    string `json:"runId"`
	Workflow struct {
		ID           string `json:"id"`
		DefinitionID string `json:"definitionId"`
		State        string `json:"state"`
		Version      int64  `json:"version"`
	} `json:"workflow"`
	Result struct {
		Status string `json:"status"`
	} `json:"result"`
	Approval *struct {
		ID         string `json:"id"`
		Transition string `json:"transition"`
		Queue      string `json:"queue"`
	} `json:"approval"`
	Waiting json.RawMessage `json:"waiting"`
	Moving  *struct {
		Transition string `json:"transition"`
		Version    int64  `json:"version"`
		Since      string `json:"since"`
	} `json:"moving"`
	Links []struct {
		Rel         string          `json:"rel"`
		Method      string          `json:"method"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"links"`
}

// parked reports whether a mission answer leaves a move unfinished: an
// approval pending, a sub-workflow waited for, or (on a read) a move a
// request still runs.
func (m missionView) parked() bool {
	return m.Result.Status == "pending_approval" || len(m.Waiting) > 0 && string(m.Waiting) != "null" || m.Moving != nil
}

// taskInputKey is the inputRequests key of an approval's page in a task.
func taskInputKey(approvalID string) string { return "approval:" + approvalID }

// taskOf renders a mission answer as a task, now.
func taskOf(body json.RawMessage, now time.Time) (*Task, error) {
	var m missionView
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	ts := now.UTC().Format(time.RFC3339)
	t := &Task{ResultType: "complete", TaskID: m.RunID, CreatedAt: ts, LastUpdatedAt: ts,
		PollIntervalMs: TaskPollInterval.Milliseconds()}
	switch {
	case m.Result.Status == "completed" && m.Workflow.State == "cancelled":
		t.Status, t.StatusMessage = taskCancelled, "the mission was cancelled"
	case m.parked():
		t.Status = taskWorking
		if m.Moving != nil {
			// A move in flight comes first: an approval's own move runs
			// while the approval still shows.
			t.StatusMessage = "the move " + m.Moving.Transition + " from version " + strconv.FormatInt(m.Moving.Version, 10) +
				" is running (since " + m.Moving.Since + ")"
		} else if m.Approval != nil {
			t.StatusMessage = "waiting for approval " + m.Approval.ID + " of " + m.Approval.Transition
			if m.Approval.Queue != "" {
				t.StatusMessage += " on queue " + m.Approval.Queue
			}
		} else {
			t.StatusMessage = "waiting for a sub-workflow"
		}
	default:
		t.Status = taskCompleted
		r, err := json.Marshal(Result(Outcome{Body: body}))
		if err != nil {
			return nil, err
		}
		t.Result = r
	}
	return t, nil
}

// declaresTasks reports whether the client declared the Tasks extension
// on this request: in the request's _meta client capabilities at
// 2026-07-28, in the session's initialize capabilities before (go-sdk's
// ServerRequest.ClientCapabilities reads the one that applies).
func declaresTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

// taskSlotKey carries, in a tools/call handler's context, where the
// handler leaves the task its answer becomes (an *atomic.Pointer[Task]).
type taskSlotKey struct{}

// offerTask leaves the task of a mission answer for answerAsTask when the
// call may answer as a task: a tool that starts or moves a mission, whose
// answer leaves it parked or whose move outlived the request (still
// running), for a client that declared the extension.
func offerTask(ctx context.Context, backend Backend, req *mcp.CallToolRequest, tool string, o Outcome) bool {
	if !taskTools[tool] || !declaresTasks(req.ClientCapabilities()) {
		return false
	}
	slot, ok := ctx.Value(taskSlotKey{}).(*atomic.Pointer[Task])
	if !ok {
		return false
	}
	if o.Err != nil {
		// A move that outlived its request (gateway/outlive.go) is the
		// run's task while it runs: tasks/get reads its lease.
		var mr *gateway.MoveRunning
		if !errors.As(o.Err, &mr) || mr.RunID == "" {
			return false
		}
		ts := time.Now().UTC().Format(time.RFC3339)
		slot.Store(&Task{ResultType: "task", TaskID: mr.RunID, Status: taskWorking, CreatedAt: ts, LastUpdatedAt: ts,
			PollIntervalMs: TaskPollInterval.Milliseconds(),
			StatusMessage:  "the move " + mr.Move + " of run " + mr.RunID + " is still running after the request's deadline; it goes on"})
		return true
	}
	var m missionView
	if json.Unmarshal(o.Body, &m) != nil || !m.parked() {
		return false
	}
	id := m.RunID
	if tool == contracts.ToolPraxecCommand {
		id = praxecTaskID(ctx, backend, m)
	}
	if id == "" {
		return false
	}
	t, err := taskOf(o.Body, time.Now())
	if err != nil {
		return false
	}
	t.ResultType, t.TaskID = "task", id
	slot.Store(t)
	return true
}

// praxecTaskID is the task id of a parked praxec.command answer, which
// names its run by workflowId: the runId, which tasks/get reads with
// aura_get_mission. A run started without a runId has the workflow's id
// as its runId; the read (as the caller, audited) checks that the
// workflowId is the run's and that the caller may read it, as tasks/get
// will. A run started with a runId of its own is not found so, and gets
// no task ("" : today's answer).
func praxecTaskID(ctx context.Context, backend Backend, m missionView) string {
	if m.Workflow.ID == "" {
		return ""
	}
	body, err := json.Marshal(map[string]any{"runId": m.Workflow.ID})
	if err != nil {
		return ""
	}
	o := backend.Call(ctx, contracts.ToolGetMission, body)
	var read missionView
	if o.Err != nil || json.Unmarshal(o.Body, &read) != nil || read.Workflow.ID != m.Workflow.ID {
		return ""
	}
	return read.RunID
}

// answerAsTask is the receiving middleware that answers a tools/call as
// the task its handler left (offerTask).
func answerAsTask(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		var slot atomic.Pointer[Task]
		res, err := next(context.WithValue(ctx, taskSlotKey{}, &slot), method, req)
		if t := slot.Load(); t != nil && err == nil {
			return t, nil
		}
		return res, err
	}
}

// addTaskMethods registers tasks/get, tasks/update and tasks/cancel (the
// extension defines no tasks/list).
func addTaskMethods(srv *mcp.Server, backend Backend, ask *inputs) error {
	get := func(ctx context.Context, ss *mcp.ServerSession, p *TaskParams) (*Task, error) {
		if err := checkTaskRequest(ss, p); err != nil {
			return nil, err
		}
		body, err := taskCall(ctx, backend, contracts.ToolGetMission, map[string]any{"runId": p.TaskID})
		if starting := startingRun(err); starting != nil {
			// The run's start still runs (its first move outlived the
			// tools/call): the task works.
			ts := time.Now().UTC().Format(time.RFC3339)
			return &Task{ResultType: "complete", TaskID: p.TaskID, Status: taskWorking, StatusMessage: starting.Error.Message,
				CreatedAt: ts, LastUpdatedAt: ts, PollIntervalMs: TaskPollInterval.Milliseconds()}, nil
		}
		if err != nil {
			return nil, err
		}
		t, err := taskOf(body, time.Now())
		if err != nil {
			return nil, err
		}
		var m missionView
		if json.Unmarshal(body, &m) != nil {
			return t, nil
		}
		caps := taskCapabilities(ss, p)
		if t.Status == taskCompleted {
			// A mission whose next move needs what only the user gives
			// asks for it (one form per such move); tasks/update fires it.
			if moves := askedMoves(caps, m); len(moves) > 0 {
				reqs := mcp.InputRequestMap{}
				var names []string
				for k, mv := range moves {
					reqs[k] = askForm(m.RunID, mv.signal, mv.asked, mv.schema)
					names = append(names, mv.signal)
				}
				b, err := json.Marshal(reqs)
				if err != nil {
					return nil, err
				}
				slices.Sort(names)
				t.Status, t.InputRequests, t.Result = taskInputRequired, b, nil
				t.StatusMessage = "the next move (" + strings.Join(names, ", ") + ") needs input from the user"
			}
			return t, nil
		}
		if t.Status != taskWorking {
			return t, nil
		}
		// An approval the host's user may grant (input.go) is the task's
		// one input request: its page, keyed by the approval, unique over
		// the task's life.
		if ask.offersPage(caps, m) {
			reqs, err := json.Marshal(mcp.InputRequestMap{taskInputKey(m.Approval.ID): ask.approvalPage(m)})
			if err != nil {
				return nil, err
			}
			t.Status, t.InputRequests = taskInputRequired, reqs
		}
		return t, nil
	}
	update := func(ctx context.Context, ss *mcp.ServerSession, p *TaskParams) (*TaskAck, error) {
		if err := checkTaskRequest(ss, p); err != nil {
			return nil, err
		}
		// The read checks that the task exists and is the caller's, and
		// says which input requests are outstanding now. A response to an
		// approval page changes nothing (the person decides on the page);
		// a response to a key that is not outstanding (another version's,
		// a move already made) is ignored, as the extension says. An
		// accepted form of a move fires it (at most one per update: the
		// others left the same version).
		body, err := taskCall(ctx, backend, contracts.ToolGetMission, map[string]any{"runId": p.TaskID})
		if err != nil {
			return nil, err
		}
		var m missionView
		if json.Unmarshal(body, &m) != nil {
			return &TaskAck{ResultType: "complete"}, nil
		}
		moves := askedMoves(taskCapabilities(ss, p), m)
		for _, k := range slices.Sorted(maps.Keys(p.InputResponses)) {
			mv, ok := moves[k]
			if !ok {
				continue
			}
			var answer mcp.ElicitResult
			if json.Unmarshal(p.InputResponses[k], &answer) != nil || answer.Action != "accept" {
				continue // declined or cancelled: the move waits for the agent or another answer
			}
			args := map[string]any{}
			for _, a := range mv.asked {
				if v, ok := answer.Content[a]; ok {
					args[a] = v
				}
			}
			// One key per task and input request (the request key names
			// the version), so a retried update replays the first one's
			// answer instead of moving twice.
			if _, err := taskCall(ctx, backend, contracts.ToolSignalMission, map[string]any{"runId": m.RunID, "signal": mv.signal,
				"expectedVersion": m.Workflow.Version, "arguments": args, "idempotencyKey": updateKey(m.RunID, k)}); err != nil {
				return nil, err
			}
			break
		}
		return &TaskAck{ResultType: "complete"}, nil
	}
	cancel := func(ctx context.Context, ss *mcp.ServerSession, p *TaskParams) (*TaskAck, error) {
		if err := checkTaskRequest(ss, p); err != nil {
			return nil, err
		}
		// One stable key per task: a retried tasks/cancel replays the
		// first one's answer.
		args := map[string]any{"runId": p.TaskID, "idempotencyKey": "mcp-tasks-cancel." + p.TaskID,
			"reason": "cancelled by the MCP client (tasks/cancel)"}
		if _, err := taskCall(ctx, backend, contracts.ToolCancelMission, args); err != nil {
			return nil, err
		}
		return &TaskAck{ResultType: "complete"}, nil
	}
	return errors.Join(
		mcp.AddReceivingCustomMethod(srv, "tasks/get", get),
		mcp.AddReceivingCustomMethod(srv, "tasks/update", update),
		mcp.AddReceivingCustomMethod(srv, "tasks/cancel", cancel))
}

// askedMove is a legal move of a mission every required argument of which
// the user gives (AskKeyword: user): a task asks for them and
// tasks/update fires it.
type askedMove struct {
	signal string
	asked  []string
	schema map[string]any
}

// askedMoves are the moves of a mission waiting for action that a task
// asks the user for, by inputRequests key (moveInputKey), when the client
// declares form elicitation. A move that also needs arguments the agent
// gives is not among them: the agent makes it (and its tools/call asks the
// user for the rest, input.go).
func askedMoves(caps *mcp.ClientCapabilities, m missionView) map[string]askedMove {
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil || m.Result.Status != "waiting_for_action" {
		return nil
	}
	moves := map[string]askedMove{}
	for _, l := range m.Links {
		if l.Method != contracts.ToolSignalMission {
			continue
		}
		var s struct {
			Required []string `json:"required"`
		}
		if json.Unmarshal(l.InputSchema, &s) != nil {
			continue
		}
		asked, schema := askedArguments(m, l.Rel, nil) // input.go
		if len(asked) == 0 || len(asked) != len(s.Required) {
			continue
		}
		moves[moveInputKey(l.Rel, m.Workflow.Version)] = askedMove{signal: l.Rel, asked: asked, schema: schema}
	}
	return moves
}

// moveInputKey is the inputRequests key of a move's form: the move and the
// version it leaves from, so an answer meant for one version never fires
// the move from another.
func moveInputKey(signal string, version int64) string {
	return "move:" + signal + "@" + strconv.FormatInt(version, 10)
}

// updateKey is the idempotency key of the move a tasks/update fires for
// the task's input request inputKey: stable, so a retried update replays.
func updateKey(runID, inputKey string) string {
	sum := sha256.Sum256([]byte(runID + "\x00" + inputKey))
	return "mcp-tasks-update." + hex.EncodeToString(sum[:16])
}

// checkTaskRequest refuses a tasks/* request of a client that did not
// declare the extension on it (-32021, as the extension requires) and one
// without a taskId (-32602).
func checkTaskRequest(ss *mcp.ServerSession, p *TaskParams) error {
	if !declaresTasks(taskCapabilities(ss, p)) {
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
		return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability: declare the extension " + TasksExtension, Data: data}
	}
	if p == nil || p.TaskID == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is required"}
	}
	return nil
}

// taskCapabilities are the client capabilities of a tasks/* request: its
// _meta's at 2026-07-28, the session's before.
func taskCapabilities(ss *mcp.ServerSession, p *TaskParams) *mcp.ClientCapabilities {
	if p != nil {
		if raw, ok := p.GetMeta()[mcp.MetaKeyClientCapabilities]; ok {
			var caps mcp.ClientCapabilities
			b, err := json.Marshal(raw)
			if err != nil || json.Unmarshal(b, &caps) != nil {
				return nil
			}
			return &caps
		}
	}
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil {
			return ip.Capabilities
		}
	}
	return nil
}

// taskCall calls tool through the backend for a tasks/* request: a
// mission that does not exist (or is another tenant's) answers -32602, as
// the extension requires for an unknown task; any other refusal
// RPCTaskRefused with the refusal's envelope.
func taskCall(ctx context.Context, backend Backend, tool string, args map[string]any) (json.RawMessage, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	o := backend.Call(ctx, tool, b)
	if o.Err == nil {
		return o.Body, nil
	}
	env := o.Err.Envelope()
	env.TraceID = o.TraceID
	data, _ := json.Marshal(env)
	if o.Err.Code == contracts.CodeNotFound {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found", Data: data}
	}
	msg := o.Err.Message
	if o.Err.Code == contracts.CodeInternal {
		msg = "internal error"
	}
	return nil, &jsonrpc.Error{Code: RPCTaskRefused, Message: msg, Data: data}
}

// startingRun is the refusal of a read of a run whose start still runs
// (gateway: idempotency-request-in-progress), nil for any other answer.
func startingRun(err error) *contracts.ErrorEnvelope {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != RPCTaskRefused {
		return nil
	}
	var env contracts.ErrorEnvelope
	if json.Unmarshal(rpc.Data, &env) != nil || env.Error.Code != contracts.CodeIdempotencyInProgress {
		return nil
	}
	return &env
}
