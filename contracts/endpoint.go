package contracts

import (
	"encoding/json"
	"iter"
	"slices"
)

// Endpoint is one operator operation of the /v8 REST API: an operation that
// is not an agent tool, so it is neither registered over MCP nor listed in
// tools.json, but is served, documented and validated from this one
// declaration all the same.
//
// InputSchema describes the request as one flat object, the way a tool's
// input schema does: the path argument (when PathArgument names one) and
// either the query parameters (GET, scalars only) or the members of the JSON
// body (POST). OutputSchema describes the successful answer.
//
// An Endpoint obtained from this package is a detached copy: changing it, or
// the bytes of its schemas, changes nothing in the contract.
type Endpoint struct {
	OperationID   string          `json:"operationId"`
	Method        string          `json:"method"`
	Path          string          `json:"path"`
	RequiredScope Scope           `json:"requiredScope"`
	Summary       string          `json:"summary"`
	Description   string          `json:"description"`
	InputSchema   json.RawMessage `json:"inputSchema"`
	OutputSchema  json.RawMessage `json:"outputSchema"`
	PathArgument  string          `json:"pathArgument,omitempty"`
	// BodyOptional marks a POST whose body may be left out entirely; the
	// request then carries only its path argument.
	BodyOptional bool `json:"bodyOptional,omitempty"`
	// SuccessStatus is the HTTP status of a successful answer.
	SuccessStatus int `json:"successStatus"`
	// Errors lists the codes the operation can answer with beyond those every
	// operation of its method shares; ErrorCodes returns the complete list.
	Errors []Code `json:"-"`
}

// Clone returns a deep copy of e.
func (e Endpoint) Clone() Endpoint {
	e.InputSchema = cloneRaw(e.InputSchema)
	e.OutputSchema = cloneRaw(e.OutputSchema)
	e.Errors = slices.Clone(e.Errors)
	return e
}

// ErrorCodes returns every code the endpoint can answer with, sorted: those
// every authenticated operation shares, those its method and path argument
// imply, and its own. Operator endpoints are not tools, so tool-not-allowed
// and the idempotency codes never apply.
func (e Endpoint) ErrorCodes() []Code {
	return sortedCodes(baseErrorCodes(e.Method, e.PathArgument), e.Errors)
}

// Operation ids of the operator endpoints.
const (
	EndpointRevokeToken      = "revokeToken"
	EndpointListApprovals    = "listApprovals"
	EndpointApproveApproval  = "approveApproval"
	EndpointRejectApproval   = "rejectApproval"
	EndpointReloadConfig     = "reloadConfig"
	EndpointAcceptCapability = "acceptCapability"
)

// Bounds of the operator endpoints.
const (
	maxJTILen             = 256
	maxApprovalsLimit     = 500
	defaultApprovalsLimit = 100
)

// approvalStatuses are the values the status query parameter of
// listApprovals accepts, in documentation order; "all" lists every status.
var approvalStatuses = []string{"pending", "approved", "rejected", "cancelled", "all"}

func approvalOut() schema {
	return record([]string{"id", "status", "workflowId", "runId", "transition", "requestedBy", "requestedAt"}, map[string]schema{
		"id":          outString().desc("The approval's identifier, the key of /v8/approvals/{approvalId}."),
		"status":      enum("pending", "approved", "rejected", "cancelled"),
		"workflowId":  outString().desc("The workflow instance that waits for the approval."),
		"runId":       outString().desc("The mission's run identifier."),
		"transition":  outString().desc("The transition that fires when the approval is granted."),
		"queue":       outString().desc("The review queue the approval was routed to."),
		"arguments":   outObject().desc("The arguments the transition was requested with."),
		"requestedBy": outString().desc("The subject that requested the transition."),
		"requestedAt": outString().with("format", "date-time"),
		"resolvedBy":  outString().desc("The subject that approved or rejected it."),
		"resolvedAt":  outString().with("format", "date-time"),
	})
}

// resolvedMissionOut is the mission as a resolution answers it: the praxec
// projection, which names the workflow rather than the run.
func resolvedMissionOut() schema {
	s := missionOut()
	s["required"] = []string{"workflow", "result", "context", "evidence", "links"}
	props := s["properties"].(map[string]schema)
	props["approval"] = record([]string{"id", "transition"}, map[string]schema{
		"id":         outString(),
		"transition": outString(),
		"queue":      outString(),
	}).desc("The approval the mission waits for now, when it waits for one.")
	return s
}

func resolutionOut() schema {
	return record([]string{"approval", "mission"}, map[string]schema{
		"approval": approvalOut(),
		"mission":  resolvedMissionOut(),
	})
}

func resolveInput(verb string) json.RawMessage {
	return root(object([]string{"approvalId"}, map[string]schema{
		"approvalId": identifier("The approval to " + verb + "."),
		"note":       str(0, maxSummaryLen).desc("Why it is " + verb + "d; kept in the audit trail."),
	}))
}

func buildEndpoints() []Endpoint {
	return []Endpoint{
		{
			OperationID: EndpointRevokeToken, Method: "POST", Path: "/v8/tokens/revocations",
			RequiredScope: ScopeTokensWrite,
			Summary:       "Revoke token",
			Description: "Revoke one access token by its jti, durably and for every replica: this replica refuses the token at once, the others after their next refresh. " +
				"Revoking a token that is already revoked succeeds again. expiresAt, the token's own expiry, tells the gateway how long the revocation must be kept.",
			InputSchema: root(object([]string{"jti"}, map[string]schema{
				"jti":       str(1, maxJTILen).desc("The jti claim of the token to revoke."),
				"reason":    str(0, maxSummaryLen).desc("Why the token is revoked; kept in the audit trail."),
				"expiresAt": str(1, 64).with("format", "date-time").desc("The token's expiry (RFC 3339); the revocation is kept at least until then."),
			})),
			OutputSchema: root(record([]string{"jti", "revoked", "at"}, map[string]schema{
				"jti":     outString(),
				"revoked": schema{"type": "boolean", "const": true},
				"at":      outString().with("format", "date-time").desc("When the revocation was recorded."),
			})),
			SuccessStatus: 200,
		},
		{
			OperationID: EndpointListApprovals, Method: "GET", Path: "/v8/approvals",
			RequiredScope: ScopeApprovalsWrite,
			Summary:       "List approvals",
			Description: "List the human approvals of the caller's tenant, oldest first: the pending ones, unless status names another state or all. " +
				"Each approval names the mission and the transition that waits for it.",
			InputSchema: root(object(nil, map[string]schema{
				"status": str(1, 16).with("enum", approvalStatuses).with("default", "pending").
					desc("Only approvals in this state: pending (the default), approved, rejected, cancelled, or all."),
				"limit": integer(1, maxApprovalsLimit).with("default", defaultApprovalsLimit).
					desc("Maximum number of approvals to return (1-500, default 100)."),
			})),
			OutputSchema: root(record([]string{"approvals"}, map[string]schema{
				"approvals": outArray(approvalOut()),
			})),
			SuccessStatus: 200,
		},
		{
			OperationID: EndpointApproveApproval, Method: "POST", Path: "/v8/approvals/{approvalId}/approve",
			RequiredScope: ScopeApprovalsWrite,
			Summary:       "Approve approval",
			Description: "Grant a pending approval: the transition that waits for it fires, its guards checked again, and the mission moves on. " +
				"The approval and the mission's audit events commit together. An approval that is no longer pending cannot be resolved again. " +
				"Nobody approves an approval they asked for (self-approval-forbidden) unless policy.allowSelfApproval names its queue; " +
				"an approver policy.denyDestructive matches cannot approve a move that fires a destructive capability (destructive-action-denied).",
			InputSchema:   resolveInput("approve"),
			OutputSchema:  root(resolutionOut()),
			PathArgument:  "approvalId",
			BodyOptional:  true,
			SuccessStatus: 200,
			Errors: []Code{CodeMissionStateConflict, CodeSelfApproval, CodeInvalidTransition, CodeGuardRejected, CodeUpstreamFailed, CodePathForbidden,
				CodeOutcomeUnknown, CodeQuotaExceeded, CodeDestructiveActionDenied},
		},
		{
			OperationID: EndpointRejectApproval, Method: "POST", Path: "/v8/approvals/{approvalId}/reject",
			RequiredScope: ScopeApprovalsWrite,
			Summary:       "Reject approval",
			Description: "Refuse a pending approval: the waiting transition does not fire and the mission stays where it was, free to take another move. " +
				"An approval that is no longer pending cannot be resolved again.",
			InputSchema:   resolveInput("reject"),
			OutputSchema:  root(resolutionOut()),
			PathArgument:  "approvalId",
			BodyOptional:  true,
			SuccessStatus: 200,
			Errors:        []Code{CodeMissionStateConflict},
		},
		{
			OperationID: OperationRecordCoverageRun, Method: "POST", Path: CoverageRunsPath,
			RequiredScope: ScopeCoverageWrite,
			Summary:       "Record a conformance run",
			Description: "Store the report of a conformance run (praxa conformance URL --record) so that aura_get_coverage serves it: " +
				"each case's operation, verdict and time. A run restricted to some cases keeps the last results of the others.",
			InputSchema:   root(coverageRunIn()),
			OutputSchema:  root(coverageRunOut()),
			SuccessStatus: 201,
		},
		{
			OperationID: EndpointReloadConfig, Method: "POST", Path: "/v8/config/reload",
			RequiredScope: ScopeConfigWrite,
			Summary:       "Reload configuration",
			Description: "Read the gateway's configuration file again and, when it is valid, swap it in atomically (as SIGHUP does): workflows, capabilities, connections, the lexicon, the policy, " +
				"the skills, the certificate issuers, the tools MCP lists directly (exposeDirectly) and proxy.runRetention (from the next sweep of idle proxy_default runs). " +
				"A file that is not valid, or that changes server.leaseTTL, is refused with INVALID_PARAMS, one entry of errors per problem (file:line:column: field: message), and the running configuration stays. " +
				"A proxy.import connection that cannot be listed refuses the reload with UNAVAILABLE (its capabilities would otherwise vanish), and the running configuration stays. " +
				"Missions already started keep running when the new file still defines their workflow. Auth and server settings are read at start only. " +
				"Every attempt, accepted or refused, is an audit event (config.reloaded or config.reload_refused) naming the operator, the file and its SHA-256.",
			InputSchema: root(object(nil, map[string]schema{})),
			OutputSchema: root(record([]string{"reloaded", "source", "workflows", "capabilities", "connections", "at"}, map[string]schema{
				"reloaded":           schema{"type": "boolean", "const": true},
				"source":             outString().desc("The configuration file read; empty for the embedded configuration."),
				"workflows":          outInteger().desc("How many workflows the configuration now defines, proxy_default included."),
				"capabilities":       outInteger().desc("How many capabilities the proxy surface now offers."),
				"connections":        outInteger().desc("How many connections the configuration now declares."),
				"skills":             outInteger().desc("How many skills the configuration now serves."),
				"certificateIssuers": outInteger().desc("How many certificate issuers the configuration now trusts."),
				"sha256":             outString().with("pattern", "^[0-9a-f]{64}$").desc("The SHA-256 of the configuration file read, hex; absent when none was read."),
				"at":                 outString().with("format", "date-time").desc("When the configuration was swapped in."),
			})),
			BodyOptional:  true,
			SuccessStatus: 200,
			Errors:        []Code{CodeNotImplemented},
		},
		{
			OperationID: EndpointAcceptCapability, Method: "POST", Path: "/v8/capabilities/{name}/accept",
			RequiredScope: ScopeCapabilitiesAdmin,
			Summary:       "Accept a changed capability",
			Description: "Pin the definition the upstream MCP server now offers for an imported capability (proxy.import) in place of the one pinned, " +
				"so that a capability quarantined for the change (pin enforce) can be called again and one served under pin warn stops being reported. " +
				"With sha256, only the definition of that hash is accepted (the one the operator reviewed), else the request is refused and nothing changes. " +
				"A capability with no changed definition waiting is not-found. The acceptance is an audit event (capability.pin_accepted) naming the operator and both hashes.",
			InputSchema: root(object([]string{"name"}, map[string]schema{
				"name":   identifier("The capability whose new definition to accept (PREFIX.TOOL)."),
				"sha256": str(64, 64).with("pattern", "^[0-9a-f]{64}$").desc("The SHA-256 of the offered definition reviewed; the request is refused when the upstream now offers another."),
			})),
			OutputSchema: root(record([]string{"capability", "sha256", "previousSha256", "acceptedBy", "at"}, map[string]schema{
				"capability":     outString().desc("The capability accepted."),
				"sha256":         outString().with("pattern", "^[0-9a-f]{64}$").desc("The SHA-256 of the definition now pinned."),
				"previousSha256": outString().with("pattern", "^[0-9a-f]{64}$").desc("The SHA-256 of the definition pinned before."),
				"acceptedBy":     outString().desc("The operator who accepted it."),
				"at":             outString().with("format", "date-time").desc("When it was accepted."),
			})),
			PathArgument:  "name",
			BodyOptional:  true,
			SuccessStatus: 200,
		},
	}
}

// endpoints holds the operator endpoints in their stable order. It is built
// once and never handed out.
var endpoints = buildEndpoints()

var endpointIndex = func() map[string]int {
	idx := indexBy(endpoints, func(e Endpoint) string { return e.OperationID }, "endpoint operationId")
	for _, e := range endpoints {
		if _, clash := ByOperationID(e.OperationID); clash {
			panic("contracts: endpoint operationId " + e.OperationID + " is a tool's")
		}
	}
	return idx
}()

// OperatorEndpoints returns a copy of every operator endpoint in the stable
// order: revokeToken, listApprovals, approveApproval, rejectApproval.
func OperatorEndpoints() []Endpoint { return clones(endpoints) }

// AllEndpoints iterates over copies of every operator endpoint in the order
// of OperatorEndpoints.
func AllEndpoints() iter.Seq[Endpoint] { return cloneSeq(endpoints) }

// LookupEndpoint returns a copy of the operator endpoint whose operationId
// is exactly id.
func LookupEndpoint(id string) (Endpoint, bool) { return cloneAt(endpoints, endpointIndex, id) }

var endpointSchemas = newSchemaSet("endpoint", endpoints, func(e Endpoint) (string, json.RawMessage, json.RawMessage) {
	return e.OperationID, e.InputSchema, e.OutputSchema
})

// ValidateEndpointInput checks the decoded arguments of an operator
// endpoint, its path argument and its query parameters or body members as
// one object, against the endpoint's input schema, the way ValidateInput
// checks a tool's. A violation is an *Error with code INVALID_PARAMS.
func ValidateEndpointInput(operationID string, args any) error {
	return endpointSchemas.check(operationID, false, args, "the request does not match the input schema of "+operationID)
}

// ValidateEndpointOutput checks a decoded successful answer of an operator
// endpoint against its output schema.
func ValidateEndpointOutput(operationID string, result any) error {
	return endpointSchemas.check(operationID, true, result, "the result does not match the output schema of "+operationID)
}
