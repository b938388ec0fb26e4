package gateway

import (
	"encoding/json"

	"github.com/praxa/praxa/contracts"
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
		return append(links, homeLink())
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
	if rec.Status < 400 {
		var first struct {
			RunID    string `json:"runId"`
			Workflow struct {
				ID string `json:"id"`
			} `json:"workflow"`
		}
		_ = json.Unmarshal(rec.Body, &first)
		switch {
		case praxecTool(tool) && first.Workflow.ID != "":
			err.Links = append(err.Links, contracts.Link{Rel: "get", Title: "Read the workflow the key started",
				Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": first.Workflow.ID}})
		case !praxecTool(tool) && first.RunID != "":
			err.Links = append(err.Links, contracts.Link{Rel: "get", Title: "Read the mission the key created",
				Method: contracts.ToolGetMission, Args: map[string]any{"runId": first.RunID}})
		}
	}
	err.Links = append(err.Links, newKeyLink(tool))
	return err
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
