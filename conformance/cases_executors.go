package conformance

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/praxa/praxa/contracts"
)

// The error shapes of the executor and guard kinds (a script over its
// limits, a parallel executor whose branch failed after another acted,
// argument and schedule guards). They need capabilities that refuse or
// fail on purpose, which examples/executors.yaml declares; against a
// target without them the cases skip, saying so. CI runs them against
// praxa serve --dev --config examples/executors.yaml.
//
// The llm executor's schema failure is not among them: it needs a model
// server the target can reach, which a black-box run cannot provide.

// executorsConfig names the configuration that declares the capabilities
// these cases need.
const executorsConfig = "examples/executors.yaml"

// needCapability skips the case unless the target describes the proxy
// capability id.
func (t *T) needCapability(tok, id string) {
	resp := t.call(tok, contracts.ToolPraxecQuery, map[string]any{"subject": id})
	if resp.Status != http.StatusOK {
		t.Skipf("the target offers no capability %s (%s declares it): describe answered %s", id, executorsConfig, describe(resp))
	}
}

// refundRun needs capability and orders.refund for a token of tenant A
// and starts a run of a EUR 5 refund with it: the token and the run.
func (t *T) refundRun(capability string) (string, map[string]any) {
	tok := t.token(TenantA)
	t.needCapability(tok, capability)
	t.needCapability(tok, "orders.refund")
	return tok, t.startRun(tok, "orders.refund", map[string]any{"currency": "EUR", "amount": 5})
}

// startRun starts a proxy_default run with capability and its arguments,
// which must succeed.
func (t *T) startRun(tok, capability string, args map[string]any) map[string]any {
	input := map[string]any{"capability": capability}
	for k, v := range args {
		input[k] = v
	}
	resp := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"definitionId": "proxy_default", "input": input})
	t.expectStatus("start a run with "+capability, resp, http.StatusOK)
	return t.object(resp)
}

// refusalOnRun fires capability with args on the run m and returns the
// refusal, which must be status and code, a problem document whose links
// include reading the run back; the run must not have moved unless moved
// says it does (by one version).
func (t *T) refusalOnRun(tok string, m map[string]any, capability string, args map[string]any, status int, code contracts.Code, moved bool) *response {
	what := capability + " on a run"
	move := map[string]any{"workflowId": workflowID(m), "expectedVersion": version(m), "transition": capability}
	if args != nil {
		move["arguments"] = args
	}
	resp := t.call(tok, contracts.ToolPraxecCommand, move)
	t.expectProblem(what, resp, status, code)
	t.problemShape(what, resp)
	get := problemLink(resp, "get")
	t.check(get != nil && get.Method == contracts.ToolPraxecQuery && get.Args["workflowId"] == workflowID(m),
		"%s: the refusal has no get link to the run: %v", what, problemRels(resp))
	after := t.call(tok, contracts.ToolPraxecQuery, map[string]any{"workflowId": workflowID(m)})
	t.expectStatus("read the run back", after, http.StatusOK)
	want := version(m)
	if moved {
		want++
	}
	t.check(version(t.object(after)) == want, "%s: the run is at version %v, want %v", what, version(t.object(after)), want)
	return resp
}

// problemLink returns the link of a problem with rel, or nil.
func problemLink(resp *response, rel string) *contracts.Link {
	if resp.Problem == nil {
		return nil
	}
	for i := range resp.Problem.Links {
		if resp.Problem.Links[i].Rel == rel {
			return &resp.Problem.Links[i]
		}
	}
	return nil
}

// describeLinked checks that the refusal resp links the describe of
// subject (praxec.query) and that following the link answers.
func (t *T) describeLinked(what, tok string, resp *response, subject string) {
	d := problemLink(resp, "describe")
	t.check(d != nil && d.Method == contracts.ToolPraxecQuery && d.Args["subject"] == subject,
		"%s: the refusal has no describe link to %s: %v", what, subject, problemRels(resp))
	t.follow(tok, d)
}

// follow calls what link names (nothing when link is nil) and checks that
// it answers 200.
func (t *T) follow(tok string, link *contracts.Link) {
	if link != nil {
		t.expectStatus("follow the "+link.Rel+" link", t.call(tok, link.Method, link.Args), http.StatusOK)
	}
}

// commandRefusedOverMCP calls praxec.command with args over a session of
// tok, checks that the tool error answers code and returns its envelope.
func (t *T) commandRefusedOverMCP(what, tok string, args map[string]any, code contracts.Code) contracts.ErrorEnvelope {
	env := t.toolError(what, t.callTool(t.session(tok), contracts.ToolPraxecCommand, args))
	t.check(env.Error.Code == code, "%s: want %s, got %s", what, code, env.Error.Code)
	return env
}

// envelopeLink returns the link of an MCP error envelope with rel, or nil.
func envelopeLink(env contracts.ErrorEnvelope, rel string) *contracts.Link {
	for i := range env.Links {
		if env.Links[i].Rel == rel {
			return &env.Links[i]
		}
	}
	return nil
}

// manyWords is a list long enough that pairing every word with every
// word exceeds a script's cost budget.
func manyWords() []any {
	words := make([]any, 1500)
	for i := range words {
		words[i] = fmt.Sprintf("w%04d", i)
	}
	return words
}

func executorCases() []Case {
	command := []string{"praxecCommand"}
	return []Case{
		{ID: "EXE-001", Group: GroupExecutors, Proves: "seeds/004 script executor: a script that exceeds a limit fails the move with a clear error and changes nothing",
			Title:      "A script over its cost budget answers 502 upstream-failed with a describe link, over REST and MCP, and starts no run",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				t.needCapability(tok, "words.pairs")
				args := map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "words.pairs", "words": manyWords()}}
				resp := t.call(tok, contracts.ToolPraxecCommand, args)
				t.expectProblem("words.pairs over a long list", resp, http.StatusBadGateway, contracts.CodeUpstreamFailed)
				t.problemShape("words.pairs over a long list", resp)
				t.check(strings.Contains(resp.Problem.Detail, "budget") || strings.Contains(resp.Problem.Detail, "limit"),
					"the refusal does not say which limit: %s", resp.Problem.Detail)
				t.check(!resp.Problem.Retryable, "a script over its limits is not retryable as it is")
				t.describeLinked("words.pairs over a long list", tok, resp, "pairs")
				// MCP: the same refusal as a tool error envelope.
				env := t.commandRefusedOverMCP("words.pairs over MCP", tok, args, contracts.CodeUpstreamFailed)
				t.check(envelopeLink(env, "describe") != nil, "MCP: the envelope has no describe link")
				// Nothing changed: a short list computes, on a run of its own.
				m := t.startRun(tok, "words.pairs", map[string]any{"words": []any{"a", "b"}})
				t.check(version(m) == 2, "a fresh run of words.pairs at version %v, want 2", version(m))
			}},
		{ID: "EXE-002", Group: GroupExecutors, Proves: "seeds/004 parallel executor: a branch failure after another branch may have acted is outcome-unknown, recorded",
			Title:      "A parallel move whose branch cannot reach its connection after another answered is 504 outcome-unknown, recorded on the run, with links to read it back and move on",
			Operations: command, Run: func(t *T) {
				tok, m := t.refundRun("ops.fanout")
				resp := t.refusalOnRun(tok, m, "ops.fanout", nil, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown, true)
				t.check(resp.Problem.Retryable, "outcome-unknown is retryable (the retry answers from the record)")
				for _, branch := range []string{"notify", "ack"} {
					t.check(strings.Contains(resp.Problem.Detail, branch), "the refusal does not name branch %s: %s", branch, resp.Problem.Detail)
				}
				next := problemLink(resp, "ops.fanout")
				t.check(next != nil && fmt.Sprint(next.Args["expectedVersion"]) == fmt.Sprint(version(m)+1),
					"the refusal does not link the next move at the recorded version: %v", problemRels(resp))
				after := t.object(t.call(tok, contracts.ToolPraxecQuery, map[string]any{"workflowId": workflowID(m)}))
				last, _ := after["context"].(map[string]any)["lastRun"].(map[string]any)
				t.check(last != nil && last["outcome"] == "unknown", "the run does not record the unknown outcome: %v", after["context"])
				// The exact retry answers from the record.
				again := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"workflowId": workflowID(m), "expectedVersion": version(m),
					"transition": "ops.fanout"})
				t.expectProblem("the same move again", again, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
				final := t.object(t.call(tok, contracts.ToolPraxecQuery, map[string]any{"workflowId": workflowID(m)}))
				t.check(version(final) == version(m)+1, "the retry moved the run to version %v", version(final))
			}},
		{ID: "EXE-003", Group: GroupExecutors, Proves: "seeds/004 guards: argument guards refuse with what failed and the link that satisfies it",
			Title:      "An argument guard refuses 409 GUARD_REJECTED naming the argument; an equals failure links the call with the value that passes, over REST and MCP",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				t.needCapability(tok, "orders.refund")
				args := map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "orders.refund", "currency": "USD", "amount": 5}}
				resp := t.call(tok, contracts.ToolPraxecCommand, args)
				t.expectProblem("a refund in USD", resp, http.StatusConflict, contracts.CodeGuardRejected)
				t.problemShape("a refund in USD", resp)
				t.check(strings.Contains(resp.Problem.Detail, "currency"), "the refusal does not name the argument: %s", resp.Problem.Detail)
				retry := problemLink(resp, "retry")
				var fixed map[string]any
				if retry != nil {
					fixed, _ = retry.Args["input"].(map[string]any)
				}
				t.check(retry != nil && retry.Method == contracts.ToolPraxecCommand && fixed["currency"] == "EUR" && fixed["capability"] == "orders.refund",
					"the refusal has no retry link with currency EUR: %v", problemRels(resp))
				t.follow(tok, retry)
				env := t.commandRefusedOverMCP("a refund in USD over MCP", tok, args, contracts.CodeGuardRejected)
				t.check(envelopeLink(env, "retry") != nil, "MCP: the envelope has no retry link")
				// On a run: a bound no single value fixes; the link reads the run back.
				m := t.startRun(tok, "orders.refund", map[string]any{"currency": "EUR", "amount": 5})
				over := t.refusalOnRun(tok, m, "orders.refund", map[string]any{"currency": "EUR", "amount": 500}, http.StatusConflict, contracts.CodeGuardRejected, false)
				t.check(strings.Contains(over.Problem.Detail, "amount"), "the refusal does not name the argument: %s", over.Problem.Detail)
			}},
		{ID: "EXE-004", Group: GroupExecutors, Proves: "seeds/004 guards: schedule guards refuse outside their windows and say when they next allow a call",
			Title:      "A schedule guard outside its window refuses 409 GUARD_REJECTED stating the next allowed moment, with a link to read the run back, over REST and MCP",
			Operations: command, Run: func(t *T) {
				tok, m := t.refundRun("ops.maintenance")
				probe := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"workflowId": workflowID(m), "expectedVersion": version(m),
					"transition": "ops.maintenance"})
				if probe.Status == http.StatusOK {
					t.Skipf("the schedule of ops.maintenance happens to allow calls now (Sundays 03:00-03:01 UTC)")
				}
				resp := t.refusalOnRun(tok, m, "ops.maintenance", nil, http.StatusConflict, contracts.CodeGuardRejected, false)
				t.check(strings.Contains(resp.Problem.Detail, "schedule") && strings.Contains(resp.Problem.Detail, "next allows"),
					"the refusal does not say when the schedule next allows a call: %s", resp.Problem.Detail)
				env := t.commandRefusedOverMCP("ops.maintenance over MCP", tok,
					map[string]any{"workflowId": workflowID(m), "expectedVersion": version(m), "transition": "ops.maintenance"}, contracts.CodeGuardRejected)
				get := envelopeLink(env, "get")
				t.check(get != nil && get.Args["workflowId"] == workflowID(m), "MCP: the envelope has no get link to the run")
			}},
		{ID: "EXE-005", Group: GroupExecutors, Proves: "issue 27 item 9: a guard no single value satisfies still links a legal next move",
			Title:      "A start refused by an argument max or a schedule guard (no run kept) links the capability's describe, which answers",
			Operations: command, Run: func(t *T) {
				tok := t.token(TenantA)
				t.needCapability(tok, "orders.refund")
				t.needCapability(tok, "ops.maintenance")
				for capability, input := range map[string]map[string]any{
					"orders.refund":   {"currency": "EUR", "amount": 500},
					"ops.maintenance": {},
				} {
					input["capability"] = capability
					resp := t.call(tok, contracts.ToolPraxecCommand, map[string]any{"definitionId": "proxy_default", "input": input})
					if resp.Status == http.StatusOK {
						continue // the schedule happens to allow it now
					}
					t.expectProblem("a start of "+capability+" its guard refuses", resp, http.StatusConflict, contracts.CodeGuardRejected)
					t.describeLinked(capability, tok, resp, capability)
				}
			}},
	}
}
