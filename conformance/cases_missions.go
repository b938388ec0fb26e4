package conformance

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/praxa/praxa/contracts"
)

// The mission cases drive the seeds/000 praxec semantics on the target's
// deploy_pipeline (skipped when it has none): start, get, explain, submit,
// the error codes and their links, terminal answers.

func missionCases() []Case {
	query, command := []string{"praxecQuery"}, []string{"praxecCommand"}
	return []Case{
		{ID: "MIS-001", Group: GroupMissions, Proves: "seeds/000 start",
			Title:      "praxec.command start answers the initial state, version 1, status started and pre-filled submit links",
			Operations: command, Run: func(t *T) {
				m := t.startDeploy(t.token(TenantA), nil)
				t.check(state(m) == "lint" && version(m) == 1 && resultStatus(m) == "started",
					"want lint@1 started, got %s@%v %s", state(m), version(m), resultStatus(m))
				t.check(workflowID(m) != "", "the answer names no workflow.id")
				l := findLink(m, "run_lint")
				t.check(l != nil, "no run_lint link: rels %q", linkRels(m))
				args := linkArgs(l)
				t.check(l["method"] == contracts.ToolPraxecCommand && args["workflowId"] == workflowID(m) &&
					args["expectedVersion"] == float64(1) && args["transition"] == "run_lint",
					"the run_lint link is not a pre-filled submit: %v", l)
				_, hasContext := m["context"].(map[string]any)
				_, hasEvidence := m["evidence"].([]any)
				t.check(hasContext && hasEvidence, "the answer lacks context {} or evidence []")
			}},
		{ID: "MIS-002", Group: GroupMissions, Proves: "seeds/000 get",
			Title:      "praxec.query get reads the instance with status waiting_for_action and every legal move as a link",
			Operations: query, Run: func(t *T) {
				tok := t.token(TenantA)
				m := t.startDeploy(tok, nil)
				resp := t.call(tok, contracts.ToolPraxecQuery, map[string]any{"workflowId": workflowID(m)})
				t.expectStatus("praxec.query get", resp, http.StatusOK)
				g := t.object(resp)
				t.check(state(g) == "lint" && version(g) == 1 && resultStatus(g) == "waiting_for_action",
					"want lint@1 waiting_for_action, got %s@%v %s", state(g), version(g), resultStatus(g))
				t.check(containsAll(linkRels(g), "run_lint", "abort"), "want links run_lint and abort, got %q", linkRels(g))
			}},
		{ID: "MIS-003", Group: GroupMissions, Proves: "seeds/000 explain",
			Title:      "praxec.query explain says whether a transition can fire now and lists the legal ones",
			Operations: query, Run: func(t *T) {
				tok := t.token(TenantA)
				m := t.startDeploy(tok, nil)
				resp := t.call(tok, contracts.ToolPraxecQuery, map[string]any{"workflowId": workflowID(m), "transition": "run_lint"})
				t.expectStatus("explain run_lint", resp, http.StatusOK)
				x := t.object(resp)
				legal, _ := x["legalTransitionsNow"].([]any)
				var names []string
				for _, n := range legal {
					s, _ := n.(string)
					names = append(names, s)
				}
				t.check(x["allowedFromCurrentState"] == true && x["currentState"] == "lint" && x["deterministic"] == false,
					"explain run_lint: %s", snippet(resp.Body))
				t.check(containsAll(names, "run_lint", "abort") && !slices.Contains(names, "deploy"), "legalTransitionsNow = %q", names)
				resp = t.call(tok, contracts.ToolPraxecQuery, map[string]any{"workflowId": workflowID(m), "transition": "deploy"})
				t.expectStatus("explain deploy", resp, http.StatusOK)
				t.check(t.object(resp)["allowedFromCurrentState"] == false, "deploy is explained as allowed from lint: %s", snippet(resp.Body))
			}},
		{ID: "MIS-004", Group: GroupMissions, Proves: "seeds/000 submit; links are copied verbatim",
			Title:      "Submitting a link's args verbatim fires the transition: status executed, version 2, the next moves as links",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				m := t.startDeploy(tok, nil)
				resp := t.call(tok, contracts.ToolPraxecCommand, linkArgs(findLink(m, "run_lint")))
				t.expectStatus("submit run_lint", resp, http.StatusOK)
				s := t.object(resp)
				t.check(state(s) == "test" && version(s) == 2 && resultStatus(s) == "executed",
					"want test@2 executed, got %s@%v %s", state(s), version(s), resultStatus(s))
				t.check(findLink(s, "run_tests") != nil, "no run_tests link after linting: %q", linkRels(s))
			}},
		{ID: "MIS-005", Group: GroupMissions, Proves: "seeds/000 submit: VERSION_CONFLICT",
			Title:      "A submit on a stale expectedVersion is refused 409 VERSION_CONFLICT with a link to read the instance again",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				m := t.startDeploy(tok, nil)
				t.expectStatus("submit run_lint", t.call(tok, contracts.ToolPraxecCommand, linkArgs(findLink(m, "run_lint"))), http.StatusOK)
				resp := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"workflowId": workflowID(m), "expectedVersion": 1, "transition": "run_tests",
					"arguments": map[string]any{"coverage": 90}})
				t.expectProblem("a stale expectedVersion", resp, http.StatusConflict, contracts.CodeVersionConflict)
				t.check(slices.Contains(problemRels(resp), "get"), "VERSION_CONFLICT carries no get link: %q", problemRels(resp))
			}},
		{ID: "MIS-006", Group: GroupMissions, Proves: "seeds/000 submit: INVALID_TRANSITION",
			Title:      "A transition that is not legal in the current state is refused 409 INVALID_TRANSITION",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				m := t.startDeploy(tok, nil)
				resp := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"workflowId": workflowID(m), "expectedVersion": 1, "transition": "deploy"})
				t.expectProblem("deploy from lint", resp, http.StatusConflict, contracts.CodeInvalidTransition)
			}},
		{ID: "MIS-007", Group: GroupMissions, Proves: "seeds/000 AMBIGUOUS_INTENT",
			Title:      "Arguments that match no dispatch shape are 400 AMBIGUOUS_INTENT with the seed's example links",
			Operations: []string{"praxecCommand", "praxecQuery"}, Run: func(t *T) {
				tok := t.token(TenantA)
				resp := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"workflowId": randomID("wf")})
				t.expectProblem("praxec.command with workflowId alone", resp, http.StatusBadRequest, contracts.CodeAmbiguousIntent)
				t.check(containsAll(problemRels(resp), "start_example", "submit_example", "define_example"),
					"want links start_example, submit_example, define_example, got %q", problemRels(resp))
				resp = t.call(tok, contracts.ToolPraxecQuery, map[string]any{"transition": "run_lint"})
				t.expectProblem("praxec.query with transition alone", resp, http.StatusBadRequest, contracts.CodeAmbiguousIntent)
				t.check(containsAll(problemRels(resp), "home", "search"), "want links home and search, got %q", problemRels(resp))
				// Over MCP the same refusal is a tool error carrying the links.
				env := t.toolError("praxec.command over MCP with workflowId alone",
					t.callTool(t.session(tok), contracts.ToolPraxecCommand, map[string]any{"workflowId": randomID("wf")}))
				var rels []string
				for _, l := range env.Links {
					rels = append(rels, l.Rel)
				}
				t.check(env.Error.Code == contracts.CodeAmbiguousIntent && containsAll(rels, "start_example", "submit_example", "define_example"),
					"over MCP: %s with links %q", env.Error.Code, rels)
			}},
		{ID: "MIS-008", Group: GroupMissions, Proves: "seeds/000: terminal is result.status completed with empty links",
			Title:      "A terminal state answers result.status completed with empty links, on submit and on get",
			Operations: []string{"praxecCommand", "praxecQuery"}, Run: func(t *T) {
				tok := t.token(TenantA)
				m := t.startDeploy(tok, nil)
				resp := t.call(tok, contracts.ToolPraxecCommand, linkArgs(findLink(m, "abort")))
				t.expectStatus("submit abort", resp, http.StatusOK)
				s := t.object(resp)
				l, isArray := s["links"].([]any)
				t.check(resultStatus(s) == "completed" && isArray && len(l) == 0, "after abort: status %s, links %v", resultStatus(s), s["links"])
				resp = t.call(tok, contracts.ToolPraxecQuery, map[string]any{"workflowId": workflowID(m)})
				t.expectStatus("get after abort", resp, http.StatusOK)
				g := t.object(resp)
				l, isArray = g["links"].([]any)
				t.check(resultStatus(g) == "completed" && isArray && len(l) == 0, "get after abort: status %s, links %v", resultStatus(g), g["links"])
			}},
		{ID: "MIS-009", Group: GroupMissions, Proves: "seeds/000 RUN_ID_ALREADY_RUNNING",
			Title:      "Starting with a runId already used is 409 RUN_ID_ALREADY_RUNNING with a get link to the existing instance",
			Operations: command, Run: func(t *T) {
				tok, run := t.token(TenantA), randomID("run")
				t.startDeploy(tok, map[string]any{"runId": run})
				resp := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"definitionId": deployPipeline, "runId": run})
				t.expectProblem("the runId again", resp, http.StatusConflict, contracts.CodeRunIDAlreadyRunning)
				t.check(slices.Contains(problemRels(resp), "get"), "RUN_ID_ALREADY_RUNNING carries no get link: %q", problemRels(resp))
			}},
		{ID: "MIS-010", Group: GroupMissions, Proves: "seeds/000 submit exact replay; DESIGN.md",
			Title:      "An exact replay of a submit that succeeded returns the original answer, not VERSION_CONFLICT",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				m := t.startDeploy(tok, nil)
				args := linkArgs(findLink(m, "run_lint"))
				first := t.call(tok, contracts.ToolPraxecCommand, args)
				t.expectStatus("submit run_lint", first, http.StatusOK)
				again := t.call(tok, contracts.ToolPraxecCommand, args)
				t.expectStatus("the same submit again", again, http.StatusOK)
				t.check(jsonEqual(first.Body, again.Body), "the replay differs from the original:\n%s\nvs\n%s", snippet(again.Body), snippet(first.Body))
			}},
		{ID: "MIS-011", Group: GroupMissions, Proves: "seeds/000 deterministic chain, prefill, evidence guards",
			Title:      "Following links verbatim runs the deploy pipeline to completion (sub-workflow, prefilled deploy)",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				m := t.startDeploy(tok, nil)
				steps := []struct {
					rel  string
					args map[string]any
				}{{"run_lint", nil}, {"run_tests", map[string]any{"coverage": 87.5}}, {"build", map[string]any{"artifactId": "art_conformance"}}, {"deploy", nil}}
				for _, step := range steps {
					l := findLink(m, step.rel)
					t.check(l != nil, "no %s link in state %s: %q", step.rel, state(m), linkRels(m))
					args := linkArgs(l)
					if step.args != nil {
						args["arguments"] = step.args
					}
					resp := t.call(tok, contracts.ToolPraxecCommand, args)
					t.expectStatus("submit "+step.rel, resp, http.StatusOK)
					m = t.object(resp)
				}
				t.check(state(m) == "deployed" && resultStatus(m) == "completed" && len(links(m)) == 0,
					"after deploy: %s %s with links %q", state(m), resultStatus(m), linkRels(m))
			}},
		{ID: "MIS-012", Group: GroupMissions, Proves: "DESIGN.md aura_* missions; standards #39, #98",
			Title:      "aura_* missions: create answers 201 with Location, links name aura_* tools with a fresh key, cancel is terminal and repeatable, a signal after it is 409",
			Operations: []string{"createMission", "getMission", "signalMission", "cancelMission"}, Run: func(t *T) {
				tok := t.token(TenantA)
				resp, m := t.createMission(tok)
				id := runID(m)
				t.expectStatus("aura_create_mission", resp, http.StatusCreated)
				loc := resp.Header.Get("Location")
				t.check(strings.HasSuffix(loc, missionPath(id)), "Location %q does not name /v8/missions/%s", loc, id)
				l := findLink(m, "run_lint")
				t.check(l != nil && l["method"] == contracts.ToolSignalMission, "the run_lint link does not name aura_signal_mission: %v", l)
				key, _ := linkArgs(l)["idempotencyKey"].(string)
				t.check(contracts.ValidIdempotencyKey(key), "the link carries no valid idempotencyKey: %v", l)
				read := t.call(tok, contracts.ToolGetMission, map[string]any{"runId": id})
				t.expectStatus("aura_get_mission", read, http.StatusOK)
				t.check(runID(t.object(read)) == id, "aura_get_mission answered another runId")
				cancel := t.call(tok, contracts.ToolCancelMission, map[string]any{"runId": id, "idempotencyKey": newKey()})
				t.expectStatus("aura_cancel_mission", cancel, http.StatusOK)
				c := t.object(cancel)
				t.check(resultStatus(c) == "completed" && len(links(c)) == 0, "after cancel: status %s, links %q", resultStatus(c), linkRels(c))
				again := t.call(tok, contracts.ToolCancelMission, map[string]any{"runId": id, "idempotencyKey": newKey()})
				t.expectStatus("cancelling the cancelled mission again", again, http.StatusOK)
				signal := t.call(tok, contracts.ToolSignalMission, map[string]any{"runId": id, "signal": "run_lint",
					"expectedVersion": version(c), "idempotencyKey": newKey()})
				t.expectProblem("a signal after cancel", signal, http.StatusConflict, contracts.CodeMissionStateConflict)
			}},
		{ID: "MIS-013", Group: GroupMissions, Proves: "seeds/000 submit: GUARD_REJECTED; seeds/004 evidence guards",
			Title:      "A legal transition whose evidence guard is unmet is refused 409 GUARD_REJECTED and changes nothing",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				resp := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"definitionId": "guarded_merge"})
				if resp.Status == http.StatusNotFound {
					t.Skipf("the target has no workflow guarded_merge (merge guarded by evidence tests_passed)")
				}
				t.expectStatus("start guarded_merge", resp, http.StatusOK)
				m := t.object(resp)
				l := findLink(m, "merge")
				if l == nil {
					t.Skipf("the target's guarded_merge offers no merge from its initial state")
				}
				refused := t.call(tok, contracts.ToolPraxecCommand, linkArgs(l))
				t.expectProblem("merge before tests passed", refused, http.StatusConflict, contracts.CodeGuardRejected)
				after := t.call(tok, contracts.ToolPraxecQuery, map[string]any{"workflowId": workflowID(m)})
				t.expectStatus("read back", after, http.StatusOK)
				a := t.object(after)
				t.check(state(a) == state(m) && version(a) == version(m), "the refused merge moved the instance to %s@%v", state(a), version(a))
			}},
		{ID: "MIS-014", Group: GroupMissions, Proves: "DESIGN.md: praxec.command honours an Idempotency-Key header over REST",
			Title:      "A praxec start sent twice with one Idempotency-Key starts one instance: the retry replays it",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				t.needDeploy()
				key, path := newKey(), mustTool(contracts.ToolPraxecCommand).Path
				first := t.post(path, tok, key, map[string]any{"definitionId": deployPipeline})
				t.expectStatus("start with a key", first, http.StatusOK)
				again := t.post(path, tok, key, map[string]any{"definitionId": deployPipeline})
				t.expectStatus("the same start again", again, http.StatusOK)
				t.check(again.Replayed() && workflowID(t.object(again)) == workflowID(t.object(first)),
					"the retry started another instance (replayed=%t)", again.Replayed())
			}},
		{ID: "MIS-015", Group: GroupMissions, Proves: "DESIGN.md (amended 2026-12-07): praxec.command takes an optional idempotencyKey argument on every surface; a retry_with_key link works copied verbatim",
			Title:      "praxec.command deduplicates by its idempotencyKey argument over MCP and REST, refuses a header that disagrees, and its retry_with_key link works as given",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				t.needDeploy()
				path := mustTool(contracts.ToolPraxecCommand).Path
				// REST: the key as a body member, then the same with the same
				// key in the header too.
				key := newKey()
				body := map[string]any{"definitionId": deployPipeline, "idempotencyKey": key}
				first := t.post(path, tok, "", body)
				t.expectStatus("start with idempotencyKey in the body", first, http.StatusOK)
				again := t.post(path, tok, key, body)
				t.check(again.Status == http.StatusOK && again.Replayed() && workflowID(t.object(again)) == workflowID(t.object(first)),
					"the retry with the same key as member and header started another instance: %s", describe(again))
				t.expectProblem("a header that names another key than the member", t.post(path, tok, newKey(), body),
					http.StatusBadRequest, contracts.CodeInvalidParams)
				// MCP: the same key as an argument replays the REST answer.
				cs := t.session(tok)
				res := t.callTool(cs, contracts.ToolPraxecCommand, body)
				t.check(!res.IsError, "praxec.command with idempotencyKey over MCP failed: %s", truncate(toolText(res), 300))
				m, _ := res.StructuredContent.(map[string]any)
				t.check(workflowID(m) == workflowID(t.object(first)), "the MCP retry started %v, REST started %v", workflowID(m), workflowID(t.object(first)))
				// The key reused for another command: the refusal's
				// retry_with_key link, merged into the command as given,
				// starts it, on each surface.
				other := map[string]any{"definitionId": deployPipeline, "runId": randomID("mis015"), "idempotencyKey": key}
				refused := t.post(path, tok, "", other)
				t.expectProblem("the key reused for another start", refused, http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
				var retry map[string]any
				for _, l := range refused.Problem.Links {
					if l.Rel == "retry_with_key" {
						retry = l.Args
					}
				}
				t.check(retry != nil, "the refusal has no retry_with_key link: %v", problemRels(refused))
				followed := maps.Clone(other)
				maps.Copy(followed, retry)
				t.expectStatus("the retry_with_key link followed over REST", t.post(path, tok, "", followed), http.StatusOK)
				other = map[string]any{"definitionId": deployPipeline, "runId": randomID("mis015"), "idempotencyKey": key}
				env := t.toolError("the key reused over MCP", t.callTool(cs, contracts.ToolPraxecCommand, other))
				t.check(env.Error.Code == contracts.CodeIdempotencyKeyReused, "want idempotency-key-reused over MCP, got %s", env.Error.Code)
				followed = maps.Clone(other)
				for _, l := range env.Links {
					if l.Rel == "retry_with_key" {
						maps.Copy(followed, l.Args)
					}
				}
				res = t.callTool(cs, contracts.ToolPraxecCommand, followed)
				t.check(!res.IsError, "the retry_with_key link followed over MCP failed: %s", truncate(toolText(res), 300))
			}},
	}
}
