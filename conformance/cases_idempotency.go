package conformance

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/praxa/praxa/contracts"
)

func idempotencyCases() []Case {
	intents := []string{"submitIntent"}
	return []Case{
		{ID: "IDEM-001", Group: GroupIdempotency, Proves: "standards #35; seeds/003 idempotency required",
			Title:      "A required mutation without Idempotency-Key is refused 400 idempotency-key-missing",
			Operations: []string{"submitIntent", "createMission"}, Run: func(t *T) {
				tok := t.token(TenantA)
				t.expectProblem("aura_submit_intent without a key", t.post(intentsPath, tok, "", intentBody()),
					http.StatusBadRequest, contracts.CodeIdempotencyKeyMissing)
				t.expectProblem("aura_create_mission without a key",
					t.post(mustTool(contracts.ToolCreateMission).Path, tok, "", map[string]any{"goal": "conformance", "definitionId": deployPipeline}),
					http.StatusBadRequest, contracts.CodeIdempotencyKeyMissing)
			}},
		{ID: "IDEM-002", Group: GroupIdempotency, Proves: "standards #36; seeds/003 key pattern ^[A-Za-z0-9][A-Za-z0-9._:-]{15,127}$",
			Title:      "Keys outside the pattern are refused 400 idempotency-key-invalid; keys of 16 and 128 characters are accepted",
			Operations: intents, Run: func(t *T) {
				tok := t.token(TenantA)
				for name, key := range map[string]string{
					"15 characters": strings.Repeat("k", 15), "129 characters": strings.Repeat("k", 129),
					"leading -": "-" + strings.Repeat("k", 20), "a slash": "conformance/key-0001", "a plus": "conformance+key-0001",
					"non-ASCII": "conformance-kéy-0001", "an empty string": `""`,
				} {
					t.expectProblem("a key with "+name, t.post(intentsPath, tok, key, intentBody()),
						http.StatusBadRequest, contracts.CodeIdempotencyKeyInvalid)
				}
				for _, n := range []int{16, 128} {
					t.submitIntent(tok, keyOfLength(n), intentBody())
				}
				t.submitIntent(tok, "Conf.key:with-all_chars."+newKey(), intentBody())
			}},
		{ID: "IDEM-003", Group: GroupIdempotency, Proves: "standards #37 (RFC 8941 sf-string and bare key)",
			Title:      "A key sent as a quoted sf-string and bare is the same key",
			Operations: intents, Run: func(t *T) {
				tok, key, body := t.token(TenantA), newKey(), intentBody()
				_, first := t.submitIntent(tok, `"`+key+`"`, body)
				resp, again := t.submitIntent(tok, key, body)
				t.check(resp.Replayed() && again["intentId"] == first["intentId"],
					"the bare key did not replay the quoted one's answer (replayed=%t, %v vs %v)", resp.Replayed(), again["intentId"], first["intentId"])
			}},
		{ID: "IDEM-004", Group: GroupIdempotency, Proves: "standards #38",
			Title:      "Two Idempotency-Key field lines, or a list in one, are refused 400",
			Operations: intents, Run: func(t *T) {
				tok := t.token(TenantA)
				for what, vals := range map[string][]string{
					"two field lines": {newKey(), newKey()},
					"a list":          {`"` + newKey() + `", "` + newKey() + `"`},
				} {
					resp := t.do(request{method: http.MethodPost, path: intentsPath, token: tok,
						header: http.Header{"Idempotency-Key": vals}, body: mustJSON(t, intentBody())})
					t.expectProblem("Idempotency-Key as "+what, resp, http.StatusBadRequest, contracts.CodeIdempotencyKeyInvalid)
				}
			}},
		{ID: "IDEM-005", Group: GroupIdempotency, Proves: "standards #39, #40",
			Title:      "A retry with the same key and body replays the original answer byte for byte with Idempotent-Replayed: true",
			Operations: intents, Run: func(t *T) {
				tok, key, body := t.token(TenantA), newKey(), intentBody()
				first, _ := t.submitIntent(tok, key, body)
				t.check(!first.Replayed(), "the first request was answered as a replay")
				for i := range 2 {
					again := t.post(intentsPath, tok, key, body)
					t.check(again.Status == first.Status, "retry %d: status %d, the original was %d", i+1, again.Status, first.Status)
					t.check(again.Replayed(), "retry %d: no Idempotent-Replayed: true", i+1)
					t.check(bytes.Equal(bytes.TrimSpace(again.Body), bytes.TrimSpace(first.Body)),
						"retry %d: the body differs from the original:\n%s\nvs\n%s", i+1, snippet(again.Body), snippet(first.Body))
				}
			}},
		{ID: "IDEM-006", Group: GroupIdempotency, Proves: "standards #41 (canonical fingerprint)",
			Title:      "A retry whose body differs only in member order and whitespace replays",
			Operations: intents, Run: func(t *T) {
				tok, key := t.token(TenantA), newKey()
				text := "conformance canonical " + randomID("x")
				_, first := t.submitIntent(tok, key, fmt.Sprintf(`{"intent":%q,"tags":["a","b"]}`, text))
				resp, again := t.submitIntent(tok, key, fmt.Sprintf("{\n  \"tags\" : [ \"a\", \"b\" ],\n  \"intent\" : %q\n}", text))
				t.check(resp.Replayed() && again["intentId"] == first["intentId"], "the reordered body was executed again")
			}},
		{ID: "IDEM-007", Group: GroupIdempotency, Proves: "standards #42",
			Title:      "The same key with a different body is refused 422 idempotency-key-reused",
			Operations: intents, Run: func(t *T) {
				tok, key := t.token(TenantA), newKey()
				t.submitIntent(tok, key, intentBody())
				t.expectProblem("the key reused with another body", t.post(intentsPath, tok, key, intentBody()),
					http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
			}},
		{ID: "IDEM-008", Group: GroupIdempotency, Proves: "standards #43",
			Title:      "The same key on another operation is refused 422 idempotency-key-reused",
			Operations: []string{"submitIntent", "createMission"}, Run: func(t *T) {
				tok, key := t.token(TenantA), newKey()
				t.submitIntent(tok, key, intentBody())
				resp := t.post(mustTool(contracts.ToolCreateMission).Path, tok, key, map[string]any{"goal": "conformance", "definitionId": deployPipeline})
				t.expectProblem("an intent's key reused on aura_create_mission", resp, http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
			}},
		{ID: "IDEM-009", Group: GroupIdempotency, Proves: "standards #44",
			Title:      "Two keys with identical bodies are two mutations (no body-based deduplication)",
			Operations: intents, Run: func(t *T) {
				tok, body := t.token(TenantA), intentBody()
				r1, a := t.submitIntent(tok, newKey(), body)
				r2, b := t.submitIntent(tok, newKey(), body)
				t.check(!r1.Replayed() && !r2.Replayed() && a["intentId"] != b["intentId"], "the second key was answered with the first key's intent")
			}},
		{ID: "IDEM-010", Group: GroupIdempotency, Proves: "standards #45",
			Title:      "20 concurrent identical requests with one key have one effect: one execution, the rest replays or 409 in progress",
			Operations: intents, Run: func(t *T) {
				tok, key, body := t.token(TenantA), newKey(), mustJSON(t, intentBody())
				const n = 20
				answers := make([]*response, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						defer func() { recover() }() // a transport failure leaves answers[i] nil
						answers[i] = t.post(intentsPath, tok, key, body)
					})
				}
				wg.Wait()
				ids, executed := map[any]bool{}, 0
				for i, a := range answers {
					switch {
					case a == nil:
						t.Fatalf("request %d got no answer", i)
					case a.Status == http.StatusOK || a.Status == http.StatusCreated:
						ids[t.object(a)["intentId"]] = true
						if !a.Replayed() {
							executed++
						}
					case a.Status == http.StatusConflict && a.Problem != nil && a.Problem.Code == contracts.CodeIdempotencyInProgress:
						t.check(a.Header.Get("Retry-After") != "", "request %d: 409 in progress without Retry-After", i)
					default:
						t.Fatalf("request %d: %s", i, describe(a))
					}
				}
				t.check(len(ids) == 1 && executed == 1, "%d distinct intents and %d executions (not replays) for one key", len(ids), executed)
			}},
		{ID: "IDEM-011", Group: GroupIdempotency, Proves: "standards #47",
			Title:      "A request refused before execution (schema) does not consume its key",
			Operations: intents, Run: func(t *T) {
				tok, key := t.token(TenantA), newKey()
				t.expectProblem("an invalid body", t.post(intentsPath, tok, key, map[string]any{"intent": ""}),
					http.StatusBadRequest, contracts.CodeInvalidParams)
				resp, _ := t.submitIntent(tok, key, intentBody())
				t.check(!resp.Replayed(), "the valid request was answered as a replay of the refused one")
			}},
		{ID: "IDEM-012", Group: GroupIdempotency, Proves: "standards #48",
			Title:      "A request refused by authentication neither consumes nor reveals its key",
			Operations: intents, Run: func(t *T) {
				tok, key, body := t.token(TenantA), newKey(), intentBody()
				t.expectStatus("without credentials", t.post(intentsPath, "", key, body), http.StatusUnauthorized)
				resp, _ := t.submitIntent(tok, key, body)
				t.check(!resp.Replayed(), "the authenticated request was answered as a replay")
			}},
		{ID: "IDEM-013", Group: GroupIdempotency, Proves: "standards #55; seeds/003 safe-read",
			Title:      "Safe reads need no Idempotency-Key and ignore one, even malformed (capabilities/search, memory/query, GET coverage)",
			Operations: []string{"searchCapabilities", "queryMemory", "getCoverage"}, Run: func(t *T) {
				tok, implemented := t.token(TenantA), 0
				resp := t.do(request{method: http.MethodGet, path: mustTool(contracts.ToolGetCoverage).Path, token: tok,
					header: http.Header{"Idempotency-Key": {"not a valid key"}}})
				t.expectStatus("GET /v8/coverage with a malformed Idempotency-Key", resp, http.StatusOK)
				for _, name := range []string{contracts.ToolSearchCapabilities, contracts.ToolQueryMemory} {
					tool := mustTool(name)
					resp := t.post(tool.Path, tok, "", sampleArgs(tool))
					if resp.Status < 300 {
						withKey := t.do(request{method: http.MethodPost, path: tool.Path, token: tok,
							header: http.Header{"Idempotency-Key": {"not a valid key"}}, body: mustJSON(t, sampleArgs(tool))})
						t.expectStatus(name+" with a malformed Idempotency-Key", withKey, resp.Status)
					}
					if p := resp.Problem; p != nil {
						t.check(p.Code != contracts.CodeIdempotencyKeyMissing && p.Code != contracts.CodeIdempotencyKeyInvalid,
							"%s without a key: %s", name, describe(resp))
						if p.Code == contracts.CodeNotImplemented {
							continue
						}
					}
					t.check(resp.Status < 500, "%s without a key: %s", name, describe(resp))
					implemented++
				}
				if implemented == 0 {
					t.Skipf("neither aura_search_capabilities nor aura_query_memory is implemented by the target")
				}
			}},
		{ID: "IDEM-014", Group: GroupIdempotency, Proves: "standards #49",
			Title:      "A business refusal is replayed: cancelling a completed mission twice with one key gives the same 409, replayed",
			Operations: []string{"cancelMission", "signalMission"}, Run: func(t *T) {
				tok := t.token(TenantA)
				_, m := t.createMission(tok)
				abort := t.call(tok, contracts.ToolSignalMission, map[string]any{"runId": runID(m), "signal": "abort",
					"expectedVersion": version(m), "idempotencyKey": newKey()})
				t.expectStatus("abort the mission", abort, http.StatusOK)
				key := newKey()
				args := map[string]any{"runId": runID(m), "idempotencyKey": key}
				first := t.call(tok, contracts.ToolCancelMission, args)
				t.expectProblem("cancel a completed mission", first, http.StatusConflict, contracts.CodeMissionStateConflict)
				again := t.call(tok, contracts.ToolCancelMission, args)
				t.expectProblem("the same cancel again", again, http.StatusConflict, contracts.CodeMissionStateConflict)
				t.check(again.Replayed(), "the repeated refusal was not replayed (no Idempotent-Replayed: true)")
			}},
		{ID: "IDEM-015", Group: GroupIdempotency, Proves: "standards #84 (REST and MCP share one idempotency store)",
			Title:      "A mutation sent over REST and retried over MCP with the same key replays; other arguments are refused as a reuse",
			Operations: intents, Run: func(t *T) {
				tok, key, body := t.token(TenantA), newKey(), intentBody()
				_, rest := t.submitIntent(tok, key, body)
				cs := t.session(tok)
				args := map[string]any{"idempotencyKey": key, "intent": body["intent"]}
				res := t.callTool(cs, contracts.ToolSubmitIntent, args)
				t.check(!res.IsError, "the MCP retry failed: %s", truncate(toolText(res), 300))
				m, _ := res.StructuredContent.(map[string]any)
				t.check(m["intentId"] == rest["intentId"], "the MCP retry made intent %v, REST made %v", m["intentId"], rest["intentId"])
				args["intent"] = "something else " + randomID("x")
				env := t.toolError("the key reused over MCP with other arguments", t.callTool(cs, contracts.ToolSubmitIntent, args))
				t.check(env.Error.Code == contracts.CodeIdempotencyKeyReused, "want idempotency-key-reused, got %s", env.Error.Code)
			}},
		{ID: "IDEM-016", Group: GroupIdempotency, Proves: "standards #53",
			Title:      "A signal sent twice with one key fires once: the retry replays and the mission moved one step",
			Operations: []string{"signalMission", "getMission"}, Run: func(t *T) {
				tok := t.token(TenantA)
				_, m := t.createMission(tok)
				args := map[string]any{"runId": runID(m), "signal": "run_lint", "expectedVersion": version(m), "idempotencyKey": newKey()}
				first := t.call(tok, contracts.ToolSignalMission, args)
				t.expectStatus("signal run_lint", first, http.StatusOK)
				again := t.call(tok, contracts.ToolSignalMission, args)
				t.expectStatus("the same signal again", again, first.Status)
				t.check(again.Replayed(), "the repeated signal was not replayed")
				read := t.call(tok, contracts.ToolGetMission, map[string]any{"runId": runID(m)})
				t.expectStatus("read the mission back", read, http.StatusOK)
				rm := t.object(read)
				t.check(version(rm) == version(m)+1 && state(rm) == "test", "after two identical signals the mission is %s@%v, want test@%v",
					state(rm), version(rm), version(m)+1)
			}},
	}
}
