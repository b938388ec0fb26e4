package conformance

import (
	"net/http"
	"strings"

	"github.com/praxa/praxa/contracts"
)

func tenancyCases() []Case {
	return []Case{
		{ID: "TEN-001", Group: GroupTenancy, Proves: "standards #27 (BOLA)",
			Title:      "Tenant B reading tenant A's mission gets the same 404 as for a mission that never existed",
			Operations: []string{"getMission"}, Run: func(t *T) {
				_, m := t.createMission(t.token(TenantA))
				tokB := t.token(TenantB)
				other := randomID("run")
				foreign := t.get(missionPath(runID(m)), tokB)
				unknown := t.get(missionPath(other), tokB)
				t.sameNotFound("aura_get_mission", foreign, unknown, runID(m), other)
			}},
		{ID: "TEN-002", Group: GroupTenancy, Proves: "standards #28",
			Title:      "Tenant B signalling or cancelling tenant A's mission gets 404 and changes nothing",
			Operations: []string{"signalMission", "cancelMission", "getMission"}, Run: func(t *T) {
				tokA, tokB := t.token(TenantA), t.token(TenantB)
				_, m := t.createMission(tokA)
				id := runID(m)
				signal := t.call(tokB, contracts.ToolSignalMission, map[string]any{"runId": id, "signal": "abort",
					"expectedVersion": version(m), "idempotencyKey": newKey()})
				t.expectProblem("tenant B signals A's mission", signal, http.StatusNotFound, contracts.CodeNotFound)
				cancel := t.call(tokB, contracts.ToolCancelMission, map[string]any{"runId": id, "idempotencyKey": newKey()})
				t.expectProblem("tenant B cancels A's mission", cancel, http.StatusNotFound, contracts.CodeNotFound)
				after := t.call(tokA, contracts.ToolGetMission, map[string]any{"runId": id})
				t.expectStatus("tenant A reads its mission back", after, http.StatusOK)
				am := t.object(after)
				t.check(state(am) == state(m) && version(am) == version(m),
					"tenant A's mission moved from %s@%v to %s@%v after tenant B's calls", state(m), version(m), state(am), version(am))
			}},
		{ID: "TEN-003", Group: GroupTenancy, Proves: "standards #28 (traces)",
			Title:      "Tenant B reading tenant A's trace gets the same 404 as for a trace that never existed",
			Operations: []string{"getTrace", "submitIntent"}, Run: func(t *T) {
				tokA, tokB := t.token(TenantA), t.token(TenantB)
				_, in := t.submitIntent(tokA, newKey(), intentBody())
				traceID, _ := in["traceId"].(string)
				if traceID == "" {
					t.Skipf("aura_submit_intent answered without a traceId to read back")
				}
				own := t.call(tokA, contracts.ToolGetTrace, map[string]any{"traceId": traceID})
				if own.Problem != nil && own.Problem.Code == contracts.CodeNotImplemented {
					t.Skipf("aura_get_trace is not implemented by the target")
				}
				t.expectStatus("tenant A reads its own trace", own, http.StatusOK)
				other := randomID("trace")
				foreign := t.call(tokB, contracts.ToolGetTrace, map[string]any{"traceId": traceID})
				unknown := t.call(tokB, contracts.ToolGetTrace, map[string]any{"traceId": other})
				t.sameNotFound("aura_get_trace", foreign, unknown, traceID, other)
			}},
		{ID: "TEN-004", Group: GroupTenancy, Proves: "standards #29 (mass assignment)",
			Title:      "Server-owned fields in a body (tenantId, TenantID, ownerId, state) are refused 400 as unknown fields",
			Operations: []string{"submitIntent", "createMission"}, Run: func(t *T) {
				tok := t.token(TenantA)
				for _, field := range []string{"tenantId", "TenantID", "tenant_id", "ownerId", "state"} {
					body := intentBody()
					body[field] = "conformance-b"
					resp := t.post(intentsPath, tok, newKey(), body)
					t.expectProblem("aura_submit_intent with "+field, resp, http.StatusBadRequest, contracts.CodeInvalidParams)
					t.expectPointer("aura_submit_intent with "+field, resp, "/"+field)
				}
				resp := t.post(mustTool(contracts.ToolCreateMission).Path, tok, newKey(),
					map[string]any{"goal": "conformance", "definitionId": deployPipeline, "tenantId": "conformance-b"})
				t.expectProblem("aura_create_mission with tenantId", resp, http.StatusBadRequest, contracts.CodeInvalidParams)
			}},
		{ID: "TEN-005", Group: GroupTenancy, Proves: "standards #32 (idempotency isolation)",
			Title:      "Tenants A and B sending the same key and body get two distinct intents, neither replayed",
			Operations: []string{"submitIntent"}, Run: func(t *T) {
				key, body := newKey(), intentBody()
				ra, a := t.submitIntent(t.token(TenantA), key, body)
				rb, b := t.submitIntent(t.token(TenantB), key, body)
				t.check(!ra.Replayed() && !rb.Replayed(), "one tenant's request was answered as a replay of the other's")
				t.check(a["intentId"] != b["intentId"], "both tenants got intent %v", a["intentId"])
			}},
		{ID: "TEN-006", Group: GroupTenancy, Proves: "standards #34",
			Title:      "Over MCP, tenant B's aura_get_mission on tenant A's runId is the same not-found tool error as an unknown runId",
			Operations: []string{"getMission"}, Run: func(t *T) {
				_, m := t.createMission(t.token(TenantA))
				cs := t.session(t.token(TenantB))
				foreign := t.toolError("aura_get_mission on A's runId", t.callTool(cs, contracts.ToolGetMission, map[string]any{"runId": runID(m)}))
				unknown := t.toolError("aura_get_mission on an unknown runId", t.callTool(cs, contracts.ToolGetMission, map[string]any{"runId": randomID("run")}))
				t.check(foreign.Error.Code == contracts.CodeNotFound && unknown.Error.Code == contracts.CodeNotFound,
					"want not-found for both, got %s and %s", foreign.Error.Code, unknown.Error.Code)
			}},
		{ID: "TEN-007", Group: GroupTenancy, Proves: "standards #27 over praxec (seeds/000 get)",
			Title:      "Tenant B's praxec.query get and explain of tenant A's workflow get the same 404 as an unknown workflow",
			Operations: []string{"praxecQuery"}, Run: func(t *T) {
				m := t.startDeploy(t.token(TenantA), nil)
				tokB := t.token(TenantB)
				for _, extra := range []map[string]any{{}, {"transition": "run_lint"}} {
					other := randomID("wf")
					foreignArgs := map[string]any{"workflowId": workflowID(m)}
					unknownArgs := map[string]any{"workflowId": other}
					for k, v := range extra {
						foreignArgs[k], unknownArgs[k] = v, v
					}
					foreign := t.call(tokB, contracts.ToolPraxecQuery, foreignArgs)
					unknown := t.call(tokB, contracts.ToolPraxecQuery, unknownArgs)
					t.sameNotFound("praxec.query", foreign, unknown, workflowID(m), other)
				}
			}},
	}
}

// sameNotFound checks that a foreign object's answer is a 404 identical,
// but for the identifier itself, to an unknown one's: same status, type,
// title and code, and a detail that reveals nothing more.
func (t *T) sameNotFound(what string, foreign, unknown *response, foreignID, unknownID string) {
	t.expectProblem(what+" of another tenant's object", foreign, http.StatusNotFound, contracts.CodeNotFound)
	t.expectProblem(what+" of an unknown object", unknown, http.StatusNotFound, contracts.CodeNotFound)
	f, u := foreign.Problem, unknown.Problem
	t.check(f.Type == u.Type && f.Title == u.Title && f.Status == u.Status,
		"%s: the foreign and the unknown answers differ: %q/%q/%d vs %q/%q/%d", what, f.Type, f.Title, f.Status, u.Type, u.Title, u.Status)
	shape := func(detail, id string) string { return strings.ReplaceAll(detail, id, "<id>") }
	t.check(shape(f.Detail, foreignID) == shape(u.Detail, unknownID),
		"%s: the details differ beyond the identifier: %q vs %q", what, f.Detail, u.Detail)
	t.check(len(f.Links) == len(u.Links), "%s: the foreign answer carries %d links, the unknown one %d", what, len(f.Links), len(u.Links))
}

// expectPointer checks that a problem's errors[] name pointer.
func (t *T) expectPointer(what string, resp *response, pointer string) {
	var got []string
	for _, e := range resp.Problem.Errors {
		if e.Pointer == pointer {
			return
		}
		got = append(got, e.Pointer)
	}
	t.Fatalf("%s: errors[] must name %s, got %q", what, pointer, got)
}
