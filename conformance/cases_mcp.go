package conformance

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
)

// toolsList is a raw JSON-RPC tools/list request.
func toolsList(id int) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": map[string]any{}}
}

func mcpCases() []Case {
	return []Case{
		{ID: "MCP-001", Group: GroupMCP, Proves: "standards #73",
			Title: "POST /mcp without a token is HTTP 401 with a Bearer challenge naming the resource metadata; nothing is processed",
			Run: func(t *T) {
				a := t.rpc("", nil, toolsList(1))
				t.expectStatus("tools/list without a token", a.resp, http.StatusUnauthorized)
				t.expectChallenge("tools/list without a token", a.resp, "", "")
			}},
		{ID: "MCP-002", Group: GroupMCP, Proves: "standards #78 (Origin validation, DNS rebinding)",
			Title: "A request from a foreign Origin is refused 403; without Origin it is served",
			Run: func(t *T) {
				tok := t.token(TenantA)
				a := t.rpc(tok, http.Header{"Origin": {"https://evil.example"}}, toolsList(1))
				t.expectStatus("Origin: https://evil.example", a.resp, http.StatusForbidden)
				a = t.rpc(tok, nil, toolsList(2))
				t.expectStatus("no Origin", a.resp, http.StatusOK)
			}},
		{ID: "MCP-003", Group: GroupMCP, Proves: "MCP streamable HTTP, stateless (DESIGN.md; standards 2.6 2026-07-28)",
			Title: "tools/list is served statelessly: a bare request with no initialize and no session id answers the tools, in a stable order",
			Run: func(t *T) {
				tok := t.token(TenantA)
				var orders [][]string
				for i := 1; i <= 2; i++ {
					a := t.rpc(tok, nil, toolsList(i))
					t.expectStatus("a bare tools/list", a.resp, http.StatusOK)
					t.check(a.msg != nil && a.msg.Error == nil && a.msg.Result != nil, "no JSON-RPC result: %s", snippet(a.resp.Body))
					var res struct {
						Tools []struct {
							Name string `json:"name"`
						} `json:"tools"`
					}
					_ = json.Unmarshal(a.msg.Result, &res)
					var names []string
					for _, tl := range res.Tools {
						names = append(names, tl.Name)
					}
					t.check(slices.Contains(names, contracts.ToolPraxecQuery) || slices.Contains(names, contracts.ToolGetMission),
						"the bare tools/list lists no contract tool: %s", snippet(a.msg.Result))
					orders = append(orders, names)
				}
				t.check(slices.Equal(orders[0], orders[1]), "two tools/list answers list the tools in different orders")
			}},
		{ID: "MCP-004", Group: GroupMCP, Proves: "standards #75 (the official auth-token-audience scenario)",
			Title: "On /mcp, an expired token, a token for another audience and one signed by an unpublished key are 401 invalid_token",
			Run: func(t *T) {
				for _, f := range []Forgery{ForgeExpired, ForgeWrongAudience, ForgeForeignKey} {
					a := t.rpc(t.forged(f), nil, toolsList(1))
					t.expectStatus("tools/list with a "+string(f)+" token", a.resp, http.StatusUnauthorized)
					t.expectChallenge("tools/list with a "+string(f)+" token", a.resp, "invalid_token", "")
				}
			}},
		{ID: "MCP-005", Group: GroupMCP, Proves: "standards #79",
			Title: "A token in ?access_token= on /mcp is never accepted",
			Run: func(t *T) {
				h := http.Header{"Accept": {"application/json, text/event-stream"}, "MCP-Protocol-Version": {mcpProtocolVersion}}
				resp := t.do(request{method: http.MethodPost, path: mcpPath + "?access_token=" + url.QueryEscape(t.token(TenantA)),
					header: h, body: mustJSON(t, toolsList(1))})
				t.expectStatus("token in the query string", resp, http.StatusBadRequest, http.StatusUnauthorized)
			}},
		{ID: "MCP-006", Group: GroupMCP, Proves: "standards #80 (no JSON-RPC batches since 2025-06-18)",
			Title: "A JSON-RPC batch is rejected, not answered call by call",
			Run: func(t *T) {
				a := t.rpc(t.token(TenantA), nil, []any{toolsList(1), toolsList(2)})
				if a.resp.Status == http.StatusOK {
					t.check(a.msg != nil && a.msg.Error != nil, "the batch was answered: %s", snippet(a.resp.Body))
					return
				}
				t.expectStatus("a batch", a.resp, http.StatusBadRequest)
			}},
		{ID: "MCP-007", Group: GroupMCP, Proves: "standards #83; seeds/003 idempotencyKey required",
			Title:      "A mutating tool called without idempotencyKey is a tool error idempotency-key-missing",
			Operations: []string{"submitIntent"}, Run: func(t *T) {
				cs := t.session(t.token(TenantA))
				env := t.toolError("aura_submit_intent without idempotencyKey",
					t.callTool(cs, contracts.ToolSubmitIntent, map[string]any{"intent": "conformance"}))
				t.check(env.Error.Code == contracts.CodeIdempotencyKeyMissing, "want idempotency-key-missing, got %s", env.Error.Code)
			}},
		{ID: "MCP-008", Group: GroupMCP, Proves: "standards #85",
			Title:      "Ten concurrent tools/call with one idempotencyKey have one effect",
			Operations: []string{"submitIntent"}, Run: func(t *T) {
				tok, key := t.token(TenantA), newKey()
				args := map[string]any{"idempotencyKey": key, "intent": "conformance concurrent " + randomID("x")}
				const n = 10
				results := make([]*mcp.CallToolResult, n)
				var wg sync.WaitGroup
				cs := t.session(tok)
				for i := range n {
					wg.Go(func() {
						res, err := cs.CallTool(t.ctx, &mcp.CallToolParams{Name: contracts.ToolSubmitIntent, Arguments: args})
						if err == nil {
							results[i] = res
						}
					})
				}
				wg.Wait()
				ids := map[any]bool{}
				for i, res := range results {
					t.check(res != nil, "call %d failed at the protocol level", i)
					if res.IsError {
						env := t.toolError("a concurrent call", res)
						t.check(env.Error.Code == contracts.CodeIdempotencyInProgress, "call %d: %s", i, env.Error.Code)
						continue
					}
					m, _ := res.StructuredContent.(map[string]any)
					ids[m["intentId"]] = true
				}
				t.check(len(ids) == 1, "%d distinct intents for one key", len(ids))
			}},
		{ID: "MCP-009", Group: GroupMCP, Proves: "DESIGN.md: structuredContent matches outputSchema, with a text rendering",
			Title:      "A successful tools/call carries structuredContent that matches the output schema and the same JSON as text",
			Operations: []string{"praxecQuery", "submitIntent"}, Run: func(t *T) {
				cs := t.session(t.token(TenantA))
				for name, args := range map[string]map[string]any{
					contracts.ToolPraxecQuery:  {},
					contracts.ToolSubmitIntent: {"idempotencyKey": newKey(), "intent": "conformance structured"},
				} {
					res := t.callTool(cs, name, args)
					t.check(!res.IsError, "%s failed: %s", name, truncate(toolText(res), 300))
					t.check(res.StructuredContent != nil, "%s: no structuredContent", name)
					if err := contracts.ValidateOutput(name, res.StructuredContent); err != nil {
						t.Fatalf("%s: structuredContent does not match the output schema: %v %s", name, err, fieldErrors(err))
					}
					b, _ := json.Marshal(res.StructuredContent)
					t.check(jsonEqual(b, []byte(toolText(res))), "%s: the text content is not the structuredContent's JSON", name)
				}
			}},
		{ID: "MCP-010", Group: GroupMCP, Proves: "standards #81",
			Title: "An unsupported MCP-Protocol-Version header is refused 400",
			Run: func(t *T) {
				a := t.rpc(t.token(TenantA), http.Header{"Mcp-Protocol-Version": {"1999-01-01"}}, toolsList(1))
				t.expectStatus("MCP-Protocol-Version: 1999-01-01", a.resp, http.StatusBadRequest)
			}},
		{ID: "MCP-011", Group: GroupMCP, Proves: "standards #67 over MCP; seeds/003 bounded tool errors",
			Title:      "Tool arguments nested 40 levels deep are a bounded tool error, and the session keeps working",
			Operations: []string{"createMission"}, Run: func(t *T) {
				cs := t.session(t.token(TenantA))
				var nested any = 1
				for range 40 {
					nested = map[string]any{"a": nested}
				}
				env := t.toolError("aura_create_mission with input nested 40 deep", t.callTool(cs, contracts.ToolCreateMission,
					map[string]any{"idempotencyKey": newKey(), "goal": "conformance", "definitionId": deployPipeline, "input": nested}))
				t.check(env.Error.Code == contracts.CodeRequestLimits || env.Error.Code == contracts.CodeInvalidParams,
					"want request-limits or INVALID_PARAMS, got %s", env.Error.Code)
				res := t.callTool(cs, contracts.ToolPraxecQuery, map[string]any{})
				t.check(!res.IsError, "the session no longer works after the refusal: %s", truncate(toolText(res), 300))
			}},
		{ID: "MCP-012", Group: GroupMCP, Proves: "standards #66 over MCP; DESIGN.md Limits and operations (one body limit, 1 MiB, for /v8 and /mcp)",
			Title:      "A 2 MiB body on /mcp is refused 413 with a JSON-RPC error and a null id, with a Content-Length and chunked, and nothing runs",
			Operations: []string{"submitIntent"}, Run: func(t *T) {
				tok, key := t.token(TenantA), newKey()
				body := rawCall(1, contracts.ToolSubmitIntent, `{"idempotencyKey":"`+key+`","intent":"`+strings.Repeat("x", 2<<20)+`"}`)
				t.expectRPCError("a 2 MiB tools/call", t.rpcSend(tok, nil, body, false), http.StatusRequestEntityTooLarge, contracts.RPCInvalidRequest)
				t.expectRPCError("a 2 MiB chunked tools/call", t.rpcSend(tok, nil, body, true), http.StatusRequestEntityTooLarge, contracts.RPCInvalidRequest)
				t.expectNothingRan("the 2 MiB tools/call", tok, key)
			}},
		{ID: "MCP-013", Group: GroupMCP, Proves: "standards #59 over MCP; JSON-RPC 2.0 invalid request",
			Title:      "A JSON-RPC message naming a member twice (its method, its id, in params._meta, in the arguments) is refused 400, error -32600 with a null id, and nothing runs",
			Operations: []string{"submitIntent"}, Run: func(t *T) {
				tok, key := t.token(TenantA), newKey()
				for what, body := range map[string]string{
					"method twice":          `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{}}`,
					"id twice":              `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{}}`,
					"a name twice in _meta": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"a":1,"a":2}}}`,
					"a name twice in the arguments": string(rawCall(1, contracts.ToolSubmitIntent,
						`{"idempotencyKey":"`+key+`","intent":"a","intent":"b"}`)),
				} {
					t.expectRPCError(what, t.rpc(tok, nil, body), http.StatusBadRequest, contracts.RPCInvalidRequest)
				}
				t.expectNothingRan("the tools/call naming intent twice", tok, key)
			}},
		{ID: "MCP-014", Group: GroupMCP, Proves: "standards #62 over MCP; RFC 8259 section 8.1; JSON-RPC 2.0 parse error",
			Title:      "Invalid UTF-8 or an unpaired surrogate escape anywhere in a JSON-RPC message (params._meta, the arguments) is refused 400, error -32700 with a null id, and nothing runs",
			Operations: []string{"submitIntent"}, Run: func(t *T) {
				tok, key := t.token(TenantA), newKey()
				for what, body := range map[string]string{
					"invalid UTF-8 in _meta":         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"x\":\"\xff\"}}}",
					"an unpaired surrogate in _meta": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"x":"\ud800"}}}`,
					"invalid UTF-8 in the arguments": string(rawCall(1, contracts.ToolSubmitIntent,
						"{\"idempotencyKey\":\""+key+"\",\"intent\":\"caf\xe9\"}")),
				} {
					t.expectRPCError(what, t.rpc(tok, nil, body), http.StatusBadRequest, contracts.RPCParseError)
				}
				t.expectNothingRan("the tools/call with invalid UTF-8", tok, key)
			}},
		{ID: "MCP-015", Group: GroupMCP, Proves: "DESIGN.md Limits and operations; docs/decisions.md (a JSON-RPC id is at most 256 bytes)",
			Title: "A request id of 100,000 bytes is refused 400, error -32600 with a null id, and is never echoed; an id of 256 bytes is served and echoed",
			Run: func(t *T) {
				tok := t.token(TenantA)
				long := strings.Repeat("i", 100_000)
				a := t.rpc(tok, nil, map[string]any{"jsonrpc": "2.0", "id": long, "method": "tools/list", "params": map[string]any{}})
				t.expectRPCError("an id of 100,000 bytes", a, http.StatusBadRequest, contracts.RPCInvalidRequest)
				t.check(!strings.Contains(string(a.resp.Body), long[:1000]), "the refusal echoes the id")
				id := strings.Repeat("i", 256)
				a = t.rpc(tok, nil, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": map[string]any{}})
				t.expectStatus("an id of 256 bytes", a.resp, http.StatusOK)
				t.check(a.msg != nil && string(a.msg.ID) == `"`+id+`"`, "the answer to an id of 256 bytes does not name it: %s", snippet(a.resp.Body))
			}},
	}
}
