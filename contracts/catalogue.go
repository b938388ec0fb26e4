package contracts

import "slices"

// IdempotencyKeyPattern is the exact pattern every idempotencyKey matches:
// 16 to 128 characters, starting with a letter or digit.
const IdempotencyKeyPattern = `^[A-Za-z0-9][A-Za-z0-9._:-]{15,127}$`

// IdentifierPattern is the pattern of the identifiers the contract accepts
// in paths and arguments (runId, skillId, traceId, definitionId, workflowId,
// transition and signal names): 1 to 128 characters from a URL-safe set.
const IdentifierPattern = `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`

// Bounds shared by several schemas.
const (
	maxTextLen      = 4000
	maxSummaryLen   = 2000
	maxQueryLen     = 512
	maxSubjectLen   = 256
	maxOpenMembers  = 64
	maxTags         = 16
	maxTagLen       = 64
	maxLimit        = 100
	maxVersionValue = 1<<53 - 1
)

func idempotencyKey() schema {
	return str(16, 128).with("pattern", IdempotencyKeyPattern).
		desc("One stable key per logical mutation, reused unchanged for every retry of that mutation and never for another one. A UUID v4 is a valid choice.")
}

func identifier(d string) schema {
	return str(1, 128).with("pattern", IdentifierPattern).desc(d)
}

func tags(d string) schema {
	return array(str(1, maxTagLen), maxTags).with("uniqueItems", true).desc(d)
}

func limit() schema {
	return integer(1, maxLimit).with("default", 10).desc("Maximum number of results to return (1-100, default 10).")
}

// Output building blocks.

func linkOut() schema {
	return record([]string{"rel", "method", "args"}, map[string]schema{
		"rel":          outString().desc("What following the link does; for a transition, the transition name."),
		"title":        outString(),
		"description":  schema{"type": []string{"string", "null"}},
		"method":       outString().desc("The tool to call with args (or \"cli\" for an informational operator path)."),
		"actor":        enum("agent", "human", "deterministic"),
		"args":         outObject().desc("Arguments to send verbatim."),
		"inputSchema":  outObject(),
		"input_schema": outObject(),
		"hint":         outString(),
	})
}

func linksOut() schema {
	return outArray(linkOut()).desc("Pre-filled next calls; copy a link's args verbatim to follow it.")
}

func workflowOut() schema {
	return record([]string{"id", "definitionId", "definitionVersion", "state", "version"}, map[string]schema{
		"id":                outString(),
		"definitionId":      outString(),
		"definitionVersion": outInteger(),
		"state":             outString(),
		"version":           outInteger(),
	})
}

func missionOut() schema {
	return record([]string{"runId", "workflow", "result", "context", "evidence", "links"}, map[string]schema{
		"runId":    outString().desc("The mission's run identifier, the key of /v8/missions/{runId}."),
		"workflow": workflowOut(),
		"result": record([]string{"status"}, map[string]schema{
			"status":  enum("started", "executed", "waiting_for_action", "pending_approval", "completed"),
			"message": outString(),
		}),
		"context":  outObject().desc("Data accumulated by the mission's transitions."),
		"evidence": outArray(outString()).desc("Evidence the mission has produced so far."),
		"links":    linksOut(),
		"chain":    outArray(outObject()).desc("Deterministic transitions that fired on their own during this call."),
		"waiting":  waitingOut(),
		"moving":   movingOut(),
	})
}

// movingOut is the moving member of a mission read while a request runs a
// move on its current version (one that calls outside the gateway).
func movingOut() schema {
	return record([]string{"transition", "version", "since", "deadline"}, map[string]schema{
		"transition": outString().desc("The move in flight."),
		"version":    outInteger().desc("The version it leaves from."),
		"since":      outString().desc("When its first outside call began, RFC 3339."),
		"deadline":   outString().desc("When its lease runs out, RFC 3339; a move still running past it is resolved as outcome-unknown."),
	}).desc("Present on a read while a move runs on the mission's current version; every other move on that version waits for it.")
}

// waitingOut is the waiting member of a mission whose move is parked on a
// sub-workflow (result.status stays the call's own status).
func waitingOut() schema {
	return record([]string{"transition", "childWorkflowId", "childRunId", "definitionId"}, map[string]schema{
		"transition":      outString().desc("The parked move; with state, the move that entered the state (\"\" for a start)."),
		"state":           outString().desc("Set when the onEnter of this state waits, not a transition's executor."),
		"childWorkflowId": outString().desc("The sub-workflow the move waits for; its links move it on."),
		"childRunId":      outString(),
		"definitionId":    outString().desc("The sub-workflow's definition."),
		"deadline":        outString().desc("When the wait times out (the executor's timeoutMs), RFC 3339."),
		"resumeAt":        outString().desc("When the sub-workflow ended, while the move resumes outside its transaction (its continuation calls a connection)."),
	}).desc("Present while a move waits for a sub-workflow (a workflow executor); every move is refused until it ends.")
}

var (
	goalStatuses             = []string{"active", "paused", "achieved", "abandoned"}
	skillEvidenceStates      = []string{"draft", "reviewed", "validated", "deprecated"}
	certificateVerifications = []string{"valid", "bad_signature", "unknown_issuer", "expired", "not_yet_valid"}
)

// GoalStatuses returns the statuses a context goal can have.
func GoalStatuses() []string { return slices.Clone(goalStatuses) }

// SkillEvidenceStates returns the evidence states of a governed skill
// version: draft, reviewed, validated (from least to most trusted) and
// deprecated.
func SkillEvidenceStates() []string { return slices.Clone(skillEvidenceStates) }

// CertificateVerifications returns the results of verifying a model
// capability certificate.
func CertificateVerifications() []string { return slices.Clone(certificateVerifications) }

func skillEvidenceState() schema {
	return enum(skillEvidenceStates...)
}

func discoveryItemOut() schema {
	return record([]string{"id", "kind", "title"}, map[string]schema{
		"id":          outString(),
		"kind":        outString(),
		"title":       outString(),
		"description": outString(),
		"tags":        outArray(outString()),
		"links":       linksOut(),
	})
}

func buildCatalogue() []Tool {
	return []Tool{
		{
			Name:  ToolSubmitIntent,
			Title: "Submit intent",
			Description: "Record what the user wants, in natural language, so the gateway can compile it deterministically into a plan. " +
				"The answer is an intent id and the configured workflows that fit, each with a link to start it. " +
				"Recording an intent performs no action and commits nothing outside the gateway. Requires an idempotencyKey.",
			InputSchema: root(object([]string{"idempotencyKey", "intent"}, map[string]schema{
				"idempotencyKey": idempotencyKey(),
				"intent":         str(1, maxTextLen).desc("What the user wants done, in natural language."),
				"tags":           tags("Optional labels that narrow which workflows are considered."),
			})),
			OutputSchema: root(record([]string{"intentId", "status", "candidates", "links"}, map[string]schema{
				"intentId": outString(),
				"status":   enum("recorded"),
				"traceId":  outString(),
				"candidates": outArray(record([]string{"definitionId", "title", "score"}, map[string]schema{
					"definitionId": outString(),
					"title":        outString(),
					"description":  outString(),
					"score":        outNumber(),
					"links":        linksOut(),
				})).desc("Configured workflows that match the intent, best first."),
				"links": linksOut(),
			})),
			OperationID: "submitIntent", Method: "POST", Path: "/v8/intents",
			RequiredScope: ScopeMissionsWrite, Idempotency: IdempotencyRequired,
			Annotations:   Annotations{IdempotentHint: true},
			SuccessStatus: 200,
		},
		{
			Name:  ToolCreateMission,
			Title: "Create mission",
			Description: "Start a mission: a governed workflow run toward a goal. Name the workflow with definitionId, or leave it out to let the gateway pick one from the goal " +
				"(when several fit, the answer lists them as links instead of starting one). Creating a mission grants no authority by itself: every later step is checked by the workflow's guards and policy. " +
				"Pass runId to make the start unique. Requires an idempotencyKey.",
			InputSchema: root(object([]string{"idempotencyKey", "goal"}, map[string]schema{
				"idempotencyKey": idempotencyKey(),
				"goal":           str(1, maxTextLen).desc("What the mission should achieve."),
				"definitionId":   identifier("The workflow definition to run; omit it to let the gateway choose from the goal."),
				"input":          openObject(maxOpenMembers).desc("Input for the workflow's initial context."),
				"runId":          identifier("A caller-chosen run identifier, single-use per tenant; minted when omitted."),
			})),
			OutputSchema: root(missionOut()),
			OperationID:  "createMission", Method: "POST", Path: "/v8/missions",
			RequiredScope: ScopeMissionsWrite, Idempotency: IdempotencyRequired,
			Annotations:   Annotations{IdempotentHint: true, OpenWorldHint: true},
			SuccessStatus: 201,
			Errors:        []Code{CodeRunIDAlreadyRunning, CodeGuardRejected, CodeUpstreamFailed, CodePathForbidden, CodeOutcomeUnknown, CodeNotFound, CodeQuotaExceeded, CodeCapabilityQuarantined},
		},
		{
			Name:  ToolGetMission,
			Title: "Get mission",
			Description: "Read the authoritative state of one mission by runId: its workflow state and version, context, evidence, and the links of the moves that are legal now. " +
				"Use it to reconcile after a timeout before trying a mutation again.",
			InputSchema: root(object([]string{"runId"}, map[string]schema{
				"runId": identifier("The mission's run identifier."),
			})),
			OutputSchema: root(missionOut()),
			OperationID:  "getMission", Method: "GET", Path: "/v8/missions/{runId}",
			RequiredScope: ScopeMissionsRead, Idempotency: IdempotencySafeRead,
			Annotations:  Annotations{ReadOnlyHint: true, IdempotentHint: true},
			PathArgument: "runId", SuccessStatus: 200,
			// A run whose start still runs (it calls outside the gateway) is
			// read as in progress, not missing.
			Errors: []Code{CodeIdempotencyInProgress},
		},
		{
			Name:  ToolSignalMission,
			Title: "Signal mission",
			Description: "Ask a mission to take one of its legal moves: signal names the transition and expectedVersion the version you last read. " +
				"The workflow's guards and policy decide; a stale version, an illegal move or an unmet guard is refused and changes nothing. Requires an idempotencyKey.",
			InputSchema: root(object([]string{"idempotencyKey", "runId", "signal", "expectedVersion"}, map[string]schema{
				"idempotencyKey":  idempotencyKey(),
				"runId":           identifier("The mission's run identifier."),
				"signal":          identifier("The transition to fire, as named by the mission's links."),
				"expectedVersion": integer(0, maxVersionValue).desc("The mission version the move is based on."),
				"arguments":       openObject(maxOpenMembers).desc("Arguments for the transition's input schema."),
			})),
			OutputSchema: root(missionOut()),
			OperationID:  "signalMission", Method: "POST", Path: "/v8/missions/{runId}/signals",
			RequiredScope: ScopeMissionsWrite, Idempotency: IdempotencyRequired,
			Annotations:  Annotations{IdempotentHint: true, OpenWorldHint: true},
			PathArgument: "runId", SuccessStatus: 200,
			Errors: []Code{CodeVersionConflict, CodeInvalidTransition, CodeGuardRejected, CodeMissionStateConflict,
				CodeUpstreamFailed, CodePathForbidden, CodeOutcomeUnknown, CodeQuotaExceeded, CodeCapabilityQuarantined},
		},
		{
			Name:  ToolCancelMission,
			Title: "Cancel mission",
			Description: "Cancel a mission durably: it moves to the terminal state cancelled and accepts no further moves. Cancelling a cancelled mission succeeds again; " +
				"a mission that already completed otherwise cannot be cancelled. Requires an idempotencyKey.",
			InputSchema: root(object([]string{"idempotencyKey", "runId"}, map[string]schema{
				"idempotencyKey": idempotencyKey(),
				"runId":          identifier("The mission's run identifier."),
				"reason":         str(1, maxSummaryLen).desc("Why the mission is cancelled; kept in the audit trail."),
			})),
			OutputSchema: root(missionOut()),
			OperationID:  "cancelMission", Method: "POST", Path: "/v8/missions/{runId}/cancel",
			RequiredScope: ScopeMissionsWrite, Idempotency: IdempotencyRequired,
			Annotations:  Annotations{DestructiveHint: true, IdempotentHint: true},
			PathArgument: "runId", SuccessStatus: 200,
			Errors: []Code{CodeMissionStateConflict},
		},
		{
			Name:  ToolSearchCapabilities,
			Title: "Search capabilities",
			Description: "Full-text search over the workflows, capabilities and connections this caller may use, ranked with documented weights over id, title, description, tags and aliases. " +
				"Filter with kind (workflow, capability or connection) and cap the list with limit. Read-only.",
			InputSchema: root(object([]string{"query"}, map[string]schema{
				"query": str(0, maxQueryLen).desc("Words to look for; an empty query lists everything of the kind."),
				"kind":  str(1, 32).with("pattern", "^[a-z_]+$").desc("Restrict results to one kind: workflow, capability or connection."),
				"limit": limit(),
			})),
			OutputSchema: root(record([]string{"query", "items", "links"}, map[string]schema{
				"query": outString(),
				"kind":  outString(),
				"items": outArray(record([]string{"score", "item"}, map[string]schema{
					"score": outNumber(),
					"item":  discoveryItemOut(),
				})),
				"links": linksOut(),
			})),
			OperationID: "searchCapabilities", Method: "POST", Path: "/v8/capabilities/search",
			RequiredScope: ScopeCapabilitiesRead, Idempotency: IdempotencySafeRead,
			Annotations:   Annotations{ReadOnlyHint: true, IdempotentHint: true},
			SuccessStatus: 200,
		},
		{
			Name:  ToolQueryMemory,
			Title: "Query memory",
			Description: "Rank stored memory records by text within exactly one compartment and one purpose. " +
				"The caller's token bounds both: a compartment or purpose it does not allow is refused, never widened, and records outside it never appear. Read-only.",
			InputSchema: root(object([]string{"compartment", "purpose", "query"}, map[string]schema{
				"compartment": identifier("The memory compartment to search."),
				"purpose":     identifier("The purpose the records will serve; only records allowed for it are returned."),
				"query":       str(0, maxQueryLen).desc("Words to rank records by; empty returns the newest records."),
				"tags":        tags("Only records carrying all of these tags."),
				"limit":       limit(),
			})),
			OutputSchema: root(record([]string{"compartment", "purpose", "query", "records"}, map[string]schema{
				"compartment": outString().desc("The compartment searched, as requested."),
				"purpose":     outString().desc("The purpose the records are allowed for, as requested."),
				"query":       outString(),
				"records": outArray(record([]string{"id", "content", "tags", "score", "createdAt"}, map[string]schema{
					"id":        outString(),
					"content":   outString(),
					"tags":      outArray(outString()),
					"score":     outNumber().desc("The text-match score (0 for a listing without query words); higher is better."),
					"createdAt": outString().with("format", "date-time"),
				})).desc("Best first: by score, then newest, then by id."),
			})),
			OperationID: "queryMemory", Method: "POST", Path: "/v8/memory/query",
			RequiredScope: ScopeMemoryRead, Idempotency: IdempotencySafeRead,
			Annotations:   Annotations{ReadOnlyHint: true, IdempotentHint: true},
			SuccessStatus: 200,
			Errors:        []Code{CodeCompartmentForbidden, CodePurposeForbidden},
		},
		{
			Name:  ToolGetSkill,
			Title: "Get skill",
			Description: "Read a governed skill by id: its markdown body, its version history and its evidence state. " +
				"The newest release (in semantic-version order; a pre-release such as 2.0.0-rc.1 only when the skill has no release) is returned unless version names another. Read-only.",
			InputSchema: root(object([]string{"skillId"}, map[string]schema{
				"skillId": identifier("The skill's identifier."),
				"version": str(1, 32).with("pattern", "^[0-9A-Za-z][0-9A-Za-z.+-]{0,31}$").desc("A specific version; the newest release when omitted."),
			})),
			OutputSchema: root(record([]string{"id", "version", "title", "tags", "body", "evidenceState", "evidence", "latestVersion", "versions"}, map[string]schema{
				"id":            outString(),
				"version":       outString().desc("The version returned."),
				"title":         outString(),
				"description":   outString(),
				"tags":          outArray(outString()),
				"body":          outString().desc("The skill's markdown body."),
				"evidenceState": skillEvidenceState(),
				"evidence": record([]string{"state"}, map[string]schema{
					"state":      skillEvidenceState(),
					"reviewedBy": outArray(outString()),
					"reviewedAt": outString(),
					"summary":    outString(),
					"refs":       outArray(outString()),
				}).desc("The governance record of the version returned."),
				"latestVersion": outString().desc("The version answered when none is named: the newest release (the newest pre-release when the skill has only pre-releases)."),
				"versions": outArray(record([]string{"version", "evidenceState", "title"}, map[string]schema{
					"version":       outString(),
					"evidenceState": skillEvidenceState(),
					"title":         outString(),
				})).desc("Every version of the skill, newest first."),
			})),
			OperationID: "getSkill", Method: "GET", Path: "/v8/skills/{skillId}",
			RequiredScope: ScopeSkillsRead, Idempotency: IdempotencySafeRead,
			Annotations:  Annotations{ReadOnlyHint: true, IdempotentHint: true},
			PathArgument: "skillId", SuccessStatus: 200,
			Errors: []Code{CodeNotFound},
		},
		{
			Name:  ToolGetTrace,
			Title: "Get trace",
			Description: "Read the audit events of one trace in causal order, with secrets and personal data redacted: who asked for what, what was allowed or refused, which transitions fired. " +
				"Use the traceId a previous answer returned, or one you named in praxec.command traceId. Read-only.",
			InputSchema: root(object([]string{"traceId"}, map[string]schema{
				"traceId": identifier("The trace to read."),
			})),
			OutputSchema: root(record([]string{"traceId", "events"}, map[string]schema{
				"traceId": outString(),
				"events": outArray(record([]string{"seq", "type", "at"}, map[string]schema{
					"seq":    outInteger(),
					"type":   outString(),
					"at":     outString().with("format", "date-time"),
					"parent": outInteger(),
				})),
			})),
			OperationID: "getTrace", Method: "GET", Path: "/v8/traces/{traceId}",
			RequiredScope: ScopeTracesRead, Idempotency: IdempotencySafeRead,
			Annotations:  Annotations{ReadOnlyHint: true, IdempotentHint: true},
			PathArgument: "traceId", SuccessStatus: 200,
		},
		{
			Name:        ToolListGoals,
			Title:       "List goals",
			Description: "List the context goals recorded for one compartment and purpose. As with memory, the caller's token bounds both and nothing outside them is returned. Read-only.",
			InputSchema: root(object([]string{"compartment", "purpose"}, map[string]schema{
				"compartment": identifier("The compartment whose goals to list."),
				"purpose":     identifier("The purpose the goals will serve."),
				"status":      enum(goalStatuses...).with("maxLength", 16).desc("Only goals with this status."),
				"limit":       limit(),
			})),
			OutputSchema: root(record([]string{"compartment", "purpose", "goals"}, map[string]schema{
				"compartment": outString(),
				"purpose":     outString(),
				"goals": outArray(record([]string{"id", "title", "status", "tags", "createdAt"}, map[string]schema{
					"id":          outString(),
					"title":       outString(),
					"description": outString(),
					"status":      enum(goalStatuses...),
					"tags":        outArray(outString()),
					"createdAt":   outString().with("format", "date-time"),
				})).desc("By id."),
			})),
			OperationID: "listGoals", Method: "GET", Path: "/v8/context-twin/goals",
			RequiredScope: ScopeContextRead, Idempotency: IdempotencySafeRead,
			Annotations:   Annotations{ReadOnlyHint: true, IdempotentHint: true},
			SuccessStatus: 200,
			Errors:        []Code{CodeCompartmentForbidden, CodePurposeForbidden},
		},
		{
			Name:  ToolListWorldCertificates,
			Title: "List world certificates",
			Description: "List signed model capability certificates with the result of verifying each one now (valid, bad signature, unknown issuer, expired or not yet valid). " +
				"Certificates are information only: they grant no authority to act anywhere in the gateway. Read-only.",
			InputSchema: root(object(nil, map[string]schema{
				"issuer": identifier("Only certificates from this issuer."),
				"limit":  limit(),
			})),
			OutputSchema: root(record([]string{"certificates", "statement"}, map[string]schema{
				"certificates": outArray(record([]string{"id", "issuer", "subject", "capabilities", "issuedAt", "expiresAt", "verification"}, map[string]schema{
					"id":           outString(),
					"issuer":       outString(),
					"subject":      outString().desc("The model the certificate is about."),
					"capabilities": outArray(outString()),
					"issuedAt":     outString().with("format", "date-time"),
					"expiresAt":    outString().with("format", "date-time"),
					"verification": enum(certificateVerifications...).desc("The result of verifying the certificate now, against the issuers this gateway is configured with."),
					"detail":       outString().desc("Why a certificate is not valid."),
				})).desc("By id."),
				"statement": outString().desc("A reminder that certificates grant no authority."),
			})),
			OperationID: "listWorldCertificates", Method: "GET", Path: "/v8/world-model/certificates",
			RequiredScope: ScopeWorldRead, Idempotency: IdempotencySafeRead,
			Annotations:   Annotations{ReadOnlyHint: true, IdempotentHint: true},
			SuccessStatus: 200,
		},
		{
			Name:  ToolGetCoverage,
			Title: "Get coverage",
			Description: "Read the reference coverage evidence: for each operation of the contract, the conformance cases that exercise it and the result and time of their last recorded run. " +
				"Coverage shows what was tested; it is not a measure of production readiness. Read-only.",
			InputSchema: root(object(nil, map[string]schema{
				"operationId": identifier("Only the coverage of this operation."),
			})),
			OutputSchema: root(coverageOut()),
			OperationID:  "getCoverage", Method: "GET", Path: "/v8/coverage",
			RequiredScope: ScopeCoverageRead, Idempotency: IdempotencySafeRead,
			Annotations:   Annotations{ReadOnlyHint: true, IdempotentHint: true},
			SuccessStatus: 200,
		},
		{
			Name:  ToolPraxecQuery,
			Title: "praxec query",
			Description: "Every read of the praxec surface, chosen by which fields you send: nothing for the home links; query (with optional kind and limit) to search; " +
				"subject to describe a workflow, capability or connection (\"lexicon:TERM\" looks up a term); workflowId to get a running workflow; workflowId with transition to explain a move. " +
				"Every answer carries links[] whose args you can send back verbatim as the next call.",
			InputSchema: root(object(nil, map[string]schema{
				"query":      str(0, maxQueryLen).desc("Search words; \"\" lists everything (of kind, when given)."),
				"kind":       str(1, 32).desc("Search filter: workflow, capability, connection or lexicon."),
				"subject":    str(1, maxSubjectLen).desc("The id to describe, or lexicon:TERM."),
				"workflowId": identifier("A running workflow instance."),
				"transition": identifier("A transition of that workflow, to explain."),
				"limit":      limit(),
			})),
			OutputSchema: root(record(nil, map[string]schema{
				"links": linksOut(),
			})),
			OperationID: "praxecQuery", Method: "POST", Path: "/v8/praxec/query",
			RequiredScope: ScopeCapabilitiesRead, Idempotency: IdempotencySafeRead,
			Annotations:   Annotations{ReadOnlyHint: true, IdempotentHint: true},
			SuccessStatus: 200,
			Errors:        []Code{CodeAmbiguousIntent, CodeNotFound},
		},
		{
			Name:  ToolPraxecCommand,
			Title: "praxec command",
			Description: "Every write of the praxec surface, chosen by which fields you send: definitionId (with optional input and runId) starts a workflow; " +
				"workflowId with expectedVersion and transition (with optional arguments and summary) fires a transition; subject with definition defines a lexicon term when the gateway allows it. " +
				"Prefer copying the args of a link from the previous answer over building a call yourself.",
			InputSchema: root(object(nil, map[string]schema{
				"definitionId":    identifier("The workflow definition to start."),
				"input":           openObject(maxOpenMembers).desc("Input for the new workflow's context."),
				"workflowId":      identifier("The workflow instance to advance."),
				"expectedVersion": integer(0, maxVersionValue).desc("The instance version the transition is based on."),
				"transition":      identifier("The transition to fire."),
				"arguments":       openObject(maxOpenMembers).desc("Arguments for the transition's input schema."),
				"subject":         str(1, maxSubjectLen).desc("lexicon:TERM, the term to define."),
				"definition":      openObject(maxOpenMembers).desc("The term's definition: definition_short, boundedContext, refs, governance."),
				"summary":         str(1, maxSummaryLen).desc("Why this transition is fired; kept in the audit trail."),
				"traceId":         identifier("A trace to attach the audit events to."),
				"runId":           identifier("A caller-chosen run identifier: makes a start unique and threads through the audit events."),
				"idempotencyKey": idempotencyKey().desc("Optional: a key that makes any command replay its first answer when retried " +
					"(reuse it, unchanged, for every retry of the same command). Over REST it may also travel in the Idempotency-Key header; both must then agree."),
				"intent":          str(1, 64).desc("cancel_pending_subject, to drop a command waiting on an unknown subject."),
				"unknown_subject": str(1, maxSubjectLen).desc("The unknown subject of the pending command to drop."),
			})),
			OutputSchema: root(record(nil, map[string]schema{
				"links": linksOut(),
			})),
			OperationID: "praxecCommand", Method: "POST", Path: "/v8/praxec/command",
			RequiredScope: ScopeMissionsWrite, Idempotency: IdempotencyVersioned,
			Annotations:   Annotations{OpenWorldHint: true},
			SuccessStatus: 200,
			Errors: []Code{CodeAmbiguousIntent, CodeNotFound, CodeVersionConflict, CodeInvalidTransition, CodeGuardRejected,
				CodeRunIDAlreadyRunning, CodeLexiconWritesDisabled, CodeUpstreamFailed, CodePathForbidden, CodeOutcomeUnknown, CodeQuotaExceeded, CodeCapabilityQuarantined},
		},
	}
}
