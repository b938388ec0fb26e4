package e2e_test

import (
	"bytes"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestErrorCodes meets every error code of the mission surface at least
// once, with its status and body shape: the RFC 9457 problem carrying the
// seeds/000 envelope members (code, detail as the message, hint, links).
// Calls here are constructed on purpose: they are the mistakes a client
// makes.
func TestErrorCodes(t *testing.T) {
	ti := newIssuer(t)
	g := startGateway(t, ti, gwOptions{policy: sandboxPolicy})
	tokA := mint(t, ti, tenantA, userA)
	tokB := mint(t, ti, tenantB, userB)
	tokSandbox := mint(t, ti, tenantSandbox, userSandbox)
	operatorA := mint(t, ti, tenantA, operatorA, string(contracts.ScopeApprovalsWrite))
	operatorB := mint(t, ti, tenantB, "oscar-operator", string(contracts.ScopeApprovalsWrite))

	// startP starts a workflow over praxec and returns the answer.
	startP := func(t *testing.T, tok, def string) map[string]any {
		t.Helper()
		r := g.command(t, tok, map[string]any{"definitionId": def})
		gatewaytest.WantStatus(t, r, http.StatusOK)
		return r.Object(t)
	}
	// submitP fires a transition over praxec.
	submitP := func(t *testing.T, tok, id string, version int, transition string, args map[string]any) *gatewaytest.Response {
		t.Helper()
		call := map[string]any{"workflowId": id, "expectedVersion": version, "transition": transition}
		if args != nil {
			call["arguments"] = args
		}
		return g.command(t, tok, call)
	}
	// getP reads a workflow over praxec.
	getP := func(t *testing.T, tok, id string) map[string]any {
		t.Helper()
		r := g.query(t, tok, map[string]any{"workflowId": id})
		gatewaytest.WantStatus(t, r, http.StatusOK)
		return r.Object(t)
	}
	// createA creates a mission over aura and returns its answer.
	createA := func(t *testing.T, tok, def string) map[string]any {
		t.Helper()
		r := g.createMission(t, tok, newKey(), map[string]any{"goal": "e2e " + def, "definitionId": def})
		gatewaytest.WantStatus(t, r, http.StatusCreated)
		return r.Object(t)
	}

	t.Run("VERSION_CONFLICT", func(t *testing.T) {
		b := startP(t, tokA, "deploy_pipeline")
		id := str(t, b, "workflow.id")
		gatewaytest.WantStatus(t, submitP(t, tokA, id, 1, "run_lint", nil), http.StatusOK)
		p := wantProblem(t, submitP(t, tokA, id, 1, "abort", nil), http.StatusConflict, contracts.CodeVersionConflict)
		if p.Hint == "" {
			t.Errorf("VERSION_CONFLICT has no hint")
		}
		if len(p.Links) != 1 || p.Links[0].Rel != "get" || p.Links[0].Method != contracts.ToolPraxecQuery ||
			!reflect.DeepEqual(p.Links[0].Args, map[string]any{"workflowId": id}) {
			t.Fatalf("VERSION_CONFLICT links %+v, want a get link of %s", p.Links, id)
		}
		got := (&agent{g: g, token: tokA}).follow(t, p.Links[0], nil)
		gatewaytest.WantStatus(t, got, http.StatusOK)
		if gb := got.Object(t); num(t, gb, "workflow.version") != 2 || str(t, gb, "workflow.state") != "test" {
			t.Errorf("the get link reads %s", got.Body)
		}

		// The same refusal on the aura surface links aura_get_mission.
		a := createA(t, tokA, "guarded_merge")
		runID := str(t, a, "runId")
		gatewaytest.WantStatus(t, g.signal(t, tokA, newKey(), runID, map[string]any{"signal": "run_tests", "expectedVersion": 1}), http.StatusOK)
		p = wantProblem(t, g.signal(t, tokA, newKey(), runID, map[string]any{"signal": "merge", "expectedVersion": 1}), http.StatusConflict, contracts.CodeVersionConflict)
		if len(p.Links) != 1 || p.Links[0].Method != contracts.ToolGetMission || !reflect.DeepEqual(p.Links[0].Args, map[string]any{"runId": runID}) {
			t.Errorf("aura VERSION_CONFLICT links %+v, want aura_get_mission of %s", p.Links, runID)
		}
	})

	t.Run("INVALID_TRANSITION", func(t *testing.T) {
		b := startP(t, tokA, "deploy_pipeline")
		id := str(t, b, "workflow.id")
		gatewaytest.WantStatus(t, submitP(t, tokA, id, 1, "run_lint", nil), http.StatusOK)
		// deploy is a transition of the workflow, but not from test.
		p := wantProblem(t, submitP(t, tokA, id, 2, "deploy", nil), http.StatusConflict, contracts.CodeInvalidTransition)
		if !strings.Contains(p.Hint, "run_tests") || !strings.Contains(p.Hint, "abort") {
			t.Errorf("INVALID_TRANSITION hint %q does not name the legal moves", p.Hint)
		}
		// The next move: read the workflow back, whose answer links the
		// legal moves.
		if len(p.Links) != 1 || p.Links[0].Rel != "get" || p.Links[0].Method != contracts.ToolPraxecQuery || p.Links[0].Args["workflowId"] != id {
			t.Errorf("INVALID_TRANSITION links %+v, want a get of %s", p.Links, id)
		}
		// A name the workflow does not have at all.
		wantProblem(t, submitP(t, tokA, id, 2, "fly", nil), http.StatusConflict, contracts.CodeInvalidTransition)
		if v := num(t, getP(t, tokA, id), "workflow.version"); v != 2 {
			t.Errorf("refused moves changed the version to %d", v)
		}
		// Every move of an ended workflow.
		gatewaytest.WantStatus(t, submitP(t, tokA, id, 2, "abort", nil), http.StatusOK)
		p = wantProblem(t, submitP(t, tokA, id, 3, "run_tests", map[string]any{"coverage": 1}), http.StatusConflict, contracts.CodeInvalidTransition)
		if !strings.Contains(p.Detail, "ended") {
			t.Errorf("INVALID_TRANSITION on an ended workflow: %q", p.Detail)
		}
	})

	t.Run("GUARD_REJECTED", func(t *testing.T) {
		trace := newTraceID()
		b := startP(t, tokA, "guarded_merge")
		id := str(t, b, "workflow.id")
		merge := findLink(t, linksOf(t, b), "merge") // merge is legal from open...
		r := (&agent{g: g, token: tokA, trace: trace}).follow(t, merge, nil)
		p := wantProblem(t, r, http.StatusConflict, contracts.CodeGuardRejected) // ...but its guard refuses it
		if !strings.Contains(p.Detail, "tests_passed") || !strings.Contains(p.Hint, "tests_passed") {
			t.Errorf("GUARD_REJECTED does not name the missing evidence: %q / %q", p.Detail, p.Hint)
		}
		if len(p.Links) != 1 || p.Links[0].Rel != "get" || p.Links[0].Args["workflowId"] != id {
			t.Errorf("GUARD_REJECTED links %+v", p.Links)
		}
		events := g.traceEvents(t, tokA, trace)
		found := false
		for _, e := range events {
			if e.Type == "guard.rejected" {
				found = true
				if e.Code != string(contracts.CodeGuardRejected) || e.Outcome != "refused" || !reflect.DeepEqual(e.Attributes["missing"], []any{"tests_passed"}) {
					t.Errorf("guard.rejected event %+v", e)
				}
			}
		}
		if !found {
			t.Errorf("no guard.rejected event in %+v", events)
		}
		if v := num(t, getP(t, tokA, id), "workflow.version"); v != 1 {
			t.Errorf("a refused guard moved the version to %d", v)
		}
		// After run_tests produced tests_passed the same move succeeds.
		r = (&agent{g: g, token: tokA}).followOK(t, b, "run_tests", nil)
		r = (&agent{g: g, token: tokA}).followOK(t, r.Object(t), "merge", nil)
		if rb := r.Object(t); str(t, rb, "workflow.state") != "merged" || str(t, rb, "result.status") != "completed" {
			t.Errorf("merge after run_tests: %s", r.Body)
		}

		// On the aura surface the refusal links aura_get_mission.
		a := createA(t, tokA, "guarded_merge")
		r = (&agent{g: g, token: tokA}).follow(t, findLink(t, linksOf(t, a), "merge"), nil)
		p = wantProblem(t, r, http.StatusConflict, contracts.CodeGuardRejected)
		if len(p.Links) != 1 || p.Links[0].Method != contracts.ToolGetMission || p.Links[0].Args["runId"] != a["runId"] {
			t.Errorf("aura GUARD_REJECTED links %+v", p.Links)
		}
	})

	t.Run("RUN_ID_ALREADY_RUNNING", func(t *testing.T) {
		runID := "run-e2e-" + randomHex(8)
		r := g.command(t, tokA, map[string]any{"definitionId": "guarded_merge", "runId": runID})
		gatewaytest.WantStatus(t, r, http.StatusOK)
		existing := str(t, r.Object(t), "workflow.id")
		p := wantProblem(t, g.command(t, tokA, map[string]any{"definitionId": "deploy_pipeline", "runId": runID}), http.StatusConflict, contracts.CodeRunIDAlreadyRunning)
		if p.Detail != "An instance already exists with run_id '"+runID+"'." || p.Hint == "" {
			t.Errorf("RUN_ID_ALREADY_RUNNING detail %q hint %q", p.Detail, p.Hint)
		}
		want := []link{{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": existing}}}
		if !reflect.DeepEqual(p.Links, want) {
			t.Fatalf("RUN_ID_ALREADY_RUNNING links %+v, want %+v", p.Links, want)
		}
		got := (&agent{g: g, token: tokA}).follow(t, p.Links[0], nil)
		gatewaytest.WantStatus(t, got, http.StatusOK)
		if gb := got.Object(t); str(t, gb, "workflow.id") != existing || str(t, gb, "workflow.definitionId") != "guarded_merge" {
			t.Errorf("the get link reads %s", got.Body)
		}
		// aura_create_mission with the same runId: the same refusal, an
		// aura link.
		p = wantProblem(t, g.createMission(t, tokA, newKey(), map[string]any{"goal": "again", "definitionId": "guarded_merge", "runId": runID}),
			http.StatusConflict, contracts.CodeRunIDAlreadyRunning)
		if len(p.Links) != 1 || p.Links[0].Method != contracts.ToolGetMission || !reflect.DeepEqual(p.Links[0].Args, map[string]any{"runId": runID}) {
			t.Errorf("aura RUN_ID_ALREADY_RUNNING links %+v", p.Links)
		}
		// runIds are per tenant: another tenant may use the same one, and
		// learns nothing of acme's.
		gatewaytest.WantStatus(t, g.command(t, tokB, map[string]any{"definitionId": "guarded_merge", "runId": runID}), http.StatusOK)
	})

	t.Run("AMBIGUOUS_INTENT", func(t *testing.T) {
		p := wantProblem(t, g.command(t, tokA, map[string]any{"definitionId": "deploy_pipeline", "workflowId": "wf_x"}), http.StatusBadRequest, contracts.CodeAmbiguousIntent)
		if p.Detail != "praxec.command args do not match a known dispatch shape" || p.Hint == "" {
			t.Errorf("praxec.command AMBIGUOUS_INTENT detail %q hint %q", p.Detail, p.Hint)
		}
		// Exactly the seed's three example links.
		var seedCommand any
		gatewaytest.DecodeJSON([]byte(`[
			{ "rel": "start_example",  "method": "praxec.command", "args": { "definitionId": "<your-workflow>" } },
			{ "rel": "submit_example", "method": "praxec.command", "args": { "workflowId": "<id>", "expectedVersion": 0, "transition": "<name>" } },
			{ "rel": "define_example", "method": "praxec.command", "args": { "subject": "lexicon:<term>", "definition": { "definition_short": "..." } } }
		]`), &seedCommand)
		if !reflect.DeepEqual(p.Raw["links"], seedCommand) {
			t.Errorf("praxec.command AMBIGUOUS_INTENT links %v, want the seed's %v", p.Raw["links"], seedCommand)
		}

		p = wantProblem(t, g.query(t, tokA, map[string]any{"query": "", "workflowId": "wf_x"}), http.StatusBadRequest, contracts.CodeAmbiguousIntent)
		if p.Detail != "praxec.query args do not match a known dispatch shape" {
			t.Errorf("praxec.query AMBIGUOUS_INTENT detail %q", p.Detail)
		}
		var seedQuery any
		gatewaytest.DecodeJSON([]byte(`[{ "rel": "home", "method": "praxec.query", "args": {} }, { "rel": "search", "method": "praxec.query", "args": { "query": "" } }]`), &seedQuery)
		if !reflect.DeepEqual(p.Raw["links"], seedQuery) {
			t.Errorf("praxec.query AMBIGUOUS_INTENT links %v, want %v", p.Raw["links"], seedQuery)
		}

		// aura_create_mission without a definitionId compiles the goal; two
		// workflows that fit it equally answer AMBIGUOUS_INTENT with one
		// create link each, and following one starts that workflow.
		p = wantProblem(t, g.createMission(t, tokA, newKey(), map[string]any{"goal": "deploy release"}), http.StatusBadRequest, contracts.CodeAmbiguousIntent)
		var rels []string
		for _, l := range p.Links {
			rels = append(rels, l.Rel)
			if l.Method != contracts.ToolCreateMission || l.Args["goal"] != "deploy release" || contracts.CheckIdempotencyKey(l.Args["idempotencyKey"].(string)) != nil {
				t.Errorf("create link %+v", l)
			}
		}
		if !slices.Contains(rels, "create_deploy_pipeline") || !slices.Contains(rels, "create_release_approval") {
			t.Fatalf("aura AMBIGUOUS_INTENT links %v", rels)
		}
		r := (&agent{g: g, token: tokA}).follow(t, findLink(t, p.Links, "create_release_approval"), nil)
		gatewaytest.WantStatus(t, r, http.StatusCreated)
		if d := str(t, r.Object(t), "workflow.definitionId"); d != "release_approval" {
			t.Errorf("the create_release_approval link started %s", d)
		}
	})

	t.Run("INVALID_PARAMS", func(t *testing.T) {
		b := startP(t, tokA, "deploy_pipeline")
		id := str(t, b, "workflow.id")
		gatewaytest.WantStatus(t, submitP(t, tokA, id, 1, "run_lint", nil), http.StatusOK)
		for _, c := range []struct {
			args    map[string]any
			pointer string
			keyword string
		}{
			{map[string]any{"coverage": "high"}, "/arguments/coverage", "type"},
			{map[string]any{"coverage": 150}, "/arguments/coverage", "maximum"},
			{map[string]any{"coverage": 50, "extra": true}, "/arguments/extra", ""},
			{map[string]any{}, "/arguments/coverage", "required"},
		} {
			p := wantProblem(t, submitP(t, tokA, id, 2, "run_tests", c.args), http.StatusBadRequest, contracts.CodeInvalidParams)
			if len(p.Errors) != 1 || p.Errors[0].Pointer != c.pointer || (c.keyword != "" && p.Errors[0].Keyword != c.keyword) {
				t.Errorf("arguments %v: errors %+v, want pointer %s keyword %s", c.args, p.Errors, c.pointer, c.keyword)
			}
		}
		// Its next moves are on the praxec surface: the workflow's get,
		// whose run_tests link carries the inputSchema to follow, and home.
		p := wantProblem(t, submitP(t, tokA, id, 2, "run_tests", map[string]any{"coverage": "high"}), http.StatusBadRequest, contracts.CodeInvalidParams)
		praxecOnly(t, "INVALID_PARAMS", p.Links)
		get := findLink(t, p.Links, "get")
		if !reflect.DeepEqual(get.Args, map[string]any{"workflowId": id}) {
			t.Errorf("get link %+v", get)
		}
		findLink(t, p.Links, "home")
		got := (&agent{g: g, token: tokA}).follow(t, get, nil)
		gatewaytest.WantStatus(t, got, http.StatusOK)
		if l := findLink(t, linksOf(t, got.Object(t)), "run_tests"); l.InputSchema == nil {
			t.Errorf("the workflow's run_tests link has no inputSchema: %+v", l)
		}
		// A start whose input does not validate links the definition's
		// describe.
		p = wantProblem(t, g.command(t, tokA, map[string]any{"definitionId": "deploy_pipeline", "input": "x"}), http.StatusBadRequest, contracts.CodeInvalidParams)
		praxecOnly(t, "INVALID_PARAMS of a start", p.Links)
		desc := findLink(t, p.Links, "describe")
		if !reflect.DeepEqual(desc.Args, map[string]any{"subject": "deploy_pipeline"}) {
			t.Errorf("describe link %+v", desc)
		}
		gatewaytest.WantStatus(t, (&agent{g: g, token: tokA}).follow(t, desc, nil), http.StatusOK)
		// The tool's own fields: the pointer names the member of the call.
		p = wantProblem(t, g.command(t, tokA, map[string]any{"workflowId": id, "expectedVersion": "2", "transition": "run_tests"}), http.StatusBadRequest, contracts.CodeInvalidParams)
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/expectedVersion" {
			t.Errorf("expectedVersion as a string: errors %+v", p.Errors)
		}
		if v := num(t, getP(t, tokA, id), "workflow.version"); v != 2 {
			t.Errorf("refused arguments moved the version to %d", v)
		}
		// The same over aura_signal_mission.
		a := createA(t, tokA, "deploy_pipeline")
		runID := str(t, a, "runId")
		gatewaytest.WantStatus(t, g.signal(t, tokA, newKey(), runID, map[string]any{"signal": "run_lint", "expectedVersion": 1}), http.StatusOK)
		p = wantProblem(t, g.signal(t, tokA, newKey(), runID, map[string]any{"signal": "run_tests", "expectedVersion": 2, "arguments": map[string]any{"coverage": "high"}}),
			http.StatusBadRequest, contracts.CodeInvalidParams)
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/arguments/coverage" {
			t.Errorf("aura signal bad arguments: errors %+v", p.Errors)
		}
		// On the aura surface: the mission's get, and the call again with
		// its inputSchema.
		mget := findLink(t, p.Links, "get")
		if mget.Method != contracts.ToolGetMission || !reflect.DeepEqual(mget.Args, map[string]any{"runId": runID}) {
			t.Errorf("aura get link %+v", mget)
		}
		gatewaytest.WantStatus(t, (&agent{g: g, token: tokA}).follow(t, mget, nil), http.StatusOK)
		if retry := findLink(t, p.Links, "retry"); retry.Method != contracts.ToolSignalMission || retry.InputSchema == nil {
			t.Errorf("aura retry link %+v", retry)
		}
	})

	t.Run("mission-state-conflict", func(t *testing.T) {
		ag := &agent{g: g, token: tokA}
		a := createA(t, tokA, "guarded_merge")
		runID := str(t, a, "runId")
		r := ag.followOK(t, a, "run_tests", nil)
		r = ag.followOK(t, r.Object(t), "merge", nil)
		done := r.Object(t)
		if str(t, done, "result.status") != "completed" {
			t.Fatalf("merge: %s", r.Body)
		}
		// A signal to a completed mission, at its current version.
		p := wantProblem(t, g.signal(t, tokA, newKey(), runID, map[string]any{"signal": "merge", "expectedVersion": num(t, done, "workflow.version")}),
			http.StatusConflict, contracts.CodeMissionStateConflict)
		if !strings.Contains(p.Detail, "merged") {
			t.Errorf("mission-state-conflict detail %q", p.Detail)
		}
		// Cancelling a mission that completed otherwise: 409.
		wantProblem(t, g.cancelMission(t, tokA, newKey(), runID, nil), http.StatusConflict, contracts.CodeMissionStateConflict)

		// Cancelling an active mission, then cancelling it again: 200 both
		// times (new keys: not a replay).
		a = createA(t, tokA, "deploy_pipeline")
		runID = str(t, a, "runId")
		c1 := ag.followOK(t, a, "cancel", nil)
		cb := c1.Object(t)
		if str(t, cb, "workflow.state") != "cancelled" || str(t, cb, "result.status") != "completed" || len(linksOf(t, cb)) != 0 || num(t, cb, "workflow.version") != 2 {
			t.Errorf("cancel: %s", c1.Body)
		}
		c2 := g.cancelMission(t, tokA, newKey(), runID, map[string]any{"reason": "again"})
		gatewaytest.WantStatus(t, c2, http.StatusOK)
		validateOutput(t, contracts.ToolCancelMission, c2)
		if c2.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("a second cancel with a new key is marked replayed")
		}
		if c2b := c2.Object(t); str(t, c2b, "workflow.state") != "cancelled" || num(t, c2b, "workflow.version") != 2 {
			t.Errorf("second cancel: %s", c2.Body)
		}
		// And a signal to the cancelled mission.
		wantProblem(t, g.signal(t, tokA, newKey(), runID, map[string]any{"signal": "run_lint", "expectedVersion": 2}), http.StatusConflict, contracts.CodeMissionStateConflict)
	})

	t.Run("not-found_across_tenants", func(t *testing.T) {
		a := createA(t, tokA, "guarded_merge")
		runID, wfID := str(t, a, "runId"), str(t, a, "workflow.id")
		random := "wf_" + randomHex(13)
		// normal removes what differs between two refusals by design: the
		// request's id and the id the caller sent.
		normal := func(r *gatewaytest.Response, id string) map[string]any {
			p := wantProblem(t, r, http.StatusNotFound, contracts.CodeNotFound)
			m := p.Raw
			delete(m, "requestId")
			delete(m, "instance")
			delete(m, "traceId")
			m["detail"] = strings.ReplaceAll(m["detail"].(string), id, "<id>")
			return m
		}
		same := func(what string, theirs, none *gatewaytest.Response, theirID, noneID string) {
			t.Helper()
			if a, b := normal(theirs, theirID), normal(none, noneID); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: another tenant's mission answers %v, a missing one %v", what, a, b)
			}
		}
		same("GET /v8/missions", g.getMission(t, tokB, runID), g.getMission(t, tokB, random), runID, random)
		// Each surface's not-found links the way on: find a workflow.
		if p := wantProblem(t, g.query(t, tokB, map[string]any{"workflowId": random}), http.StatusNotFound, contracts.CodeNotFound); len(p.Links) != 1 || p.Links[0].Method != contracts.ToolPraxecQuery {
			t.Errorf("praxec get of a missing workflow: links %+v", p.Links)
		}
		if p := wantProblem(t, g.getMission(t, tokB, random), http.StatusNotFound, contracts.CodeNotFound); len(p.Links) != 1 || p.Links[0].Method != contracts.ToolSearchCapabilities {
			t.Errorf("aura_get_mission of a missing mission: links %+v", p.Links)
		}
		same("praxec get", g.query(t, tokB, map[string]any{"workflowId": wfID}), g.query(t, tokB, map[string]any{"workflowId": random}), wfID, random)
		same("praxec explain", g.query(t, tokB, map[string]any{"workflowId": wfID, "transition": "merge"}), g.query(t, tokB, map[string]any{"workflowId": random, "transition": "merge"}), wfID, random)
		same("praxec submit", g.command(t, tokB, map[string]any{"workflowId": wfID, "expectedVersion": 1, "transition": "run_tests"}),
			g.command(t, tokB, map[string]any{"workflowId": random, "expectedVersion": 1, "transition": "run_tests"}), wfID, random)
		sig := map[string]any{"signal": "run_tests", "expectedVersion": 1}
		same("signal", g.signal(t, tokB, newKey(), runID, sig), g.signal(t, tokB, newKey(), random, sig), runID, random)
		same("cancel", g.cancelMission(t, tokB, newKey(), runID, nil), g.cancelMission(t, tokB, newKey(), random, nil), runID, random)
		// Even without the Idempotency-Key the mission routes require,
		// ownership answers first.
		same("signal without a key", g.signal(t, tokB, "", runID, sig), g.signal(t, tokB, "", random, sig), runID, random)

		// acme's mission is untouched.
		r := g.getMission(t, tokA, runID)
		gatewaytest.WantStatus(t, r, http.StatusOK)
		validateOutput(t, contracts.ToolGetMission, r)
		if b := r.Object(t); num(t, b, "workflow.version") != 1 || str(t, b, "workflow.state") != "open" || str(t, b, "result.status") != "waiting_for_action" {
			t.Errorf("acme's mission after globex's attempts: %s", r.Body)
		}
	})

	t.Run("destructive-action-denied", func(t *testing.T) {
		a := createA(t, tokSandbox, "deploy_pipeline") // creating is not destructive
		runID := str(t, a, "runId")
		key := newKey()
		for range 2 {
			r := g.cancelMission(t, tokSandbox, key, runID, nil)
			wantProblem(t, r, http.StatusForbidden, contracts.CodeDestructiveActionDenied)
			if r.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("a policy refusal was replayed from a stored record")
			}
		}
		r := g.getMission(t, tokSandbox, runID)
		gatewaytest.WantStatus(t, r, http.StatusOK)
		if b := r.Object(t); num(t, b, "workflow.version") != 1 || str(t, b, "workflow.state") != "lint" {
			t.Errorf("the refused cancel changed the mission: %s", r.Body)
		}
		// The refusal consumed no key: the same key now carries another
		// (allowed) request of the same principal, which executes instead
		// of answering 422.
		r = g.signal(t, tokSandbox, key, runID, map[string]any{"signal": "run_lint", "expectedVersion": 1})
		gatewaytest.WantStatus(t, r, http.StatusOK)
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the signal was replayed")
		}
		// Only destructive tools are denied: praxec.command, like
		// aura_signal_mission, fires workflow moves that guards and
		// approvals govern, and is not annotated destructive.
		gatewaytest.WantStatus(t, g.command(t, tokSandbox, map[string]any{"definitionId": "guarded_merge"}), http.StatusOK)
	})

	t.Run("exact_replay_of_a_praxec_submit", func(t *testing.T) {
		b := startP(t, tokA, "deploy_pipeline")
		id := str(t, b, "workflow.id")
		first := submitP(t, tokA, id, 1, "run_lint", nil)
		gatewaytest.WantStatus(t, first, http.StatusOK)
		again := submitP(t, tokA, id, 1, "run_lint", nil)
		gatewaytest.WantStatus(t, again, http.StatusOK)
		if !bytes.Equal(first.Body, again.Body) {
			t.Errorf("exact replay answered\n%s\nnot the original\n%s", again.Body, first.Body)
		}
		// The replay holds after the workflow moved on.
		gatewaytest.WantStatus(t, submitP(t, tokA, id, 2, "run_tests", map[string]any{"coverage": 90}), http.StatusOK)
		if later := submitP(t, tokA, id, 1, "run_lint", nil); later.Status != http.StatusOK || !bytes.Equal(later.Body, first.Body) {
			t.Errorf("replay after progress: %d %s", later.Status, later.Body)
		}
		// Not exact (other transition, other arguments): a conflict.
		wantProblem(t, submitP(t, tokA, id, 1, "abort", nil), http.StatusConflict, contracts.CodeVersionConflict)
		wantProblem(t, submitP(t, tokA, id, 1, "run_lint", map[string]any{"note": "x"}), http.StatusConflict, contracts.CodeVersionConflict)
		if v := num(t, getP(t, tokA, id), "workflow.version"); v != 3 {
			t.Errorf("replays moved the version to %d", v)
		}
		// An Idempotency-Key header is honoured on praxec.command when sent.
		key := newKey()
		call := map[string]any{"workflowId": id, "expectedVersion": 3, "transition": "abort"}
		sendTwice(t, "keyed praxec.command", http.StatusOK, func() *gatewaytest.Response {
			return g.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: call, token: tokA, key: key})
		})
	})

	t.Run("idempotent_replay_and_key_reuse", func(t *testing.T) {
		createKey := newKey()
		create := map[string]any{"goal": "replay me", "definitionId": "deploy_pipeline"}
		c1, c2 := sendTwice(t, "create", http.StatusCreated, func() *gatewaytest.Response { return g.createMission(t, tokA, createKey, create) })
		if c2.Header.Get("Location") != c1.Header.Get("Location") || c1.Header.Get("Location") == "" {
			t.Errorf("create replay: Location %q vs %q", c2.Header.Get("Location"), c1.Header.Get("Location"))
		}
		if c1.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the first create is marked replayed")
		}
		cb := c1.Object(t)
		runID := str(t, cb, "runId")

		// signal: the link carries its key; following it twice replays.
		ag := &agent{g: g, token: tokA}
		lint := findLink(t, linksOf(t, cb), "run_lint")
		s1, _ := sendTwice(t, "signal", http.StatusOK, func() *gatewaytest.Response { return ag.follow(t, lint, nil) })
		// cancel, likewise.
		cancel := findLink(t, linksOf(t, s1.Object(t)), "cancel")
		sendTwice(t, "cancel", http.StatusOK, func() *gatewaytest.Response { return ag.follow(t, cancel, nil) })
		r := g.getMission(t, tokA, runID)
		if b := r.Object(t); num(t, b, "workflow.version") != 3 || str(t, b, "workflow.state") != "cancelled" {
			t.Errorf("after replays: %s", r.Body)
		}

		// A key reused across routes, or for another body: 422.
		other := createA(t, tokA, "guarded_merge")
		p := wantProblem(t, g.signal(t, tokA, createKey, str(t, other, "runId"), map[string]any{"signal": "run_tests", "expectedVersion": 1}),
			http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
		if p.Hint == "" {
			t.Errorf("key reuse has no hint")
		}
		wantProblem(t, g.cancelMission(t, tokA, lint.Args["idempotencyKey"].(string), str(t, other, "runId"), nil),
			http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
		p = wantProblem(t, g.createMission(t, tokA, createKey, map[string]any{"goal": "another goal", "definitionId": "deploy_pipeline"}),
			http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
		// Its next moves: read back the mission the key created, or send
		// the new request under a new key.
		back := findLink(t, p.Links, "get")
		if back.Method != contracts.ToolGetMission || back.Args["runId"] != runID {
			t.Errorf("key reuse get link %+v, want aura_get_mission of %s", back, runID)
		}
		gatewaytest.WantStatus(t, ag.follow(t, back, nil), http.StatusOK)
		if nk := findLink(t, p.Links, "retry_with_key"); nk.Method != contracts.ToolCreateMission || nk.Args["idempotencyKey"] == createKey {
			t.Errorf("key reuse retry_with_key link %+v", nk)
		}
		if b := g.getMission(t, tokA, str(t, other, "runId")).Object(t); num(t, b, "workflow.version") != 1 {
			t.Errorf("a refused reuse moved the mission: %v", b["workflow"])
		}
		// Keys are per principal: globex's use of acme's key is its own.
		gatewaytest.WantStatus(t, g.createMission(t, tokB, createKey, create), http.StatusCreated)
	})

	t.Run("approvals", func(t *testing.T) {
		// Two approvals of release_approval: one approved twice, one
		// overtaken by a cancel.
		queue := func(t *testing.T) (string, string) {
			a := createA(t, tokA, "release_approval")
			ag := &agent{g: g, token: tokA}
			r := ag.followOK(t, a, "request_release", map[string]any{"version": "2.0.0"})
			r = ag.followOK(t, r.Object(t), "approve_release", nil)
			b := r.Object(t)
			if str(t, b, "result.status") != "pending_approval" {
				t.Fatalf("approve_release: %s", r.Body)
			}
			return str(t, b, "approval.id"), str(t, b, "runId")
		}
		approve := func(tok, id string) *gatewaytest.Response {
			return g.do(t, req{method: http.MethodPost, path: "/v8/approvals/" + id + "/approve", token: tok})
		}
		id, _ := queue(t)
		// The principal that asked for the approval cannot grant it (an
		// audited refusal); rejecting it is fine, and another approver is.
		selfApprover := mint(t, ti, tenantA, userA, string(contracts.ScopeApprovalsWrite))
		trace := newTraceID()
		p := wantProblem(t, g.do(t, req{method: http.MethodPost, path: "/v8/approvals/" + id + "/approve", token: selfApprover, trace: trace}),
			http.StatusConflict, contracts.CodeSelfApproval)
		if !strings.Contains(p.Detail, userA) {
			t.Errorf("self-approval detail %q does not name the requester", p.Detail)
		}
		// Refusals are audited asynchronously (written within 200ms).
		if !gatewaytest.Poll(5*time.Second, func() bool {
			r := g.trace(t, tokA, trace)
			return r.Status == http.StatusOK && strings.Contains(string(r.Body), `"approval.refused"`)
		}) {
			t.Errorf("the self-approval refusal was not audited")
		}
		wantProblem(t, approve(operatorB, id), http.StatusNotFound, contracts.CodeNotFound) // another tenant's approval
		wantProblem(t, approve(tokB, id), http.StatusNotFound, contracts.CodeNotFound)
		gatewaytest.WantStatus(t, approve(operatorA, id), http.StatusOK)
		wantProblem(t, approve(operatorA, id), http.StatusConflict, contracts.CodeMissionStateConflict)
		wantProblem(t, g.do(t, req{method: http.MethodPost, path: "/v8/approvals/" + id + "/reject", token: operatorA}), http.StatusConflict, contracts.CodeMissionStateConflict)
		// A token without approvals:write is refused before anything is
		// looked at.
		noScope := mint(t, ti, tenantA, userA, string(contracts.ScopeMissionsWrite))
		wantProblem(t, approve(noScope, id), http.StatusForbidden, contracts.CodeInsufficientScope)

		// Rejecting leaves the mission where it was, the approve link back.
		id, _ = queue(t)
		rj := g.do(t, req{method: http.MethodPost, path: "/v8/approvals/" + id + "/reject", body: map[string]any{"note": "not yet"}, token: operatorA})
		gatewaytest.WantStatus(t, rj, http.StatusOK)
		rb := rj.Object(t)
		m := rb["mission"].(map[string]any)
		if str(t, rb, "approval.status") != "rejected" || str(t, m, "workflow.state") != "awaiting_approval" || str(t, m, "result.status") != "executed" {
			t.Errorf("reject: %s", rj.Body)
		}
		findLink(t, linksOf(t, m), "approve_release")

		id, runID := queue(t)
		gatewaytest.WantStatus(t, g.cancelMission(t, tokA, newKey(), runID, nil), http.StatusOK)
		wantProblem(t, approve(operatorA, id), http.StatusConflict, contracts.CodeMissionStateConflict)
		lr := g.do(t, req{method: http.MethodGet, path: "/v8/approvals?status=cancelled", token: operatorA})
		gatewaytest.WantStatus(t, lr, http.StatusOK)
		if !bytes.Contains(lr.Body, []byte(id)) {
			t.Errorf("the approval overtaken by the cancel is not listed as cancelled: %s", lr.Body)
		}
	})
}

// TestSelfApprovalAllowedByQueue: policy.allowSelfApproval names the
// queues whose approvals their requester may grant; the releases queue of
// release_approval is one here.
func TestSelfApprovalAllowedByQueue(t *testing.T) {
	ti := newIssuer(t)
	g := startGateway(t, ti, gwOptions{policy: config.Policy{AllowSelfApproval: []string{"releases"}}})
	tok := mint(t, ti, tenantA, userA)
	a := g.createMission(t, tok, newKey(), map[string]any{"goal": "release", "definitionId": "release_approval"})
	gatewaytest.WantStatus(t, a, http.StatusCreated)
	ag := &agent{g: g, token: tok}
	r := ag.followOK(t, a.Object(t), "request_release", map[string]any{"version": "2.0.0"})
	r = ag.followOK(t, r.Object(t), "approve_release", nil)
	id := str(t, r.Object(t), "approval.id")
	self := mint(t, ti, tenantA, userA, string(contracts.ScopeApprovalsWrite))
	gatewaytest.WantStatus(t, g.do(t, req{method: http.MethodPost, path: "/v8/approvals/" + id + "/approve", token: self}), http.StatusOK)
}

// TestReplayedRefusalIsTheOriginal: a refusal recorded under a key is
// replayed byte for byte, its requestId, instance and traceId included; the
// retry's own ids are in its X-Request-Id and Traceparent headers.
func TestReplayedRefusalIsTheOriginal(t *testing.T) {
	ti := newIssuer(t)
	g := startGateway(t, ti, gwOptions{})
	tok := mint(t, ti, tenantA, userA)
	create := map[string]any{"goal": "deploy", "definitionId": "deploy_pipeline", "runId": "replay-1"}
	gatewaytest.WantStatus(t, g.createMission(t, tok, newKey(), create), http.StatusCreated)
	key := newKey()
	first := g.createMission(t, tok, key, create)
	wantProblem(t, first, http.StatusConflict, contracts.CodeRunIDAlreadyRunning)
	again := g.createMission(t, tok, key, create)
	wantReplay(t, "the refused create", first, again)
	if again.Header.Get("X-Request-Id") == "" || again.Header.Get("X-Request-Id") == first.Header.Get("X-Request-Id") {
		t.Errorf("X-Request-Id of the retry %q, of the first %q", again.Header.Get("X-Request-Id"), first.Header.Get("X-Request-Id"))
	}
	p := wantProblem(t, again, http.StatusConflict, contracts.CodeRunIDAlreadyRunning)
	if p.TraceID != first.TraceID(t) || again.TraceID(t) == p.TraceID {
		t.Errorf("replayed traceId %q, first Traceparent %q, retry Traceparent %q", p.TraceID, first.Header.Get("Traceparent"), again.Header.Get("Traceparent"))
	}
}

// praxecOnly fails unless every link names praxec.query or praxec.command.
func praxecOnly(t testing.TB, what string, links []link) {
	t.Helper()
	for _, l := range links {
		if l.Method != contracts.ToolPraxecQuery && l.Method != contracts.ToolPraxecCommand {
			t.Errorf("%s: link %q names %s, outside the praxec surface", what, l.Rel, l.Method)
		}
	}
}
