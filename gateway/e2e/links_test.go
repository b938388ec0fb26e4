package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// step is one move of a scripted path: the link to follow (by rel) and
// what its answer must show.
type step struct {
	rel string
	// fill is the model's share of the call: transition arguments the
	// link's inputSchema requires and its prefill lacks.
	fill   map[string]any
	status string // result.status
	state  string // workflow.state
	// checkLink inspects the link before it is followed.
	checkLink func(t *testing.T, l link)
	// check inspects the answer.
	check func(t *testing.T, body map[string]any)
	// checkTrace, when set, sends the call in a fresh trace and inspects
	// the trace's audit events.
	checkTrace func(t *testing.T, workflowID string, events []traceEvent)
}

// scenario is a scripted path through one example workflow.
type scenario struct {
	name         string
	definitionID string
	initial      string
	// intent is the text submitted to POST /v8/intents on the aura
	// surface; its candidates must include definitionID.
	intent string
	steps  []step
	// approve says an operator approves the approval the last step queued.
	approve  bool
	final    string
	evidence []string
}

func scenarios() []scenario {
	return []scenario{
		{
			name: "deploy_pipeline_to_deployed", definitionID: "deploy_pipeline", initial: "lint",
			intent: "deploy the payments service to staging",
			steps: []step{
				{rel: "run_lint", status: "executed", state: "test", check: func(t *testing.T, b map[string]any) {
					if b["context"].(map[string]any)["lintPassed"] != true {
						t.Errorf("context.lintPassed not set: %v", b["context"])
					}
				}},
				// run_tests requires coverage: the model measures it and fills it.
				{rel: "run_tests", fill: map[string]any{"coverage": 87.5}, status: "executed", state: "build",
					checkLink: func(t *testing.T, l link) {
						if !slices.Equal(requiredOf(l.InputSchema), []string{"coverage"}) {
							t.Errorf("run_tests inputSchema %v does not require coverage", l.InputSchema)
						}
					},
					check: func(t *testing.T, b map[string]any) {
						if c := b["context"].(map[string]any); c["coverage"] != json.Number("87.5") || c["testsPassed"] != true {
							t.Errorf("context after run_tests: %v", c)
						}
					}},
				// build requires artifactId (the model names what it built);
				// its executor runs the validation sub-workflow to completion.
				{rel: "build", fill: map[string]any{"artifactId": "art_e2e_1"}, status: "executed", state: "ready_to_deploy",
					check: func(t *testing.T, b map[string]any) {
						c := b["context"].(map[string]any)
						if c["artifactId"] != "art_e2e_1" || c["validated"] != true {
							t.Errorf("context after build: %v (want artifactId and validated from the sub-workflow)", c)
						}
						// What is true: chain lists deterministic transitions of the
						// called workflow itself. validate fired inside the
						// validation sub-workflow, not in deploy_pipeline, so the
						// build answer has no chain member.
						if ch, ok := b["chain"]; ok {
							t.Errorf("build answer carries chain %v; the deterministic step ran in the sub-workflow", ch)
						}
					},
					checkTrace: func(t *testing.T, parent string, events []traceEvent) {
						var child string
						for _, e := range events {
							if e.Type == "workflow.started" && e.Attributes["definitionId"] == "validation" {
								child = e.WorkflowID
								if e.Attributes["parentId"] != parent {
									t.Errorf("sub-workflow parentId %v, want %s", e.Attributes["parentId"], parent)
								}
							}
						}
						if child == "" || child == parent {
							t.Fatalf("no validation sub-workflow started in the build trace: %+v", events)
						}
						var fired []string
						for _, e := range events {
							if e.Type == "transition.fired" {
								fired = append(fired, e.WorkflowID+":"+e.Attributes["transition"].(string)+":"+e.Attributes["actor"].(string))
							}
						}
						want := []string{child + ":validate:deterministic", parent + ":build:agent"}
						if !slices.Equal(fired, want) {
							t.Errorf("transitions fired in the build trace %v, want %v", fired, want)
						}
					}},
				// deploy's link arrives with confirm prefilled: nothing to fill.
				{rel: "deploy", status: "completed", state: "deployed",
					checkLink: func(t *testing.T, l link) {
						if got := l.Args["arguments"]; !reflect.DeepEqual(got, map[string]any{"confirm": true}) {
							t.Errorf("deploy link args.arguments %v, want the prefill {confirm: true}", got)
						}
					},
					check: func(t *testing.T, b map[string]any) {
						if b["context"].(map[string]any)["deployed"] != true {
							t.Errorf("context.deployed not set: %v", b["context"])
						}
					}},
			},
			final: "deployed", evidence: []string{"lint_passed", "tests_passed"},
		},
		{
			name: "release_approval_to_released", definitionID: "release_approval", initial: "draft",
			intent: "prepare a release and hold it for approval",
			steps: []step{
				{rel: "request_release", fill: map[string]any{"version": "1.4.0"}, status: "executed", state: "awaiting_approval"},
				// Firing approve_release queues a human approval: the state
				// stays, the version moves, and the link to the waiting
				// transition disappears.
				{rel: "approve_release", status: "pending_approval", state: "awaiting_approval", check: func(t *testing.T, b map[string]any) {
					if str(t, b, "approval.transition") != "approve_release" || str(t, b, "approval.queue") != "releases" {
						t.Errorf("approval member %v", b["approval"])
					}
					for _, l := range linksOf(t, b) {
						if l.Rel == "approve_release" {
							t.Errorf("a pending answer still links the waiting transition")
						}
					}
				}},
			},
			approve: true, final: "released", evidence: []string{"release_approved"},
		},
		{
			name: "guarded_merge_to_merged", definitionID: "guarded_merge", initial: "open",
			intent: "merge the change once its tests have passed",
			steps: []step{
				{rel: "run_tests", status: "executed", state: "tested"},
				{rel: "merge", status: "completed", state: "merged"},
			},
			final: "merged", evidence: []string{"tests_passed"},
		},
		{
			name: "deploy_pipeline_to_aborted", definitionID: "deploy_pipeline", initial: "lint",
			intent: "deploy the payments service to staging",
			steps: []step{
				{rel: "run_lint", status: "executed", state: "test"},
				{rel: "abort", status: "completed", state: "aborted"},
			},
			final: "aborted", evidence: []string{"lint_passed"},
		},
	}
}

// TestDriveEveryExampleByLinks drives every example workflow an agent can
// reach to a terminal state on both surfaces, praxec (praxec.query and
// praxec.command) and aura (aura_* tools over /v8/missions). The driver
// starts from a link the gateway returned and then never builds a call: each
// next call is a link's args sent verbatim to the route of the tool its
// method names (see agent.follow), the link chosen by rel from a scripted
// path; the only edit is the model's share, the transition arguments the
// link's inputSchema requires and its prefill does not supply. Every
// successful answer is held to the contract's output schema.
func TestDriveEveryExampleByLinks(t *testing.T) {
	ti := newIssuer(t)
	g := startGateway(t, ti, gwOptions{})
	token := mint(t, ti, tenantA, userA)
	operator := mint(t, ti, tenantA, operatorA, string(contracts.ScopeApprovalsWrite))

	for _, surface := range []string{"praxec", "aura"} {
		for _, sc := range scenarios() {
			t.Run(surface+"/"+sc.name, func(t *testing.T) {
				a := &agent{g: g, token: token}
				var first *gatewaytest.Response
				if surface == "praxec" {
					first = startPraxec(t, a, sc)
				} else {
					first = startAura(t, a, sc)
				}
				drive(t, a, operator, surface, sc, first)
			})
		}
	}

	// The validation workflow is reached by agents only through build's
	// workflow executor (above). Started on its own, its one deterministic
	// transition fires at once, and then, because it fired in the started
	// workflow itself, the answer lists it under chain.
	t.Run("praxec/validation_chain", func(t *testing.T) {
		// A constructed start: this probes what chain[] reports, it is not a
		// driven path.
		r := g.command(t, token, map[string]any{"definitionId": "validation", "input": map[string]any{"artifact": "art_direct"}})
		gatewaytest.WantStatus(t, r, http.StatusOK)
		validateOutput(t, contracts.ToolPraxecCommand, r)
		b := r.Object(t)
		if str(t, b, "result.status") != "completed" || str(t, b, "workflow.state") != "valid" || num(t, b, "workflow.version") != 2 {
			t.Errorf("validation start: %s", r.Body)
		}
		if l := linksOf(t, b); len(l) != 0 {
			t.Errorf("terminal answer has links %v", l)
		}
		wantChain := []any{map[string]any{"transition": "validate", "from": "checking", "to": "valid", "actor": "deterministic"}}
		if !reflect.DeepEqual(b["chain"], wantChain) {
			t.Errorf("chain %v, want %v", b["chain"], wantChain)
		}
		if c := b["context"]; !reflect.DeepEqual(c, map[string]any{"validated": true, "artifact": "art_direct"}) {
			t.Errorf("context %v", c)
		}
	})
}

// startPraxec starts sc on the praxec surface. The entry point is the
// gateway's home (praxec.query {}); its list_workflows link is followed
// verbatim. When the discovery feature answers it, the item of sc's
// workflow carries the start link (seeds/000 search), which is followed
// too. While discovery is not built the link answers 501 not-implemented,
// and then, as the one exception to "never build a call", the praxec start
// {"definitionId": ...} is constructed here: it is exactly the start link a
// search item carries. Everything after the start follows links.
func startPraxec(t *testing.T, a *agent, sc scenario) *gatewaytest.Response {
	t.Helper()
	home := a.g.query(t, a.token, map[string]any{})
	gatewaytest.WantStatus(t, home, http.StatusOK)
	validateOutput(t, contracts.ToolPraxecQuery, home)
	hb := home.Object(t)
	if str(t, hb, "resource.id") != "home" || str(t, hb, "result.status") != "ready" {
		t.Errorf("home: %s", home.Body)
	}
	links := linksOf(t, hb)
	var rels []string
	for _, l := range links {
		rels = append(rels, l.Rel)
	}
	if !slices.Equal(rels, []string{"search", "list_workflows", "list_capabilities"}) {
		t.Errorf("home links %v", rels)
	}
	list := a.follow(t, findLink(t, links, "list_workflows"), nil)
	if list.Status == http.StatusOK {
		var found struct {
			Items []struct {
				Item struct {
					ID    string `json:"id"`
					Links []link `json:"links"`
				} `json:"item"`
			} `json:"items"`
		}
		if err := gatewaytest.DecodeJSON(list.Body, &found); err != nil {
			t.Fatal(err)
		}
		for _, it := range found.Items {
			if it.Item.ID == sc.definitionID {
				t.Logf("discovery answers list_workflows: starting from the start link of item %s", it.Item.ID)
				r := a.follow(t, findLink(t, it.Item.Links, "start"), nil)
				gatewaytest.WantStatus(t, r, http.StatusOK)
				return r
			}
		}
		t.Fatalf("list_workflows does not list %s: %s", sc.definitionID, list.Body)
	}
	wantProblem(t, list, http.StatusNotImplemented, contracts.CodeNotImplemented)
	t.Logf("discovery is not built (list_workflows answers 501): constructing the start of %s", sc.definitionID)
	r := a.g.command(t, a.token, map[string]any{"definitionId": sc.definitionID})
	gatewaytest.WantStatus(t, r, http.StatusOK)
	validateOutput(t, contracts.ToolPraxecCommand, r)
	return r
}

// startAura starts sc on the aura surface from a link: the user's intent is
// submitted (the entry point), and the candidate for sc's workflow carries
// an aura_create_mission link that is followed verbatim.
func startAura(t *testing.T, a *agent, sc scenario) *gatewaytest.Response {
	t.Helper()
	ir := a.g.do(t, req{method: http.MethodPost, path: "/v8/intents", body: map[string]any{"intent": sc.intent}, token: a.token, key: newKey()})
	gatewaytest.WantStatus(t, ir, http.StatusOK)
	validateOutput(t, contracts.ToolSubmitIntent, ir)
	var intent struct {
		Candidates []struct {
			DefinitionID string `json:"definitionId"`
			Links        []link `json:"links"`
		} `json:"candidates"`
	}
	if err := gatewaytest.DecodeJSON(ir.Body, &intent); err != nil {
		t.Fatal(err)
	}
	for _, c := range intent.Candidates {
		if c.DefinitionID != sc.definitionID {
			continue
		}
		l := findLink(t, c.Links, "create_mission")
		if l.Method != contracts.ToolCreateMission {
			t.Fatalf("candidate link method %q", l.Method)
		}
		r := a.follow(t, l, nil)
		gatewaytest.WantStatus(t, r, http.StatusCreated)
		b := r.Object(t)
		if loc := r.Header.Get("Location"); loc != "/v8/missions/"+str(t, b, "runId") {
			t.Errorf("Location %q for runId %v", loc, b["runId"])
		}
		return r
	}
	t.Fatalf("intent %q has no candidate %s: %s", sc.intent, sc.definitionID, ir.Body)
	return nil
}

// drive follows sc's scripted path from the start answer first.
func drive(t *testing.T, a *agent, operator, surface string, sc scenario, first *gatewaytest.Response) {
	t.Helper()
	keys := map[string]bool{}
	body := first.Object(t)
	checkProjection(t, surface, body, keys)
	if str(t, body, "result.status") != "started" || str(t, body, "workflow.state") != sc.initial || num(t, body, "workflow.version") != 1 {
		t.Fatalf("start answer: %s", first.Body)
	}
	if str(t, body, "workflow.definitionId") != sc.definitionID || num(t, body, "workflow.definitionVersion") != 1 {
		t.Errorf("start answer names %v", body["workflow"])
	}
	workflowID := str(t, body, "workflow.id")
	evidence := strs(t, body, "evidence")
	if len(evidence) != 0 {
		t.Errorf("a fresh mission holds evidence %v", evidence)
	}
	for _, st := range sc.steps {
		l := findLink(t, linksOf(t, body), st.rel)
		if st.checkLink != nil {
			st.checkLink(t, l)
		}
		version := num(t, body, "workflow.version")
		if st.checkTrace != nil {
			a.trace = newTraceID()
		}
		r := a.follow(t, l, st.fill)
		trace := a.trace
		a.trace = ""
		gatewaytest.WantStatus(t, r, http.StatusOK)
		body = r.Object(t)
		checkProjection(t, surface, body, keys)
		if got := str(t, body, "result.status"); got != st.status {
			t.Errorf("%s: result.status %q, want %q", st.rel, got, st.status)
		}
		if got := str(t, body, "workflow.state"); got != st.state {
			t.Errorf("%s: state %q, want %q", st.rel, got, st.state)
		}
		if got := num(t, body, "workflow.version"); got != version+1 {
			t.Errorf("%s: version %d, want %d", st.rel, got, version+1)
		}
		if str(t, body, "workflow.id") != workflowID {
			t.Errorf("%s: the workflow id changed", st.rel)
		}
		// Evidence accumulates: what was held is still held, in order.
		now := strs(t, body, "evidence")
		if len(now) < len(evidence) || !slices.Equal(now[:len(evidence)], evidence) {
			t.Errorf("%s: evidence %v does not extend %v", st.rel, now, evidence)
		}
		evidence = now
		if st.check != nil {
			st.check(t, body)
		}
		if st.checkTrace != nil {
			st.checkTrace(t, workflowID, a.g.traceEvents(t, a.token, trace))
		}
	}

	if sc.approve {
		body = approveAndObserve(t, a, operator, surface, body, keys)
	}

	if got := str(t, body, "workflow.state"); got != sc.final {
		t.Errorf("final state %q, want %q", got, sc.final)
	}
	if got := str(t, body, "result.status"); got != "completed" {
		t.Errorf("terminal result.status %q, want completed", got)
	}
	if l := linksOf(t, body); len(l) != 0 {
		t.Errorf("a terminal answer has links %v", l)
	}
	if got := strs(t, body, "evidence"); !slices.Equal(got, sc.evidence) {
		t.Errorf("final evidence %v, want %v", got, sc.evidence)
	}
}

// approveAndObserve resolves the pending approval of body through the
// operator endpoints, then lets the agent find out with the links it holds:
// its last answer still links withdraw at the pending version; following it
// is refused with VERSION_CONFLICT, whose get link reads the released
// mission. (A pending_approval answer carries no read link of its own; see
// the report.)
func approveAndObserve(t *testing.T, a *agent, operator, surface string, body map[string]any, keys map[string]bool) map[string]any {
	t.Helper()
	g := a.g
	approvalID := str(t, body, "approval.id")
	pendingVersion := num(t, body, "workflow.version")
	workflowID := str(t, body, "workflow.id")
	runID := workflowID
	if surface == "aura" {
		runID = str(t, body, "runId")
	}

	lr := g.do(t, req{method: http.MethodGet, path: "/v8/approvals", token: operator})
	gatewaytest.WantStatus(t, lr, http.StatusOK)
	var list struct {
		Approvals []struct {
			ID, Status, WorkflowID, RunID, Transition, Queue, RequestedBy string
		} `json:"approvals"`
	}
	if err := gatewaytest.DecodeJSON(lr.Body, &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ap := range list.Approvals {
		if ap.ID != approvalID {
			continue
		}
		found = true
		if ap.Status != "pending" || ap.WorkflowID != workflowID || ap.RunID != runID || ap.Transition != "approve_release" ||
			ap.Queue != "releases" || ap.RequestedBy != userA {
			t.Errorf("approval as listed: %+v", ap)
		}
	}
	if !found {
		t.Fatalf("approval %s is not among the pending ones: %s", approvalID, lr.Body)
	}

	rr := g.do(t, req{method: http.MethodPost, path: "/v8/approvals/" + approvalID + "/approve", body: map[string]any{"note": "ship it"}, token: operator})
	gatewaytest.WantStatus(t, rr, http.StatusOK)
	res := rr.Object(t)
	if str(t, res, "approval.status") != "approved" || str(t, res, "approval.resolvedBy") != operatorA {
		t.Errorf("resolution approval: %v", res["approval"])
	}
	m := res["mission"].(map[string]any)
	if str(t, m, "workflow.state") != "released" || str(t, m, "result.status") != "completed" || num(t, m, "workflow.version") != pendingVersion+1 {
		t.Errorf("resolution mission: %v", m)
	}
	if l := linksOf(t, m); len(l) != 0 {
		t.Errorf("released mission links %v", l)
	}
	// The approval is no longer pending.
	lr = g.do(t, req{method: http.MethodGet, path: "/v8/approvals?status=approved", token: operator})
	gatewaytest.WantStatus(t, lr, http.StatusOK)
	if !bytes.Contains(lr.Body, []byte(approvalID)) {
		t.Errorf("approval %s not listed as approved: %s", approvalID, lr.Body)
	}

	// The agent's view, by links only.
	stale := a.follow(t, findLink(t, linksOf(t, body), "withdraw"), nil)
	p := wantProblem(t, stale, http.StatusConflict, contracts.CodeVersionConflict)
	if len(p.Links) != 1 || p.Links[0].Rel != "get" {
		t.Fatalf("VERSION_CONFLICT links %+v, want one get link", p.Links)
	}
	wantGet := contracts.ToolPraxecQuery
	if surface == "aura" {
		// Links of aura_* answers name aura_* tools (DESIGN, "Missions are
		// praxec workflows"), errors included.
		wantGet = contracts.ToolGetMission
	}
	if p.Links[0].Method != wantGet {
		t.Errorf("VERSION_CONFLICT on the %s surface links %s, want %s", surface, p.Links[0].Method, wantGet)
	}
	got := a.follow(t, p.Links[0], nil)
	gatewaytest.WantStatus(t, got, http.StatusOK)
	final := got.Object(t)
	checkProjection(t, surface, final, keys)
	if num(t, final, "workflow.version") != pendingVersion+1 {
		t.Errorf("version after approval %d, want %d", num(t, final, "workflow.version"), pendingVersion+1)
	}
	return final
}

// checkProjection checks the link shapes of a mission answer on its
// surface: every transition link's args are the exact call of seeds/000
// (praxec) or of aura_signal_mission, pinned to the answer's version; aura
// answers add runId and a cancel link; an answer waiting for an approval
// adds a get link; every idempotencyKey a link carries is fresh.
func checkProjection(t *testing.T, surface string, body map[string]any, keys map[string]bool) {
	t.Helper()
	id := str(t, body, "workflow.id")
	version := num(t, body, "workflow.version")
	runID, hasRunID := body["runId"].(string)
	if surface == "aura" && !hasRunID {
		t.Errorf("aura answer has no runId")
	}
	for _, l := range linksOf(t, body) {
		if l.Rel == "get" {
			// A mission waiting for an approval offers a read of itself.
			want := map[string]any{"workflowId": id}
			method := contracts.ToolPraxecQuery
			if surface == "aura" {
				want, method = map[string]any{"runId": runID}, contracts.ToolGetMission
			}
			if str(t, body, "result.status") != "pending_approval" || l.Method != method || !reflect.DeepEqual(l.Args, want) {
				t.Errorf("get link %+v on a %s answer", l, str(t, body, "result.status"))
			}
			continue
		}
		switch surface {
		case "praxec":
			if l.Method != contracts.ToolPraxecCommand || l.Args["workflowId"] != id || l.Args["transition"] != l.Rel ||
				l.Args["expectedVersion"] != json.Number(itoa(version)) {
				t.Errorf("praxec link %+v does not submit %s at version %d", l, id, version)
			}
		case "aura":
			switch l.Method {
			case contracts.ToolSignalMission:
				if l.Args["runId"] != runID || l.Args["signal"] != l.Rel || l.Args["expectedVersion"] != json.Number(itoa(version)) {
					t.Errorf("aura link %+v does not signal %s at version %d", l, runID, version)
				}
			case contracts.ToolCancelMission:
				if l.Rel != "cancel" || l.Args["runId"] != runID || len(l.Args) != 2 {
					t.Errorf("aura cancel link %+v", l)
				}
			default:
				t.Errorf("aura answer links %s", l.Method)
			}
			k, _ := l.Args["idempotencyKey"].(string)
			if err := contracts.CheckIdempotencyKey(k); err != nil {
				t.Errorf("link %s key %q: %v", l.Rel, k, err)
			}
			if keys[k] {
				t.Errorf("link %s reuses idempotency key %s", l.Rel, k)
			}
			keys[k] = true
		}
		if l.Method != contracts.ToolCancelMission && (l.Actor == "" || l.InputSchema == nil || l.InputSchema["type"] != "object") {
			t.Errorf("transition link %s lacks actor or inputSchema: %+v", l.Rel, l)
		}
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
