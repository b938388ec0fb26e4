package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
)

// This file holds the next moves of a request refused for its own sake:
// arguments that do not validate (INVALID_PARAMS) and the idempotency
// refusals. Each link names a tool of the caller's surface: the praxec pair
// on praxec.query and praxec.command, the aura tools elsewhere.

// praxecTool reports whether tool is one of the praxec pair.
func praxecTool(tool contracts.Tool) bool {
	return tool.Name == contracts.ToolPraxecQuery || tool.Name == contracts.ToolPraxecCommand
}

// WithNextMoves returns err with the next moves of a request refused for
// its own arguments (args, nil when they were never read), when err is such
// a refusal and carries no links of its own; otherwise err itself. err is
// copied, never changed. The service applies it to every call; a client
// that refuses arguments before sending them (the remote MCP adapter)
// applies it to its own refusals.
func WithNextMoves(err *contracts.Error, tool contracts.Tool, args map[string]any) *contracts.Error {
	if err == nil || len(err.Links) > 0 {
		return err
	}
	var links []contracts.Link
	switch err.Code {
	case contracts.CodeInvalidParams:
		links = readLinks(tool, args)
	case contracts.CodeIdempotencyKeyMissing, contracts.CodeIdempotencyKeyInvalid:
		links = append(readLinks(tool, args), newKeyLink(tool))
	default:
		return err
	}
	out := *err
	out.Links = links
	return &out
}

// readLinks are the reads that show what the call targets and the input
// schema to follow: on the praxec surface the workflow's get (whose links
// carry each transition's inputSchema) or the definition's describe (whose
// start link carries its inputSchema), and home; elsewhere the mission's
// get, and the call itself with its inputSchema.
func readLinks(tool contracts.Tool, args map[string]any) []contracts.Link {
	var links []contracts.Link
	if praxecTool(tool) {
		if id := stringArg(args, "workflowId"); id != "" {
			links = append(links, contracts.Link{Rel: "get", Title: "Read the workflow: its links carry each transition's inputSchema",
				Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": id}})
		}
		input, _ := args["input"].(map[string]any)
		switch def, capability := stringArg(args, "definitionId"), stringArg(input, "capability"); {
		case def == config.ProxyDefaultWorkflow && capability != "":
			// A start of proxy_default fires a capability first (a direct
			// call stands for one): its describe shows the input schema.
			links = append(links, contracts.Link{Rel: "describe", Title: "Read the capability: its start link carries the input_schema",
				Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": capability}})
		case def != "":
			links = append(links, contracts.Link{Rel: "describe", Title: "Read the workflow definition: its start link carries the inputSchema",
				Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": def}})
		}
		return append(links, catalogue.HomeLink())
	}
	if runID := stringArg(args, "runId"); runID != "" && tool.Name != contracts.ToolGetMission {
		links = append(links, contracts.Link{Rel: "get", Title: "Read the mission", Method: contracts.ToolGetMission,
			Args: map[string]any{"runId": runID}})
	}
	hint := "Correct the members errors[] names."
	if tool.Mutates() {
		hint += " The refusal consumed no key: the same idempotency key may be sent again."
	}
	return append(links, contracts.Link{Rel: "retry", Title: "Call again with arguments that match inputSchema",
		Method: tool.Name, Args: map[string]any{}, InputSchema: tool.InputSchema, Hint: hint})
}

// newKeyLink is the call again under a fresh idempotency key.
func newKeyLink(tool contracts.Tool) contracts.Link {
	hint := "Add this idempotencyKey to the request's arguments (REST: send it as the Idempotency-Key header) and reuse it on retries."
	if tool.Idempotency == contracts.IdempotencyVersioned {
		hint = "Add this idempotencyKey to the command's arguments, on any surface, and reuse it on retries."
	}
	return contracts.Link{Rel: "retry_with_key", Title: "Send the request with a new idempotency key", Method: tool.Name,
		Args: map[string]any{"idempotencyKey": NewIdempotencyKey()}, Hint: hint}
}

// keyReused is the refusal of a key already used for another request: its
// next moves read back the request the key answered, when its answer names
// a mission or workflow, and send the new request under a new key.
func keyReused(tool contracts.Tool, rec store.IdempotencyRecord) *contracts.Error {
	err := &contracts.Error{Code: contracts.CodeIdempotencyKeyReused,
		Message: "this idempotency key was already used for a different request",
		Hint:    "Use a new key for a new mutation; reuse a key only to retry the identical request."}
	if l, ok := objectLink(tool, recordObject(rec)); ok {
		err.Links = append(err.Links, l)
	}
	err.Links = append(err.Links, newKeyLink(tool))
	return err
}

// keyExpired is the refusal of a late retry: the same request with a key
// whose record expired and whose tombstone (store.IdempotencyRecord
// Expired) remains. The request was answered once; its answer is no longer
// kept, and it is not run again. Its next move reads back what the first
// request created or acted on; it offers no new key, since sending the
// request again under one would repeat its effect.
func keyExpired(tool contracts.Tool, rec store.IdempotencyRecord) *contracts.Error {
	err := &contracts.Error{Code: contracts.CodeIdempotencyKeyExpired,
		Message: fmt.Sprintf("this idempotency key answered the same request at %s; that answer is no longer kept (it replays for the idempotency retention), and the request is not run a second time",
			rec.CreatedAt.UTC().Format(time.RFC3339)),
		Hint: "Do not send it again: read back what the first request did (the linked get, when there is one). Only to act a second time on purpose, send the request with a new idempotency key."}
	if l, ok := objectLink(tool, rec.Object); ok {
		l.Title = "Read back what the key's first request did"
		err.Links = append(err.Links, l)
	}
	return err
}

// The objects of idempotency records (store.IdempotencyRecord.Object): the
// mission a keyed request created or acted on, as each surface names it,
// a workflow id for the praxec pair, a runId for the aura tools: one
// "workflow:ID" or "run:ID" word for each the answer names, separated by
// a space (runIds and workflow ids hold no space).
const (
	objectWorkflow = "workflow:"
	objectRun      = "run:"
)

// keyObject is the object of the answer res, kept in its key's record: the
// mission a successful answer projects, or the one the get link of a
// refusal reads (a conflict, an outcome-unknown); "" for none.
func keyObject(res *Result) string {
	if res.Err != nil {
		for _, l := range res.Err.Links {
			if l.Rel == "get" {
				if o := missionObject(stringArg(l.Args, "workflowId"), stringArg(l.Args, "runId")); o != "" {
					return o
				}
			}
		}
		return ""
	}
	switch v := res.value.(type) {
	case Projection:
		return missionObject(v.Workflow.ID, v.RunID)
	case *Projection:
		return missionObject(v.Workflow.ID, v.RunID)
	case json.RawMessage: // a replayed submit (replaySubmit)
		return bodyObject(v)
	}
	return ""
}

// recordObject is the object a refusal of rec's key links: a tombstone's,
// or the mission a successful answer names (read from the answer for a
// record stored before records had an object); none for a recorded
// refusal.
func recordObject(rec store.IdempotencyRecord) string {
	switch {
	case rec.Expired:
		return rec.Object
	case rec.Status >= 400:
		return ""
	case rec.Object != "":
		return rec.Object
	}
	return bodyObject(rec.Body)
}

// bodyObject is the object of a successful answer's JSON.
func bodyObject(body []byte) string {
	var first struct {
		RunID    string `json:"runId"`
		Workflow struct {
			ID string `json:"id"`
		} `json:"workflow"`
	}
	_ = json.Unmarshal(body, &first)
	return missionObject(first.Workflow.ID, first.RunID)
}

// missionObject is the object naming a mission by its workflow id, its
// runId, or both ("" for neither).
func missionObject(workflowID, runID string) string {
	var words []string
	if workflowID != "" {
		words = append(words, objectWorkflow+workflowID)
	}
	if runID != "" {
		words = append(words, objectRun+runID)
	}
	return strings.Join(words, " ")
}

// objectLink is the read of object on tool's surface: the praxec get of
// its workflow, aura_get_mission of its run; none when the object has no
// name on that surface (the key's first request came on the other one).
func objectLink(tool contracts.Tool, object string) (contracts.Link, bool) {
	for _, word := range strings.Fields(object) {
		if id, ok := strings.CutPrefix(word, objectWorkflow); ok && praxecTool(tool) {
			return contracts.Link{Rel: "get", Title: "Read the workflow the key started",
				Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": id}}, true
		}
		if id, ok := strings.CutPrefix(word, objectRun); ok && !praxecTool(tool) {
			return contracts.Link{Rel: "get", Title: "Read the mission the key created",
				Method: contracts.ToolGetMission, Args: map[string]any{"runId": id}}, true
		}
	}
	return contracts.Link{}, false
}

// keyInFlight is the refusal of a key whose first request is still
// running: its next move is the same request with the same key, shortly.
func keyInFlight(tool contracts.Tool, key string) *contracts.Error {
	err := inProgress()
	err.Links = []contracts.Link{{Rel: "retry", Title: "Retry the same request with the same key", Method: tool.Name,
		Args: map[string]any{"idempotencyKey": key},
		Hint: "Send the identical arguments again in a moment (Retry-After); the first request's answer is replayed once it completes."}}
	return err
}
