package conformance

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/restclient"
)

// deployPipeline is the seeds/000 workflow the mission cases drive: lint,
// test, build, deploy, with abort from every non-terminal state.
const deployPipeline = "deploy_pipeline"

// intentsPath is aura_submit_intent's route, the mutation most cases use:
// it needs no configured workflow.
var intentsPath = mustTool(contracts.ToolSubmitIntent).Path

func mustTool(name string) contracts.Tool {
	t, ok := contracts.Lookup(name)
	if !ok {
		panic("conformance: no tool " + name)
	}
	return t
}

// intentBody is a fresh, valid aura_submit_intent body.
func intentBody() map[string]any {
	return map[string]any{"intent": "conformance check " + randomID("intent")}
}

// submitIntent records an intent for tok with key and checks it succeeded.
func (t *T) submitIntent(tok, key string, body any) (*response, map[string]any) {
	resp := t.post(intentsPath, tok, key, body)
	t.expectStatus("aura_submit_intent", resp, http.StatusOK, http.StatusCreated)
	m := t.object(resp)
	if id, _ := m["intentId"].(string); id == "" {
		t.Fatalf("aura_submit_intent answered without an intentId: %s", snippet(resp.Body))
	}
	return resp, m
}

// deployAvailable reports whether the target has the seeds' deploy
// pipeline, probed once per run by starting it for tenant A.
func (t *T) deployAvailable() bool {
	t.r.deployOnce.Do(func() {
		tok, err := t.r.token(t.ctx, TenantA, AllScopes())
		if err != nil {
			t.r.deployErr = "no token to probe for " + deployPipeline + ": " + err.Error()
			return
		}
		c, err := restclient.New(t.r.base, &restclient.Options{HTTPClient: t.r.http, Token: restclient.StaticToken(tok)})
		if err != nil {
			t.r.deployErr = err.Error()
			return
		}
		resp, err := c.CallTool(t.ctx, contracts.ToolPraxecCommand, []byte(`{"definitionId":"`+deployPipeline+`"}`))
		var m map[string]any
		switch {
		case err != nil:
			t.r.deployErr = "probing for " + deployPipeline + " failed: " + err.Error()
		case resp.Status == http.StatusNotFound:
			t.r.deployErr = "the target has no workflow " + deployPipeline + " (the mission cases drive the seeds' deploy pipeline)"
		case resp.Status != http.StatusOK && resp.Status != http.StatusCreated:
			t.r.deployErr = "starting " + deployPipeline + " answered " + describe(resp)
		case json.Unmarshal(resp.Body, &m) != nil || state(m) != "lint" || findLink(m, "run_lint") == nil:
			t.r.deployErr = "the target's " + deployPipeline + " is not the seeds' pipeline (initial state lint with a run_lint transition)"
		}
	})
	return t.r.deployErr == ""
}

// needDeploy skips the case when the target has no deploy_pipeline.
func (t *T) needDeploy() {
	if !t.deployAvailable() {
		t.Skipf("%s", t.r.deployErr)
	}
}

// startDeploy starts deploy_pipeline with praxec.command for tok (extra
// arguments added) and returns the start answer; the case is skipped when
// the target has no such workflow.
func (t *T) startDeploy(tok string, extra map[string]any) map[string]any {
	t.needDeploy()
	args := map[string]any{"definitionId": deployPipeline}
	for k, v := range extra {
		args[k] = v
	}
	resp := t.call(tok, contracts.ToolPraxecCommand, args)
	t.expectStatus("praxec.command start "+deployPipeline, resp, http.StatusOK, http.StatusCreated)
	return t.object(resp)
}

// createMission starts deploy_pipeline with aura_create_mission for tok and
// returns the answer.
func (t *T) createMission(tok string) (*response, map[string]any) {
	t.needDeploy()
	resp := t.post(mustTool(contracts.ToolCreateMission).Path, tok, newKey(),
		map[string]any{"goal": "conformance: deploy a service", "definitionId": deployPipeline})
	t.expectStatus("aura_create_mission", resp, http.StatusCreated, http.StatusOK)
	m := t.object(resp)
	if runID(m) == "" {
		t.Fatalf("aura_create_mission answered without runId: %s", snippet(resp.Body))
	}
	return resp, m
}

// Reading projections (seeds/000 workflow answers).

func workflowOf(m map[string]any) map[string]any {
	w, _ := m["workflow"].(map[string]any)
	return w
}

func state(m map[string]any) string {
	s, _ := workflowOf(m)["state"].(string)
	return s
}

func workflowID(m map[string]any) string {
	s, _ := workflowOf(m)["id"].(string)
	return s
}

func version(m map[string]any) float64 {
	v, _ := workflowOf(m)["version"].(float64)
	return v
}

func runID(m map[string]any) string {
	s, _ := m["runId"].(string)
	return s
}

func resultStatus(m map[string]any) string {
	r, _ := m["result"].(map[string]any)
	s, _ := r["status"].(string)
	return s
}

// links returns an answer's links[] (nil when absent).
func links(m map[string]any) []map[string]any {
	raw, ok := m["links"].([]any)
	if !ok {
		return nil
	}
	out := make([]map[string]any, 0, len(raw))
	for _, l := range raw {
		if lm, ok := l.(map[string]any); ok {
			out = append(out, lm)
		}
	}
	return out
}

func findLink(m map[string]any, rel string) map[string]any {
	for _, l := range links(m) {
		if l["rel"] == rel {
			return l
		}
	}
	return nil
}

func linkRels(m map[string]any) []string {
	var out []string
	for _, l := range links(m) {
		if r, ok := l["rel"].(string); ok {
			out = append(out, r)
		}
	}
	return out
}

func linkArgs(l map[string]any) map[string]any {
	a, _ := l["args"].(map[string]any)
	return a
}

// problemRels returns the rels of a problem answer's links.
func problemRels(resp *response) []string {
	if resp.Problem == nil {
		return nil
	}
	var out []string
	for _, l := range resp.Problem.Links {
		out = append(out, l.Rel)
	}
	return out
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
