package e2e_test

// Start and approval leases and the lease sweeper (issue 8,
// gateway/leases_start.go, gateway/leases_sweep.go): a start whose chain
// calls outside takes a store lease on its runId (else its idempotency
// key) before the call, and an approval that fires an outside move takes
// the move lease on the workflow version, so two replicas on one store
// never both call; a lease left by a gateway that stopped mid-call is
// resolved as a recorded 504 outcome-unknown, by the next request or by
// the sweeper, never by calling again.

import (
	"context"
	_ "embed"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
)

// startLeasesYAML is leasesYAML with the release workflow, whose human
// step, once approved, calls the upstream.
var startLeasesYAML = leasesYAML + gatewaytest.ReleaseWorkflowYAML

// startLeasesGateway starts a gateway on a SQLite file, or on the
// PostgreSQL database dsn names; edit changes its configuration.
func startLeasesGateway(t *testing.T, ti *gatewaytest.Issuer, api, dsn string, now func() time.Time, edit func(*config.Config)) *gatewaytest.Gateway {
	t.Helper()
	return apiGateway(t, ti, "start-leases.yaml", startLeasesYAML, api, dsn, now, edit)
}

// heldStartGateway is a start-leases gateway on the store dsn names and
// the clock clk the test moves, trusting ti, whose deploy upstream (api)
// holds every call until hold is closed.
func heldStartGateway(t *testing.T, dsn string) (ti *gatewaytest.Issuer, hold chan struct{}, api *countingAPI, clk *gatewaytest.Clock, g *gatewaytest.Gateway) {
	t.Helper()
	ti, hold, clk = newIssuer(t), make(chan struct{}), &gatewaytest.Clock{}
	api, srv := newDeployAPI(t, hold)
	return ti, hold, api, clk, startLeasesGateway(t, ti, srv.URL, dsn, clk.Now, nil)
}

// deployStart is a start whose first move (proxy_default's deploy) calls
// the upstream before the start commits.
// runID "" is aura_create_mission's body (a goal, no runId); any other is
// praxec.command start's with that runId.
func deployStart(runID string) map[string]any {
	args := map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "deploy"}}
	if runID == "" {
		args["goal"] = "deploy the service"
	} else {
		args["runId"] = runID
	}
	return args
}

// raceAnswers checks the answers of a start or approval race: each is
// okStatus or a 409 (in progress with Retry-After, or one of also).
func raceAnswers(t *testing.T, res []*gatewaytest.Response, okStatus int, also ...contracts.Code) int {
	t.Helper()
	ok := 0
	for i, rs := range res {
		switch rs.Status {
		case okStatus:
			ok++
		case http.StatusConflict:
			code := problemCode(t, rs)
			if code == contracts.CodeIdempotencyInProgress {
				wantProblem(t, rs, http.StatusConflict, code)
				if rs.Header.Get("Retry-After") == "" {
					t.Errorf("answer %d: 409 without Retry-After", i)
				}
				continue
			}
			allowed := false
			for _, c := range also {
				allowed = allowed || code == c
			}
			if !allowed {
				t.Errorf("answer %d: 409 %s", i, rs.Body)
			}
		default:
			t.Errorf("answer %d: %d %s", i, rs.Status, rs.Body)
		}
	}
	return ok
}

func problemCode(t *testing.T, r *gatewaytest.Response) contracts.Code {
	t.Helper()
	var p problem
	if err := gatewaytest.DecodeJSON(r.Body, &p); err != nil {
		t.Fatalf("%d %s: %v", r.Status, r.Body, err)
	}
	return contracts.Code(p.Code)
}

// raceHeld sends n requests at once, alternating between the replicas
// ws, of which calls requests are to call the upstream; the upstream holds
// each call until hold gives. hold starts giving (and gives until every
// request has answered) once the requests that can answer while the calls
// are held have: all n-calls others, or every request sent to all the
// replicas but one (a replica queues its own requests behind its call).
// So each of those met the calls in flight. If they have not answered
// within 10s (more requests called than calls, each held), hold gives
// anyway, for the caller's count of the calls to fail on.
func raceHeld(n, calls int, ws []*gw, hold chan<- struct{}, send func(w *gw) *gatewaytest.Response) []*gatewaytest.Response {
	var answered atomic.Int32
	left := make([]atomic.Int32, len(ws)) // racers of each replica yet to answer
	for i := range n {
		left[i%len(ws)].Add(1)
	}
	met := func() bool {
		done := 0
		for i := range left {
			if left[i].Load() == 0 {
				done++
			}
		}
		return answered.Load() >= int32(n-calls) || (len(ws) > 1 && done >= len(ws)-1)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		gatewaytest.Poll(10*time.Second, met)
		for answered.Load() < int32(n) {
			select {
			case hold <- struct{}{}:
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	res := gatewaytest.Race(n, func(i int) *gatewaytest.Response {
		defer answered.Add(1)
		defer left[i%len(ws)].Add(-1)
		return send(ws[i%len(ws)])
	})
	<-released
	return res
}

// TestStartLeaseReplicasCallOnce: the same start (one idempotency key, or
// one runId without a key) sent to two replicas on one store at once
// reaches the upstream once; the others answer 409 in progress with
// Retry-After (or, the start done, its replay or RUN_ID_ALREADY_RUNNING).
func TestStartLeaseReplicasCallOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti := newIssuer(t)
		hold := make(chan struct{})
		api, srv := newDeployAPI(t, hold)
		g := startLeasesGateway(t, ti, srv.URL, dsn, nil, nil)
		ws := []*gw{wrapGateway(g), wrapGateway(g.Replica(t, nil))}
		tok := mint(t, ti, tenantA, userA)
		const n = 6

		// aura_create_mission with one key: one call; the retries replay.
		key := newKey()
		create := func(w *gw) *gatewaytest.Response {
			rs, err := w.send(req{method: http.MethodPost, path: "/v8/missions", body: deployStart(""), token: tok, key: key})
			if err != nil {
				return &gatewaytest.Response{Status: 599, Body: []byte(err.Error())}
			}
			return rs
		}
		if ok := raceAnswers(t, raceHeld(n, 1, ws, hold, create), http.StatusCreated); ok == 0 {
			t.Errorf("no keyed start created the mission")
		}
		if c := api.calls("/deploy").Load(); c != 1 {
			t.Fatalf("keyed start: the upstream was called %d times, want 1", c)
		}
		for _, w := range ws {
			gatewaytest.WantStatus(t, create(w), http.StatusCreated)
		}
		if c := api.calls("/deploy").Load(); c != 1 {
			t.Errorf("after the retries the upstream was called %d times, want 1", c)
		}

		// praxec.command start with one runId and no key.
		start := func(w *gw) *gatewaytest.Response {
			rs, err := w.send(req{method: http.MethodPost, path: "/v8/praxec/command", body: deployStart("run-race"), token: tok})
			if err != nil {
				return &gatewaytest.Response{Status: 599, Body: []byte(err.Error())}
			}
			return rs
		}
		if ok := raceAnswers(t, raceHeld(n, 1, ws, hold, start), http.StatusOK, contracts.CodeRunIDAlreadyRunning); ok != 1 {
			t.Errorf("%d runId starts created the mission, want 1", ok)
		}
		if c := api.calls("/deploy").Load(); c != 2 {
			t.Fatalf("runId start: the upstream was called %d times in all, want 2", c)
		}
		wantProblem(t, start(ws[1]), http.StatusConflict, contracts.CodeRunIDAlreadyRunning)
		if c := api.calls("/deploy").Load(); c != 2 {
			t.Errorf("after the retry the upstream was called %d times in all, want 2", c)
		}
		// Every start lease was deleted by the start that completed.
		if n, err := g.Service.SweepLeases(context.Background()); err != nil || n != 0 {
			t.Errorf("SweepLeases after the race = %d, %v", n, err)
		}
	})
}

// TestStartLeaseStaleAnswers504: a start whose gateway is stuck mid-call
// (its lease past its deadline, as a gateway that crashed leaves it) is
// answered on retry, on another replica, with a recorded 504
// outcome-unknown and no second call; the stuck gateway's late answer is
// the record's too. Keyed (aura_create_mission) and by runId alone
// (praxec.command start).
func TestStartLeaseStaleAnswers504(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		for _, tc := range []struct {
			name string
			send func(w *gw, tok string) (*gatewaytest.Response, error)
			// ok is the status the start answers when not stuck.
			ok int
		}{
			{"keyed", func() func(w *gw, tok string) (*gatewaytest.Response, error) {
				key := newKey()
				return func(w *gw, tok string) (*gatewaytest.Response, error) {
					return w.send(req{method: http.MethodPost, path: "/v8/missions", body: deployStart(""), token: tok, key: key})
				}
			}(), http.StatusCreated},
			{"runId", func(w *gw, tok string) (*gatewaytest.Response, error) {
				return w.send(req{method: http.MethodPost, path: "/v8/praxec/command", body: deployStart("run-stuck"), token: tok})
			}, http.StatusOK},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ti := newIssuer(t)
				hold := make(chan struct{})
				api, srv := newDeployAPI(t, hold)
				clk := &gatewaytest.Clock{}
				g := startLeasesGateway(t, ti, srv.URL, dsn, clk.Now, nil)
				stuck, w := wrapGateway(g.Replica(t, nil)), wrapGateway(g)
				tok := mint(t, ti, tenantA, userA)

				late := make(chan *gatewaytest.Response, 1)
				go func() {
					rs, err := tc.send(stuck, tok)
					if err != nil {
						rs = &gatewaytest.Response{Status: 599, Body: []byte(err.Error())}
					}
					late <- rs
				}()
				waitCalls(t, api.calls("/deploy"), 1, hold)
				// While the lease is live the start is refused at once.
				rs, err := tc.send(w, tok)
				if err != nil {
					t.Fatal(err)
				}
				wantProblem(t, rs, http.StatusConflict, contracts.CodeIdempotencyInProgress)

				// Past its deadline the lease's gateway is taken for stopped.
				clk.Set(gateway.DefaultLeaseTTL + time.Minute)
				var unknown problem
				for range 2 {
					rs, err = tc.send(w, tok)
					if err != nil {
						t.Fatal(err)
					}
					unknown = wantProblem(t, rs, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
				}
				if c := api.calls("/deploy").Load(); c != 1 {
					t.Errorf("the upstream was called %d times, want 1", c)
				}
				wantLateOutcomeUnknown(t, hold, late, "the stuck gateway")
				rs, err = tc.send(w, tok)
				if err != nil {
					t.Fatal(err)
				}
				wantProblem(t, rs, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
				if c := api.calls("/deploy").Load(); c != 1 {
					t.Errorf("after the stuck call returned the upstream was called %d times, want 1", c)
				}
				// The 504 links the run the start stored with its lease: it
				// reads as a run whose start's outcome is unknown.
				wantUnknownRun(t, w, tok, unknown, tc.ok == http.StatusCreated)
			})
		}
	})
}

// wantUnknownRun follows the get link of a start's 504 outcome-unknown
// (aura: aura_get_mission, with the start's trace beside it; praxec: the
// workflow's get) and checks the run it reads: at version 1 and at its
// initial state, its lastRun saying the start's outcome is unknown.
func wantUnknownRun(t *testing.T, w *gw, tok string, p problem, aura bool) {
	t.Helper()
	get := findLink(t, p.Links, "get")
	var run *gatewaytest.Response
	if aura {
		if get.Method != contracts.ToolGetMission {
			t.Fatalf("the 504's get link names %s: %+v", get.Method, p.Links)
		}
		findLink(t, p.Links, "trace")
		run = w.getMission(t, tok, get.Args["runId"].(string))
	} else {
		if get.Method != contracts.ToolPraxecQuery {
			t.Fatalf("the 504's get link names %s: %+v", get.Method, p.Links)
		}
		run = w.query(t, tok, get.Args)
	}
	gatewaytest.WantStatus(t, run, http.StatusOK)
	body := run.Object(t)
	if v := num(t, body, "workflow.version"); v != 1 || str(t, body, "context.lastRun.outcome") != "unknown" || str(t, body, "context.lastRun.error") == "" {
		t.Errorf("the run of a start whose outcome is unknown: %s", run.Body)
	}
}

// waitCalls waits for the upstream to have been called want times; hold
// is closed on failure so the stuck call ends.
func waitCalls(t *testing.T, calls *atomic.Int32, want int32, hold chan struct{}) {
	t.Helper()
	gatewaytest.Poll(10*time.Second, func() bool { return calls.Load() >= want })
	if calls.Load() != want {
		close(hold)
		t.Fatalf("the upstream was called %d times, want %d", calls.Load(), want)
	}
}

// TestLeaseSweeperResolvesWithoutRequest: expired leases (a start's and a
// move's, left by a stuck gateway) are resolved by the sweeper with no
// request meeting them; the retries then answer the recorded 504 without
// calling; two sweepers never both resolve a lease. Then serve's wiring:
// a short server.leaseTTL and the lease sweep resolve a stuck start on
// the real clock.
func TestLeaseSweeperResolvesWithoutRequest(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti, hold, api, clk, g := heldStartGateway(t, dsn)
		other := g.Replica(t, nil)
		stuck, w := wrapGateway(g.Replica(t, nil)), wrapGateway(g)
		tok := mint(t, ti, tenantA, userA)

		// A workflow to move, before anything is held.
		wf, submit := startRun(t, w, tok, "deploy")
		version := num(t, map[string]any{"v": submit["expectedVersion"]}, "v")

		key := newKey()
		create := func(w *gw) *gatewaytest.Response {
			return w.do(t, req{method: http.MethodPost, path: "/v8/missions", body: deployStart(""), token: tok, key: key})
		}
		done := make(chan struct{}, 2)
		go func() {
			_, _ = stuck.send(req{method: http.MethodPost, path: "/v8/missions", body: deployStart(""), token: tok, key: key})
			done <- struct{}{}
		}()
		waitCalls(t, api.calls("/deploy"), 1, hold)
		go func() {
			_, _ = stuck.send(req{method: http.MethodPost, path: "/v8/praxec/command", body: submit, token: tok})
			done <- struct{}{}
		}()
		waitCalls(t, api.calls("/deploy"), 2, hold)

		if n, err := g.Service.SweepLeases(context.Background()); err != nil || n != 0 {
			close(hold)
			t.Fatalf("SweepLeases with live leases = %d, %v; want 0", n, err)
		}
		clk.Set(gateway.DefaultLeaseTTL + time.Minute)
		// Two replicas sweep at once: each lease is resolved once.
		if swept := sweepAtOnce(t, (*gateway.Service).SweepLeases, g.Service, other.Service); swept != 2 || g.Service.LeasesSwept()+other.Service.LeasesSwept() != 2 {
			t.Errorf("the sweepers resolved %d leases (counters %d + %d), want 2", swept, g.Service.LeasesSwept(), other.Service.LeasesSwept())
		}
		// Resolved with no request: the workflow shows the unknown move.
		wantUnknownOutcome(t, w, tok, wf, version)
		// The retries answer the record, on any replica, without calling.
		wantProblem(t, create(w), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
		wantProblem(t, w.command(t, tok, submit), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
		close(hold)
		for range 2 {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("a stuck call never returned")
			}
		}
		if c := api.calls("/deploy").Load(); c != 2 {
			t.Errorf("the upstream was called %d times, want 2", c)
		}
		if n, err := g.Service.SweepLeases(context.Background()); err != nil || n != 0 {
			t.Errorf("a second sweep = %d, %v; want 0", n, err)
		}
	})
}

// TestLeaseSweeperRunsOnConfiguredTTL: server.leaseTTL sets the lease TTL
// and the lease sweep, as serve runs it, resolves a stuck start on the real
// clock without any request; the stuck gateway's late answer and the
// retry are the recorded 504.
func TestLeaseSweeperRunsOnConfiguredTTL(t *testing.T) {
	ti := newIssuer(t)
	hold := make(chan struct{})
	api, srv := newDeployAPI(t, hold)
	g := startLeasesGateway(t, ti, srv.URL, "", nil, func(cfg *config.Config) { cfg.Server.LeaseTTL = config.Duration(time.Second) })
	if g.Config.LeaseTTL() != time.Second {
		t.Fatalf("LeaseTTL() = %v", g.Config.LeaseTTL())
	}
	// gatewaytest runs the service's jobs, the lease sweep among them,
	// as serve does.
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)
	late := make(chan *gatewaytest.Response, 1)
	go func() {
		rs, err := w.send(req{method: http.MethodPost, path: "/v8/praxec/command", body: deployStart("run-swept"), token: tok})
		if err != nil {
			rs = &gatewaytest.Response{Status: 599, Body: []byte(err.Error())}
		}
		late <- rs
	}()
	waitCalls(t, api.calls("/deploy"), 1, hold)
	gatewaytest.Poll(10*time.Second, func() bool { return g.Service.LeasesSwept() != 0 })
	if g.Service.LeasesSwept() != 1 {
		close(hold)
		t.Fatalf("the sweeper resolved %d leases, want 1", g.Service.LeasesSwept())
	}
	var l store.StartLease
	err := g.DB.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		l, err = tx.GetStartLease(ctx, tenantA, "run:run-swept")
		return err
	})
	if err != nil || l.Status != http.StatusGatewayTimeout || l.Owner != "" {
		t.Errorf("start lease after the sweep: %+v, %v", l, err)
	}
	wantLateOutcomeUnknown(t, hold, late, "the stuck start")
	wantProblem(t, w.command(t, tok, deployStart("run-swept")), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	if c := api.calls("/deploy").Load(); c != 1 {
		t.Errorf("the upstream was called %d times, want 1", c)
	}
}

// pendingRelease starts the release workflow and asks for its release:
// the approval id.
func pendingRelease(t *testing.T, w *gw, tok string) (string, string) {
	t.Helper()
	res := w.command(t, tok, map[string]any{"definitionId": "release"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	body := res.Object(t)
	wf := str(t, body, "workflow.id")
	res = w.command(t, tok, map[string]any{"workflowId": wf, "expectedVersion": num(t, body, "workflow.version"), "transition": "release"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	return wf, str(t, res.Object(t), "approval.id")
}

func approve(w *gw, tok, id string) *gatewaytest.Response {
	rs, err := w.send(req{method: http.MethodPost, path: "/v8/approvals/" + id + "/approve", body: map[string]any{}, token: tok})
	if err != nil {
		return &gatewaytest.Response{Status: 599, Body: []byte(err.Error())}
	}
	return rs
}

// TestApprovalLease: approving a human step whose move calls outside
// takes the move lease of the version: two replicas approving at once
// call the upstream once; an approval whose gateway is stuck mid-call is
// answered, once its lease expires, with a recorded 504 (the approval is
// marked approved) and never calls again.
func TestApprovalLease(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti, hold, api, clk, g := heldStartGateway(t, dsn)
		r := g.Replica(t, nil)
		ws := []*gw{wrapGateway(g), wrapGateway(r)}
		tok := mint(t, ti, tenantA, userA)
		op := mint(t, ti, tenantA, operatorA, string(contracts.ScopeApprovalsWrite)) // nobody approves their own request

		_, id := pendingRelease(t, ws[0], tok)
		res := raceHeld(6, 1, ws, hold, func(w *gw) *gatewaytest.Response { return approve(w, op, id) })
		if ok := raceAnswers(t, res, http.StatusOK, contracts.CodeMissionStateConflict); ok != 1 {
			t.Errorf("%d approvals succeeded, want 1", ok)
		}
		if c := api.calls("/deploy").Load(); c != 1 {
			t.Fatalf("racing approvals called the upstream %d times, want 1", c)
		}

		// A stuck approval.
		wf, id := pendingRelease(t, ws[0], tok)
		late := make(chan *gatewaytest.Response, 1)
		go func() { late <- approve(ws[1], op, id) }()
		waitCalls(t, api.calls("/deploy"), 2, hold)
		wantProblem(t, approve(ws[0], op, id), http.StatusConflict, contracts.CodeIdempotencyInProgress)
		clk.Set(gateway.DefaultLeaseTTL + time.Minute)
		for range 2 {
			wantProblem(t, approve(ws[0], op, id), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
		}
		wantLateOutcomeUnknown(t, hold, late, "the stuck approval")
		if c := api.calls("/deploy").Load(); c != 2 {
			t.Errorf("the upstream was called %d times, want 2", c)
		}
		got := ws[0].query(t, tok, map[string]any{"workflowId": wf})
		gatewaytest.WantStatus(t, got, http.StatusOK)
		body := got.Object(t)
		if o := str(t, body, "context.lastRun.outcome"); o != "unknown" {
			t.Errorf("context.lastRun.outcome = %q", o)
		}
		if s := str(t, body, "result.status"); s == "pending_approval" {
			t.Errorf("the mission still waits for the approval whose move was attempted")
		}
		lr := ws[1].do(t, req{method: http.MethodGet, path: "/v8/approvals?status=approved", token: tok})
		gatewaytest.WantStatus(t, lr, http.StatusOK)
		if n := len(lr.Object(t)["approvals"].([]any)); n != 2 {
			t.Errorf("%d approved approvals, want 2: %s", n, lr.Body)
		}
	})
}

// refusedYAML adds a workflow whose start deploys at once: a
// deterministic first move that calls the upstream.
//
//go:embed testdata/start-refused.yaml
var refusedYAML string

// TestStartRefusedLeavesNoRun: a start whose first outside call the
// upstream refuses (nothing happened) releases its lease and deletes the
// run it stored with it, keyed or not: the runId reads as not found and
// starts again, calling again; a read while the call runs answers 409 in
// progress (issue 27 item 7).
func TestStartRefusedLeavesNoRun(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti := newIssuer(t)
		var calls atomic.Int32
		hold := make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			<-hold
			http.Error(w, `{"error":"refused"}`, http.StatusBadRequest)
		}))
		t.Cleanup(srv.Close)
		g := apiGateway(t, ti, "refused.yaml", leasesYAML+refusedYAML, srv.URL, dsn, nil, nil)
		w := wrapGateway(g)
		tok := mint(t, ti, tenantA, userA)
		start := map[string]any{"definitionId": "deploy_now", "runId": "run-refused", "idempotencyKey": newKey()}
		for i := range 2 {
			done := make(chan *gatewaytest.Response, 1)
			go func() {
				rs, err := w.send(req{method: http.MethodPost, path: "/v8/praxec/command", body: start, token: tok})
				if err != nil {
					rs = &gatewaytest.Response{Status: 599, Body: []byte(err.Error())}
				}
				done <- rs
			}()
			waitCalls(t, &calls, int32(i+1), hold)
			wantProblem(t, w.getMission(t, tok, "run-refused"), http.StatusConflict, contracts.CodeIdempotencyInProgress)
			hold <- struct{}{}
			wantProblem(t, <-done, http.StatusBadGateway, contracts.CodeUpstreamFailed)
			wantProblem(t, w.getMission(t, tok, "run-refused"), http.StatusNotFound, contracts.CodeNotFound)
			delete(start, "idempotencyKey") // then without a key
		}
		if c := calls.Load(); c != 2 {
			t.Errorf("the upstream was called %d times, want 2: a refused start runs again", c)
		}
	})
}
