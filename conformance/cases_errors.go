package conformance

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
)

// maxQuotaProbe is how many missions ERR-007 opens for the quota tenant
// before it concludes that the target gives it no quota to meet.
const maxQuotaProbe = 20

func errorCases() []Case {
	return []Case{
		{ID: "ERR-001", Group: GroupErrors, Proves: "standards #57, section 0 (RFC 9457 problem details)",
			Title:      "Every refusal is application/problem+json with Cache-Control: no-store and the members type, title, status, detail, instance, code, requestId, retryable",
			Operations: []string{"getMission", "submitIntent"}, Run: func(t *T) {
				tok := t.token(TenantA)
				key := newKey()
				t.submitIntent(tok, key, intentBody())
				for what, resp := range map[string]*response{
					"401":                t.get(missionPath(randomID("run")), ""),
					"403":                t.post(intentsPath, t.tokenWithout(contracts.ScopeMissionsWrite), newKey(), intentBody()),
					"404":                t.get(missionPath(randomID("run")), tok),
					"405":                t.do(request{method: http.MethodDelete, path: missionPath(randomID("run")), token: tok}),
					"400 malformed JSON": t.post(intentsPath, tok, newKey(), `{"intent":`),
					"400 invalid params": t.post(intentsPath, tok, newKey(), map[string]any{"intent": 1}),
					"415":                t.do(request{method: http.MethodPost, path: intentsPath, token: tok, header: http.Header{"Content-Type": {"text/plain"}}, body: []byte("x")}),
					"422":                t.post(intentsPath, tok, key, intentBody()),
				} {
					t.problemShape(what, resp)
				}
			}},
		{ID: "ERR-002", Group: GroupErrors, Proves: "standards #57 (no stack traces, SQL or internal paths in errors)",
			Title:      "Refusals of hostile input reveal no stack trace, SQL, source path or internal detail",
			Operations: []string{"submitIntent", "getMission"}, Run: func(t *T) {
				tok := t.token(TenantA)
				for what, resp := range map[string]*response{
					"malformed JSON":     t.post(intentsPath, tok, newKey(), `{"intent": "x", `),
					"invalid UTF-8":      t.post(intentsPath, tok, newKey(), []byte("{\"intent\": \"\xff\"}")),
					"deep nesting":       t.post(intentsPath, tok, newKey(), strings.Repeat("[", 5000)),
					"a quote in the id":  t.get(missionPath(`x'; DROP TABLE missions; --`), tok),
					"a NUL in the id":    t.get(strings.Replace(mustTool(contracts.ToolGetMission).Path, "{runId}", "%00", 1), tok),
					"a huge number":      t.post(intentsPath, tok, newKey(), `{"intent": "x", "tags": [1e999999]}`),
					"a not-a-JWT bearer": t.get(missionPath(randomID("run")), "eyJhbGciOiJSUzI1NiJ9.e30.AAAA"),
				} {
					body := strings.ToLower(string(resp.Body))
					t.check(resp.Status < 500, "%s: %s", what, describe(resp))
					for _, leak := range []string{"goroutine ", "panic", "runtime error", ".go:", "sqlite", "sql:", "syntax error at", "/root/", "/home/", "stack trace"} {
						t.check(!strings.Contains(body, leak), "%s: the answer reveals %q: %s", what, leak, snippet(resp.Body))
					}
				}
			}},
		{ID: "ERR-003", Group: GroupErrors, Proves: "seeds/000 error shape; DESIGN.md: MCP errors carry the envelope and no structuredContent",
			Title:      "An MCP tool refusal is a result with isError, the {error:{code,message,hint}, links} envelope as text and no structuredContent",
			Operations: []string{"getMission"}, Run: func(t *T) {
				cs := t.session(t.token(TenantA))
				env := t.toolError("aura_get_mission on an unknown runId", t.callTool(cs, contracts.ToolGetMission, map[string]any{"runId": randomID("run")}))
				t.check(env.Error.Code == contracts.CodeNotFound, "want not-found, got %s", env.Error.Code)
			}},
		{ID: "ERR-004", Group: GroupErrors, Proves: "seeds/003 Map tool failures correctly: invalid arguments are a bounded, repairable tool error",
			Title:      "Invalid arguments over MCP are a tool error INVALID_PARAMS that names the field, not a protocol error",
			Operations: []string{"submitIntent"}, Run: func(t *T) {
				cs := t.session(t.token(TenantA))
				res := t.callTool(cs, contracts.ToolSubmitIntent, map[string]any{"idempotencyKey": newKey(), "intent": 5})
				env := t.toolError("aura_submit_intent with intent a number", res)
				t.check(env.Error.Code == contracts.CodeInvalidParams, "want INVALID_PARAMS, got %s", env.Error.Code)
				var raw struct {
					Errors []contracts.FieldError `json:"errors"`
				}
				_ = json.Unmarshal([]byte(toolText(res)), &raw)
				found := false
				for _, e := range raw.Errors {
					found = found || e.Pointer == "/intent"
				}
				t.check(found, "the tool error does not point at /intent, so the model cannot repair it: %s", truncate(toolText(res), 300))
			}},
		{ID: "ERR-005", Group: GroupErrors, Proves: "standards #86 (unknown tool is a protocol error)",
			Title: "Calling a tool that does not exist is a JSON-RPC error, not a tool result",
			Run: func(t *T) {
				cs := t.session(t.token(TenantA))
				res, err := cs.CallTool(t.ctx, &mcp.CallToolParams{Name: "conformance_no_such_tool", Arguments: map[string]any{}})
				t.check(err != nil, "an unknown tool answered a tool result (isError=%t) instead of a JSON-RPC error", res != nil && res.IsError)
			}},
		{ID: "ERR-006", Group: GroupErrors, Proves: "seeds/003 Map tool failures correctly: stop on wrong scope; standards #76, #94",
			Title:      "An under-scoped MCP tools/call is refused: HTTP 403 insufficient_scope, or a tool error insufficient-scope, never a success",
			Operations: []string{"submitIntent"}, Run: func(t *T) {
				tok := t.tokenWithout(contracts.ScopeMissionsWrite)
				a := t.rpc(tok, nil, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
					"params": map[string]any{"name": contracts.ToolSubmitIntent, "arguments": map[string]any{"idempotencyKey": newKey(), "intent": "conformance"}}})
				if a.resp.Status == http.StatusForbidden {
					t.expectChallenge("tools/call without missions:write", a.resp, "insufficient_scope", string(contracts.ScopeMissionsWrite))
					return
				}
				t.expectStatus("tools/call without missions:write", a.resp, http.StatusOK)
				t.check(a.msg != nil && a.msg.Result != nil, "no JSON-RPC result: %s", snippet(a.resp.Body))
				var res mcp.CallToolResult
				if err := json.Unmarshal(a.msg.Result, &res); err != nil {
					t.Fatalf("the result does not decode: %v", err)
				}
				env := t.toolError("tools/call without missions:write", &res)
				t.check(env.Error.Code == contracts.CodeInsufficientScope, "want insufficient-scope, got %s", env.Error.Code)
			}},
		{ID: "ERR-007", Group: GroupErrors, Proves: "tenant quotas (server.quotas): 429 quota-exceeded, nothing written",
			Title:      "At a tenant's open-missions quota a creation answers 429 quota-exceeded (problem+json, errors naming the quota, links to what is open), writes nothing and consumes no idempotency key",
			Operations: []string{"createMission"}, Run: func(t *T) {
				t.needDeploy()
				tok := t.token(TenantQuota)
				path := mustTool(contracts.ToolCreateMission).Path
				body := map[string]any{"goal": "conformance: fill the quota", "definitionId": deployPipeline}
				var refused *response
				var key string
				for range maxQuotaProbe {
					key = newKey()
					resp := t.post(path, tok, key, body)
					if resp.Status == http.StatusTooManyRequests && resp.Problem != nil && resp.Problem.Code == contracts.CodeQuotaExceeded {
						refused = resp
						break
					}
					t.expectStatus("aura_create_mission below the quota", resp, http.StatusCreated, http.StatusOK)
				}
				if refused == nil {
					t.Skipf("the target let tenant %q open %d missions without a quota-exceeded: give it a small open-missions quota "+
						"(praxa: server.quotas.tenants.%s.openMissions: 2) to run this case", TenantQuota, maxQuotaProbe, DefaultTenantQuota)
				}
				t.problemShape("quota-exceeded", refused)
				p := refused.Problem
				t.check(len(p.Errors) == 1 && p.Errors[0].Keyword == "quota" && p.Errors[0].Detail == "openMissions",
					"quota-exceeded: errors %+v, want one naming the quota openMissions", p.Errors)
				t.check(len(p.Links) > 0, "quota-exceeded: no link to what the tenant holds open")
				t.check(p.Retryable, "quota-exceeded: not retryable")
				// Nothing was stored under the key: the same request
				// with it is refused again, not replayed.
				again := t.post(path, tok, key, body)
				t.expectProblem("the refused request sent again with its key", again, http.StatusTooManyRequests, contracts.CodeQuotaExceeded)
			}},
		{ID: "ERR-008", Group: GroupErrors, Proves: "seeds/000 every answer carries links a model copies; issue 27 item 9: refusals a person or another token lifts",
			Title:      "insufficient-scope, compartment-forbidden and self-approval-forbidden each link a legal next move, which answers when followed",
			Operations: []string{"praxecCommand", "queryMemory"}, Run: func(t *T) {
				// insufficient-scope: where to ask for a token with the scope.
				resp := t.call(t.tokenWithout(contracts.ScopeMissionsWrite), contracts.ToolPraxecCommand, map[string]any{"definitionId": deployPipeline})
				t.expectProblem("praxec.command without missions:write", resp, http.StatusForbidden, contracts.CodeInsufficientScope)
				t.followOperatorLink("insufficient-scope", resp, "authorization")
				// compartment-forbidden (the suite's tokens allow none).
				resp = t.call(t.token(TenantA), contracts.ToolQueryMemory, map[string]any{"compartment": "conformance-private", "purpose": "conformance-review", "query": "incident"})
				t.expectProblem("aura_query_memory on an ungranted compartment", resp, http.StatusForbidden, contracts.CodeCompartmentForbidden)
				t.followOperatorLink("compartment-forbidden", resp, "authorization")
				// self-approval-forbidden: the agent that asked cannot grant.
				tok := t.token(TenantA)
				start := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"definitionId": "release_approval"})
				if start.Status != http.StatusOK {
					t.Skipf("the target has no workflow release_approval (examples/praxec.yaml declares it): %s", describe(start))
				}
				m := t.object(start)
				asked := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"workflowId": workflowID(m), "expectedVersion": version(m),
					"transition": "request_release", "arguments": map[string]any{"version": "1.0.0"}})
				t.expectStatus("request_release", asked, http.StatusOK)
				m = t.object(asked)
				asked = t.call(tok, contracts.ToolPraxecCommand, map[string]any{"workflowId": workflowID(m), "expectedVersion": version(m),
					"transition": "approve_release"})
				t.expectStatus("approve_release (queues an approval)", asked, http.StatusOK)
				approval, _ := t.object(asked)["approval"].(map[string]any)
				id, _ := approval["id"].(string)
				t.check(id != "", "approve_release queued no approval: %s", snippet(asked.Body))
				self := t.post("/v8/approvals/"+id+"/approve", tok, "", map[string]any{})
				t.expectProblem("the requester approving its own request", self, http.StatusConflict, contracts.CodeSelfApproval)
				get := problemLink(self, "get")
				t.check(get != nil && get.Method == contracts.ToolPraxecQuery, "self-approval-forbidden has no get link: %v", problemRels(self))
				t.follow(tok, get)
				t.check(problemLink(self, "reject") != nil, "self-approval-forbidden has no reject link: %v", problemRels(self))
			}},
	}
}

// followOperatorLink checks that the refusal resp links rel, a "METHOD
// PATH" move, and that a GET of it answers 200.
func (t *T) followOperatorLink(what string, resp *response, rel string) {
	l := problemLink(resp, rel)
	if l == nil {
		t.Fatalf("%s: no %s link among %v", what, rel, problemRels(resp))
	}
	method, path, ok := strings.Cut(l.Method, " ")
	t.check(ok && method == http.MethodGet && strings.HasPrefix(path, "/"), "%s: the %s link's method is %q, want GET /PATH", what, rel, l.Method)
	if ok && method == http.MethodGet {
		t.expectStatus(what+": follow the "+rel+" link", t.get(path, ""), http.StatusOK)
	}
}

// problemShape checks the RFC 9457 members and headers of an error answer.
func (t *T) problemShape(what string, resp *response) {
	t.check(resp.Status >= 400, "%s: want an error, got %s", what, describe(resp))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	t.check(mt == "application/problem+json", "%s: Content-Type %q, want application/problem+json", what, resp.Header.Get("Content-Type"))
	t.check(strings.Contains(strings.ToLower(resp.Header.Get("Cache-Control")), "no-store"),
		"%s: Cache-Control %q, want no-store", what, resp.Header.Get("Cache-Control"))
	var m map[string]any
	if err := json.Unmarshal(resp.Body, &m); err != nil {
		t.Fatalf("%s: the problem is not a JSON object: %s", what, snippet(resp.Body))
	}
	var missing []string
	for _, member := range []string{"type", "title", "status", "detail", "instance", "code", "requestId", "retryable"} {
		if _, ok := m[member]; !ok {
			missing = append(missing, member)
		}
	}
	t.check(len(missing) == 0, "%s: the problem lacks %q: %s", what, missing, snippet(resp.Body))
	status, _ := m["status"].(float64)
	t.check(int(status) == resp.Status, "%s: status member %v, HTTP status %d", what, m["status"], resp.Status)
	typ, _ := m["type"].(string)
	u, err := url.Parse(typ)
	t.check(err == nil && (u.IsAbs() || typ == "about:blank"), "%s: type %q is not an absolute URI", what, typ)
	title, _ := m["title"].(string)
	code, _ := m["code"].(string)
	t.check(title != "" && code != "", "%s: empty title or code: %s", what, snippet(resp.Body))
	_, isBool := m["retryable"].(bool)
	t.check(isBool, "%s: retryable is %s, want a boolean", what, fmt.Sprint(m["retryable"]))
}
