package conformance

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/praxa/praxa/contracts"
)

// sampleArgs returns arguments for a call of tool that satisfy its input
// schema; the objects they name do not exist, which does not matter for
// checks that come before anything is looked up.
func sampleArgs(tool contracts.Tool) map[string]any {
	args := map[string]any{}
	switch tool.Name {
	case contracts.ToolSubmitIntent:
		args = intentBody()
	case contracts.ToolCreateMission:
		args = map[string]any{"goal": "conformance", "definitionId": "conformance-none"}
	case contracts.ToolSignalMission:
		args = map[string]any{"signal": "conformance", "expectedVersion": 1}
	case contracts.ToolSearchCapabilities:
		args = map[string]any{"query": ""}
	case contracts.ToolQueryMemory:
		args = map[string]any{"compartment": "conformance", "purpose": "conformance", "query": ""}
	case contracts.ToolListGoals:
		args = map[string]any{"compartment": "conformance", "purpose": "conformance"}
	case contracts.ToolPraxecCommand:
		args = map[string]any{"definitionId": "conformance-none"} // start: missions:write
	}
	if tool.PathArgument != "" {
		args[tool.PathArgument] = randomID("conf")
	}
	if tool.Idempotency == contracts.IdempotencyRequired {
		args["idempotencyKey"] = newKey()
	}
	return args
}

func scopeCases() []Case {
	var out []Case
	for tool := range contracts.All() {
		out = append(out, Case{
			ID: "SCOPE-" + tool.OperationID, Group: GroupScopes, Proves: "standards #21; seeds/003 requiredScope",
			Title:      fmt.Sprintf("%s without %s is refused 403 insufficient_scope naming it", tool.Name, tool.RequiredScope),
			Operations: []string{tool.OperationID},
			Run: func(t *T) {
				resp := t.call(t.tokenWithout(tool.RequiredScope), tool.Name, sampleArgs(tool))
				t.expectInsufficientScope(tool.Name, resp, tool.RequiredScope)
			},
		})
	}
	out = append(out, operatorScopeCases()...)
	return append(out,
		Case{ID: "SCOPE-READ-NO-WRITE", Group: GroupScopes, Proves: "standards #22",
			Title:      "missions:read alone never unlocks a write: intents, create, signal and cancel answer 403",
			Operations: []string{"submitIntent", "createMission", "signalMission", "cancelMission"},
			Run: func(t *T) {
				tok := t.tokenWith(TenantA, string(contracts.ScopeMissionsRead))
				for _, name := range []string{contracts.ToolSubmitIntent, contracts.ToolCreateMission, contracts.ToolSignalMission, contracts.ToolCancelMission} {
					tool := mustTool(name)
					t.expectInsufficientScope(name+" with missions:read only", t.call(tok, name, sampleArgs(tool)), contracts.ScopeMissionsWrite)
				}
			}},
		Case{ID: "SCOPE-BEFORE-BODY", Group: GroupScopes, Proves: "standards #25; DESIGN.md order of checks",
			Title:      "The scope is checked before the body: an under-scoped call with a malformed body and no key answers 403",
			Operations: []string{"submitIntent", "createMission"},
			Run: func(t *T) {
				tok := t.tokenWithout(contracts.ScopeMissionsWrite)
				for _, name := range []string{contracts.ToolSubmitIntent, contracts.ToolCreateMission} {
					resp := t.do(request{method: http.MethodPost, path: mustTool(name).Path, token: tok, body: []byte(`{"goal": `)})
					t.expectInsufficientScope(name+" with a malformed body", resp, contracts.ScopeMissionsWrite)
				}
			}},
		Case{ID: "SCOPE-BEFORE-REPLAY", Group: GroupScopes, Proves: "standards #26",
			Title:      "The scope is checked before idempotency: an under-scoped retry of a completed key is 403, never a replay",
			Operations: []string{"submitIntent"},
			Run: func(t *T) {
				key, body := newKey(), intentBody()
				t.submitIntent(t.token(TenantA), key, body)
				resp := t.post(intentsPath, t.tokenWithout(contracts.ScopeMissionsWrite), key, body)
				t.check(!resp.Replayed(), "an under-scoped retry was answered with the replayed response")
				t.expectInsufficientScope("under-scoped retry of a completed key", resp, contracts.ScopeMissionsWrite)
			}},
		Case{ID: "SCOPE-CASE", Group: GroupScopes, Proves: "standards #24",
			Title:      "Scopes match case-sensitively: Missions:write does not grant missions:write",
			Operations: []string{"submitIntent"},
			Run: func(t *T) {
				var scopes []string
				for _, s := range AllScopes() {
					if s != string(contracts.ScopeMissionsWrite) {
						scopes = append(scopes, s)
					}
				}
				tok := t.tokenWith(TenantA, append(scopes, "Missions:write")...)
				resp := t.post(intentsPath, tok, newKey(), intentBody())
				t.expectInsufficientScope("a token with Missions:write", resp, contracts.ScopeMissionsWrite)
			}},
	)
}

// operator is an operator endpoint as the scope cases call it.
type operator struct {
	operationID, method, path string
	scope                     contracts.Scope
	body                      map[string]any
}

// operators lists the contract's operator endpoints and the coverage
// recording endpoint, while the contract does not declare it among them.
func operators() []operator {
	var out []operator
	for e := range contracts.AllEndpoints() {
		op := operator{operationID: e.OperationID, method: e.Method, path: e.Path, scope: e.RequiredScope}
		if e.PathArgument != "" {
			op.path = strings.Replace(op.path, "{"+e.PathArgument+"}", randomID("conf"), 1)
		}
		if e.Method == http.MethodPost {
			op.body = map[string]any{}
			if e.OperationID == contracts.EndpointRevokeToken {
				op.body["jti"] = randomID("jti")
			}
		}
		out = append(out, op)
	}
	if _, declared := contracts.LookupEndpoint(contracts.OperationRecordCoverageRun); !declared {
		out = append(out, operator{operationID: contracts.OperationRecordCoverageRun, method: http.MethodPost,
			path: contracts.CoverageRunsPath, scope: contracts.ScopeCoverageWrite, body: map[string]any{}})
	}
	return out
}

func operatorScopeCases() []Case {
	var out []Case
	for _, op := range operators() {
		out = append(out, Case{
			ID: "SCOPE-" + op.operationID, Group: GroupScopes, Proves: "standards #21; DESIGN.md operator scopes",
			Title:      fmt.Sprintf("The operator endpoint %s %s without %s is refused 403 insufficient_scope naming it", op.method, op.path, op.scope),
			Operations: []string{op.operationID},
			Run: func(t *T) {
				req := request{method: op.method, path: op.path, token: t.tokenWithout(op.scope)}
				if op.body != nil {
					req.body = mustJSON(t, op.body)
				}
				t.expectInsufficientScope(op.operationID, t.do(req), op.scope)
			},
		})
	}
	return out
}

// expectInsufficientScope checks a 403 insufficient-scope problem with a
// challenge that names scope.
func (t *T) expectInsufficientScope(what string, resp *response, scope contracts.Scope) {
	t.expectProblem(what, resp, http.StatusForbidden, contracts.CodeInsufficientScope)
	t.expectChallenge(what, resp, "insufficient_scope", string(scope))
}
