package contracts_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/internal/golden"
)

// endpointRow is one operator endpoint as the gateway serves it.
type endpointRow struct {
	operationID, method, path string
	scope                     contracts.Scope
	pathArgument              string
	bodyOptional              bool
}

// wantEndpoints is the list of operator endpoints in their stable order.
var wantEndpoints = []endpointRow{
	{"revokeToken", "POST", "/v8/tokens/revocations", "tokens:write", "", false},
	{"listApprovals", "GET", "/v8/approvals", "approvals:write", "", false},
	{"approveApproval", "POST", "/v8/approvals/{approvalId}/approve", "approvals:write", "approvalId", true},
	{"rejectApproval", "POST", "/v8/approvals/{approvalId}/reject", "approvals:write", "approvalId", true},
	{"recordCoverageRun", "POST", "/v8/coverage/runs", "coverage:write", "", false},
	{"reloadConfig", "POST", "/v8/config/reload", "config:write", "", true},
	{"acceptCapability", "POST", "/v8/capabilities/{name}/accept", "capabilities:admin", "name", true},
}

func TestEndpointRows(t *testing.T) {
	eps := contracts.OperatorEndpoints()
	if len(eps) != len(wantEndpoints) {
		t.Fatalf("%d operator endpoints, want %d", len(eps), len(wantEndpoints))
	}
	for i, want := range wantEndpoints {
		t.Run(want.operationID, func(t *testing.T) {
			got := eps[i]
			if got.OperationID != want.operationID {
				t.Fatalf("endpoint %d is %q, want %q", i, got.OperationID, want.operationID)
			}
			if got.Method != want.method || got.Path != want.path || got.RequiredScope != want.scope ||
				got.PathArgument != want.pathArgument || got.BodyOptional != want.bodyOptional {
				t.Errorf("row = (%s %s %s pathArgument=%q bodyOptional=%v), want (%s %s %s pathArgument=%q bodyOptional=%v)",
					got.Method, got.Path, got.RequiredScope, got.PathArgument, got.BodyOptional,
					want.method, want.path, want.scope, want.pathArgument, want.bodyOptional)
			}
			if got.Summary == "" || got.Description == "" {
				t.Errorf("summary %q, description %q: neither may be empty", got.Summary, got.Description)
			}
			if want := map[bool]int{true: 201, false: 200}[got.OperationID == "recordCoverageRun"]; got.SuccessStatus != want {
				t.Errorf("successStatus %d, want %d (a recorded run is created)", got.SuccessStatus, want)
			}
			if got.BodyOptional && got.Method != "POST" {
				t.Error("only a POST has a body to leave out")
			}
		})
	}
	for _, id := range []string{contracts.EndpointRevokeToken, contracts.EndpointListApprovals,
		contracts.EndpointApproveApproval, contracts.EndpointRejectApproval, contracts.EndpointReloadConfig, contracts.EndpointAcceptCapability} {
		if _, ok := contracts.LookupEndpoint(id); !ok {
			t.Errorf("constant %q names no endpoint", id)
		}
	}
}

func TestEndpointOrderIsStable(t *testing.T) {
	var want []string
	for _, r := range wantEndpoints {
		want = append(want, r.operationID)
	}
	checkOrder(t, want, contracts.OperatorEndpoints(), contracts.AllEndpoints(),
		func(e contracts.Endpoint) string { return e.OperationID }, "OperatorEndpoints", "AllEndpoints")
}

func TestLookupEndpoint(t *testing.T) {
	checkLookup(t, []lookupCase{
		{"revokeToken", true},
		{"listApprovals", true},
		{"approveApproval", true},
		{"rejectApproval", true},
		{"RevokeToken", false},
		{"revokeToken ", false},
		{"resolveApproval", false},
		{"getMission", false}, // a tool's operationId, not an endpoint's
		{"aura_get_mission", false},
		{"", false},
	}, contracts.LookupEndpoint, func(e contracts.Endpoint) string { return e.OperationID }, "LookupEndpoint")
}

// Operator endpoints are not tools: no MCP registration, no tools.json
// entry, no tool lookup finds them.
func TestEndpointsAreNotTools(t *testing.T) {
	list, err := contracts.MarshalToolList(contracts.Tools())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range contracts.OperatorEndpoints() {
		if _, ok := contracts.ByOperationID(e.OperationID); ok {
			t.Errorf("%s is also a tool's operationId", e.OperationID)
		}
		if _, ok := contracts.Lookup(e.OperationID); ok {
			t.Errorf("%s is also a tool name", e.OperationID)
		}
		if strings.Contains(string(list), `"`+e.OperationID+`"`) || strings.Contains(string(list), `"`+e.Path+`"`) {
			t.Errorf("tools.json mentions %s", e.OperationID)
		}
	}
}

// TestOperationIDsUniqueAcrossToolsAndEndpoints: the OpenAPI document holds
// tools and endpoints side by side, so no operationId and no route may be
// claimed twice across both.
func TestOperationIDsUniqueAcrossToolsAndEndpoints(t *testing.T) {
	opIDs := map[string]string{}
	routes := map[string]string{}
	claim := func(owner, opID, method, path string) {
		if !operationIDRE.MatchString(opID) {
			t.Errorf("%s: operationId %q is not lowerCamelCase", owner, opID)
		}
		if prev, dup := opIDs[opID]; dup {
			t.Errorf("operationId %q is used by %s and %s", opID, prev, owner)
		}
		opIDs[opID] = owner
		route := method + " " + path
		if prev, dup := routes[route]; dup {
			t.Errorf("route %q is used by %s and %s", route, prev, owner)
		}
		routes[route] = owner
	}
	for _, tool := range contracts.Tools() {
		claim("tool "+tool.Name, tool.OperationID, tool.Method, tool.Path)
	}
	for _, e := range contracts.OperatorEndpoints() {
		claim("endpoint "+e.OperationID, e.OperationID, e.Method, e.Path)
	}
	if want := len(contracts.Tools()) + len(contracts.OperatorEndpoints()); len(opIDs) != want {
		t.Errorf("%d distinct operationIds, want %d", len(opIDs), want)
	}
}

func TestEndpointScopesAreOperatorScopes(t *testing.T) {
	for _, e := range contracts.OperatorEndpoints() {
		if !e.RequiredScope.Known() || !e.RequiredScope.Operator() {
			t.Errorf("%s: requiredScope %q is not an operator scope", e.OperationID, e.RequiredScope)
		}
	}
}

func TestEndpointPaths(t *testing.T) {
	for _, e := range contracts.OperatorEndpoints() {
		if !strings.HasPrefix(e.Path, "/"+contracts.APIVersion+"/") {
			t.Errorf("%s: path %q is not under /%s", e.OperationID, e.Path, contracts.APIVersion)
		}
		if e.Method != "GET" && e.Method != "POST" {
			t.Errorf("%s: method %q is neither GET nor POST", e.OperationID, e.Method)
		}
		var params []string
		for _, m := range pathParamRE.FindAllStringSubmatch(e.Path, -1) {
			params = append(params, m[1])
		}
		switch {
		case e.PathArgument == "" && len(params) != 0:
			t.Errorf("%s: path %q has parameters %v but no pathArgument", e.OperationID, e.Path, params)
		case e.PathArgument != "" && !slices.Equal(params, []string{e.PathArgument}):
			t.Errorf("%s: pathArgument %q, path parameters %v", e.OperationID, e.PathArgument, params)
		}
	}
}

func TestEndpointSchemas(t *testing.T) {
	for _, e := range contracts.OperatorEndpoints() {
		t.Run(e.OperationID, func(t *testing.T) {
			checkOperationSchemas(t, e.OperationID, e.Method, e.PathArgument, e.InputSchema, e.OutputSchema)
			props, req := properties(t, e.InputSchema)
			if _, has := props["idempotencyKey"]; has {
				t.Error("an operator endpoint takes no idempotencyKey")
			}
			if e.BodyOptional {
				for _, r := range req {
					if r != e.PathArgument {
						t.Errorf("the body is optional, yet %s is required", r)
					}
				}
			}
		})
	}
}

func TestEndpointErrorCodes(t *testing.T) {
	for _, e := range contracts.OperatorEndpoints() {
		has := checkErrorCodes(t, e.OperationID, e.Method, e.PathArgument, e.ErrorCodes(), e.Errors)
		for _, c := range []contracts.Code{contracts.CodeToolNotAllowed, contracts.CodeIdempotencyKeyMissing, contracts.CodeIdempotencyKeyReused} {
			if has(c) {
				t.Errorf("%s: an operator endpoint is no tool and takes no key, yet answers %s", e.OperationID, c)
			}
		}
	}
	for _, id := range []string{contracts.EndpointApproveApproval, contracts.EndpointRejectApproval} {
		e, _ := contracts.LookupEndpoint(id)
		if !slices.Contains(e.ErrorCodes(), contracts.CodeMissionStateConflict) {
			t.Errorf("%s: resolving a resolved approval answers mission-state-conflict", id)
		}
	}
}

func TestValidateEndpointInput(t *testing.T) {
	long := func(n int) string { return `"` + strings.Repeat("a", n) + `"` }
	tests := []inputCase{
		{"revokeToken", "minimal", `{"jti":"x"}`, nil},
		{"revokeToken", "full", `{"jti":"x","reason":"leaked","expiresAt":"2026-12-01T10:00:00Z"}`, nil},
		{"revokeToken", "empty reason", `{"jti":"x","reason":""}`, nil},
		{"revokeToken", "jti at bound", `{"jti":` + long(256) + `}`, nil},
		{"revokeToken", "empty", `{}`, []fe{{"/jti", "required"}}},
		{"revokeToken", "empty jti", `{"jti":""}`, []fe{{"/jti", "minLength"}}},
		{"revokeToken", "jti too long", `{"jti":` + long(257) + `}`, []fe{{"/jti", "maxLength"}}},
		{"revokeToken", "unknown member", `{"jti":"x","zzz":1}`, []fe{{"/zzz", "additionalProperties"}}},
		{"revokeToken", "bad expiry", `{"jti":"x","expiresAt":"tomorrow"}`, []fe{{"/expiresAt", "format"}}},
		{"revokeToken", "expiry number", `{"jti":"x","expiresAt":1767225600}`, []fe{{"/expiresAt", "type"}}},
		{"revokeToken", "not an object", `[]`, []fe{{"", "type"}}},

		{"listApprovals", "none", `{}`, nil},
		{"listApprovals", "all", `{"status":"all","limit":500}`, nil},
		{"listApprovals", "cancelled", `{"status":"cancelled","limit":1}`, nil},
		{"listApprovals", "unknown status", `{"status":"open"}`, []fe{{"/status", "enum"}}},
		{"listApprovals", "status case", `{"status":"Pending"}`, []fe{{"/status", "enum"}}},
		{"listApprovals", "limit zero", `{"limit":0}`, []fe{{"/limit", "minimum"}}},
		{"listApprovals", "limit too large", `{"limit":501}`, []fe{{"/limit", "maximum"}}},
		{"listApprovals", "limit fraction", `{"limit":1.5}`, []fe{{"/limit", "type"}}},
		{"listApprovals", "unknown parameter", `{"tenant":"t"}`, []fe{{"/tenant", "additionalProperties"}}},

		{"approveApproval", "no body", `{"approvalId":"ap_1"}`, nil},
		{"approveApproval", "note", `{"approvalId":"ap_1","note":"looks right"}`, nil},
		{"approveApproval", "empty note", `{"approvalId":"ap_1","note":""}`, nil},
		{"approveApproval", "note at bound", `{"approvalId":"ap_1","note":` + long(2000) + `}`, nil},
		{"approveApproval", "note too long", `{"approvalId":"ap_1","note":` + long(2001) + `}`, []fe{{"/note", "maxLength"}}},
		{"approveApproval", "note number", `{"approvalId":"ap_1","note":1}`, []fe{{"/note", "type"}}},
		{"approveApproval", "unknown member", `{"approvalId":"ap_1","reason":"x"}`, []fe{{"/reason", "additionalProperties"}}},
		{"approveApproval", "bad id", `{"approvalId":"../x"}`, []fe{{"/approvalId", "pattern"}}},
		{"approveApproval", "no id", `{}`, []fe{{"/approvalId", "required"}}},

		{"rejectApproval", "no body", `{"approvalId":"ap_1"}`, nil},
		{"rejectApproval", "note", `{"approvalId":"ap_1","note":"wrong target"}`, nil},
		{"rejectApproval", "empty id", `{"approvalId":""}`, []fe{{"/approvalId", "minLength"}, {"/approvalId", "pattern"}}},
		{"recordCoverageRun", "one result", `{"suite":"praxa-conformance","startedAt":"2026-11-30T10:00:00Z","finishedAt":"2026-11-30T10:01:00Z","results":[{"id":"AUTH-001","result":"pass","operations":["getMission"]}]}`, nil},
		{"recordCoverageRun", "no results", `{"suite":"praxa-conformance","startedAt":"2026-11-30T10:00:00Z","finishedAt":"2026-11-30T10:01:00Z","results":[]}`, []fe{{"/results", "minItems"}}},
		{"reloadConfig", "no body", `{}`, nil},
		{"reloadConfig", "unknown member", `{"path":"/etc/praxec.yaml"}`, []fe{{"/path", "additionalProperties"}}},
		{"reloadConfig", "not an object", `[]`, []fe{{"", "type"}}},
		{"acceptCapability", "name only", `{"name":"late.echo"}`, nil},
		{"acceptCapability", "with the reviewed hash", `{"name":"late.echo","sha256":"` + strings.Repeat("a", 64) + `"}`, nil},
		{"acceptCapability", "short hash", `{"name":"late.echo","sha256":"abc"}`, []fe{{"/sha256", "minLength"}, {"/sha256", "pattern"}}},
		{"acceptCapability", "unknown member", `{"name":"late.echo","force":true}`, []fe{{"/force", "additionalProperties"}}},
		{"recordCoverageRun", "bad verdict", `{"suite":"s","startedAt":"2026-11-30T10:00:00Z","finishedAt":"2026-11-30T10:01:00Z","results":[{"id":"A","result":"maybe"}]}`, []fe{{"/results/0/result", "enum"}}},
	}
	var ids []string
	for _, e := range contracts.OperatorEndpoints() {
		ids = append(ids, e.OperationID)
	}
	checkInputCases(t, tests, contracts.ValidateEndpointInput, ids, "ValidateEndpointInput", "request")
	for _, id := range []string{"getMission", "aura_get_mission", "RevokeToken", ""} {
		if err := contracts.ValidateEndpointInput(id, map[string]any{}); err == nil {
			t.Errorf("ValidateEndpointInput accepted the unknown endpoint %q", id)
		}
		if err := contracts.ValidateEndpointOutput(id, map[string]any{}); err == nil {
			t.Errorf("ValidateEndpointOutput accepted the unknown endpoint %q", id)
		}
	}
}

const approvalView = `{
  "id": "ap_1", "status": "pending", "workflowId": "wf_1", "runId": "r-1", "transition": "deploy",
  "queue": "release", "arguments": {"service": "payments"},
  "requestedBy": "agent-7", "requestedAt": "2026-11-30T10:00:00.123456789Z"
}`

func TestValidateEndpointOutput(t *testing.T) {
	resolved := strings.Replace(approvalView, `"status": "pending"`, `"status": "approved", "resolvedBy": "alice", "resolvedAt": "2026-11-30T10:05:00Z"`, 1)
	mission := `{"workflow":{"id":"wf_1","definitionId":"deploy","definitionVersion":1,"state":"deployed","version":5},
		"result":{"status":"executed"},"context":{},"evidence":[],"links":[]}`
	waiting := `{"workflow":{"id":"wf_1","definitionId":"deploy","definitionVersion":1,"state":"review","version":4},
		"result":{"status":"pending_approval"},"context":{},"evidence":[],"links":[],"approval":{"id":"ap_2","transition":"ship"}}`
	ok := []struct{ id, result string }{
		{"revokeToken", `{"jti":"x","revoked":true,"at":"2026-11-30T10:00:00Z"}`},
		{"listApprovals", `{"approvals":[]}`},
		{"listApprovals", `{"approvals":[` + approvalView + `,` + resolved + `]}`},
		{"approveApproval", `{"approval":` + resolved + `,"mission":` + mission + `}`},
		{"approveApproval", `{"approval":` + resolved + `,"mission":` + waiting + `}`},
		{"rejectApproval", `{"approval":` + strings.Replace(resolved, "approved", "rejected", 1) + `,"mission":` + mission + `}`},
	}
	for _, c := range ok {
		if err := contracts.ValidateEndpointOutput(c.id, decodeArgs(t, c.result)); err != nil {
			t.Errorf("%s: a realistic answer is refused: %v", c.id, err)
		}
	}
	bad := []struct{ id, result, pointer string }{
		{"revokeToken", `{"jti":"x","revoked":false,"at":"2026-11-30T10:00:00Z"}`, "/revoked"},
		{"revokeToken", `{"jti":"x","revoked":true,"at":"now"}`, "/at"},
		{"listApprovals", `{}`, "/approvals"},
		{"listApprovals", `{"approvals":[` + strings.Replace(approvalView, "pending", "open", 1) + `]}`, "/approvals/0/status"},
		{"approveApproval", `{"approval":` + resolved + `}`, "/mission"},
		{"approveApproval", `{"approval":` + resolved + `,"mission":{}}`, "/mission/context"},
	}
	for _, b := range bad {
		err := contracts.ValidateEndpointOutput(b.id, decodeArgs(t, b.result))
		if err == nil {
			t.Errorf("%s %s: accepted", b.id, b.result)
			continue
		}
		if ce := contracts.AsError(err); len(ce.Fields) == 0 || ce.Fields[0].Pointer != b.pointer {
			t.Errorf("%s: field errors %v, want the first at %s", b.id, ce.Fields, b.pointer)
		}
	}
}

func TestEndpointJSONForm(t *testing.T) {
	for _, e := range contracts.OperatorEndpoints() {
		t.Run(e.OperationID, func(t *testing.T) {
			want := []string{"description", "inputSchema", "method", "operationId", "outputSchema", "path",
				"requiredScope", "successStatus", "summary"}
			if e.PathArgument != "" {
				want = append(want, "pathArgument")
			}
			if e.BodyOptional {
				want = append(want, "bodyOptional")
			}
			wire := e.Clone()
			wire.Errors = nil
			checkJSONForm(t, e, wire, want)
		})
	}
}

// TestEndpointsGolden pins the operator endpoints as the OpenAPI document
// and the gateway see them, with their complete error lists.
func TestEndpointsGolden(t *testing.T) {
	type row struct {
		contracts.Endpoint
		ErrorCodes []contracts.Code `json:"errorCodes"`
	}
	var rows []row
	for _, e := range contracts.OperatorEndpoints() {
		rows = append(rows, row{e, e.ErrorCodes()})
	}
	golden.Check(t, "testdata/endpoints.golden.json", marshalGolden(t, rows), "")
}
