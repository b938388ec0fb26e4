package e2e_test

// The workflow executor that waits (gateway/waits.go): a move whose
// sub-workflow waits for a move parks; the child is moved by calls of its
// own and its final move resumes the parent in the same transaction; a
// timeout fails the move and cancels the child; cancelling the parent
// cancels the child; the parked state survives a restart.

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
)

//go:embed testdata/wait.yaml
var waitYAML string

// waitGateway serves waitYAML on the clock now, on the SQLite file
// dbPath ("" for a new one) or the PostgreSQL schema dsn.
func waitGateway(t *testing.T, ti *gatewaytest.Issuer, now func() time.Time, dsn, dbPath string) *gatewaytest.Gateway {
	t.Helper()
	return gatewaytest.New(t, &gatewaytest.Options{
		Issuer:   ti,
		Now:      now,
		StoreDSN: dsn,
		DBPath:   dbPath,
		Config:   func() (*config.Config, error) { return config.Parse("wait.yaml", []byte(waitYAML)) },
		Edit:     func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
}

// startAndFire starts a run of definition and fires transition (with
// arguments when not nil) at the version it started at; it returns the
// answer to the move.
func startAndFire(t *testing.T, w *gw, tok, definition, transition string, arguments map[string]any) map[string]any {
	t.Helper()
	res := w.command(t, tok, map[string]any{"definitionId": definition})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	start := res.Object(t)
	move := map[string]any{"workflowId": str(t, start, "workflow.id"), "expectedVersion": num(t, start, "workflow.version"), "transition": transition}
	if arguments != nil {
		move["arguments"] = arguments
	}
	res = w.command(t, tok, move)
	gatewaytest.WantStatus(t, res, http.StatusOK)
	return res.Object(t)
}

// parkRelease starts a release and fires review, which parks on a review
// sub-workflow; it returns the release's answer to review.
func parkRelease(t *testing.T, w *gw, tok string) map[string]any {
	t.Helper()
	parked := startAndFire(t, w, tok, "release", "review", map[string]any{"ticket": "T-7"})
	if s := str(t, parked, "workflow.state"); s != "draft" {
		t.Fatalf("parked release in state %s, want draft (the move waits)", s)
	}
	if str(t, parked, "waiting.transition") != "review" || str(t, parked, "waiting.definitionId") != "review" ||
		str(t, parked, "waiting.childWorkflowId") == "" || str(t, parked, "waiting.deadline") == "" {
		t.Fatalf("parked release: waiting = %v", parked["waiting"])
	}
	if l := findLink(t, linksOf(t, parked), "child"); l.Args["workflowId"] != str(t, parked, "waiting.childWorkflowId") {
		t.Fatalf("child link %v", l)
	}
	return parked
}

// moveChild approves the review sub-workflow by a call of its own.
func moveChild(t *testing.T, w *gw, tok, childID string) {
	t.Helper()
	child := getRun(t, w, tok, childID)
	if s := str(t, child, "workflow.state"); s != "open" {
		t.Fatalf("child in state %s, want open", s)
	}
	res := w.command(t, tok, map[string]any{"workflowId": childID, "expectedVersion": num(t, child, "workflow.version"),
		"transition": "approve", "arguments": map[string]any{"verdict": "lgtm"}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
}

// waitDeadline reads the stored wait deadline of a mission.
func waitDeadline(t *testing.T, db store.Store, id string) time.Time {
	t.Helper()
	var m store.Mission
	if err := db.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		m, err = tx.GetMission(ctx, tenantA, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return m.WaitDeadline
}

func TestWorkflowExecutorWaits(t *testing.T) {
	eachStore(t, testWorkflowExecutorWaits)
}

func testWorkflowExecutorWaits(t *testing.T, dsn string) {
	ti := newIssuer(t)
	g := waitGateway(t, ti, nil, dsn, "")
	w := wrapGateway(g)
	tok := dayToken(t, ti)

	parked := parkRelease(t, w, tok)
	id, childID := str(t, parked, "workflow.id"), str(t, parked, "waiting.childWorkflowId")
	// While parked, no move of the parent is legal, and it holds no lease.
	res := w.command(t, tok, map[string]any{"workflowId": id, "expectedVersion": num(t, parked, "workflow.version"), "transition": "ship"})
	wantProblem(t, res, http.StatusConflict, contracts.CodeInvalidTransition)
	if _, err := moveLease(g.DB, id, num(t, parked, "workflow.version")); err == nil {
		t.Fatal("the parked parent holds a move lease")
	}

	// The child is moved by a call of its own, on another replica.
	moveChild(t, wrapGateway(g.Replica(t, nil)), tok, childID)
	got := getRun(t, w, tok, id)
	if s := str(t, got, "workflow.state"); s != "reviewed" {
		t.Fatalf("after the child ended the release is in %s, want reviewed", s)
	}
	if v := str(t, got, "context.verdict"); v != "lgtm" {
		t.Fatalf("release context.verdict = %q, want the child's lgtm", v)
	}
	if got["waiting"] != nil {
		t.Fatalf("resumed release still waiting: %v", got["waiting"])
	}
	if !waitDeadline(t, g.DB, id).IsZero() {
		t.Fatal("the resumed release keeps a wait deadline")
	}
	findLink(t, linksOf(t, got), "ship")
	types := eventTypes(t, g, id)
	for _, want := range []string{"workflow.parked", "workflow.resumed", "transition.fired"} {
		if dsn == "" && !slices.Contains(types, want) {
			t.Errorf("events of the release %v lack %s", types, want)
		}
	}
}

func TestWorkflowExecutorWaitTimesOut(t *testing.T) {
	eachStore(t, testWorkflowExecutorWaitTimesOut)
}

func testWorkflowExecutorWaitTimesOut(t *testing.T, dsn string) {
	ti := newIssuer(t)
	clk := &gatewaytest.Clock{}
	g := waitGateway(t, ti, clk.Now, dsn, "")
	w := wrapGateway(g)
	tok := dayToken(t, ti)
	ctx := context.Background()

	parked := parkRelease(t, w, tok)
	id, childID := str(t, parked, "workflow.id"), str(t, parked, "waiting.childWorkflowId")
	if n, err := g.Service.SweepWaits(ctx); err != nil || n != 0 {
		t.Fatalf("sweep before the deadline: %d, %v", n, err)
	}
	clk.Set(2 * time.Minute)
	if n, err := g.Service.SweepWaits(ctx); err != nil || n != 1 {
		t.Fatalf("sweep past the deadline: %d, %v; want 1", n, err)
	}
	if n, err := g.Service.SweepWaits(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep: %d, %v; want 0", n, err)
	}
	got := getRun(t, w, tok, id)
	if str(t, got, "workflow.state") != "draft" || got["waiting"] != nil || num(t, got, "workflow.version") != num(t, parked, "workflow.version")+1 {
		t.Fatalf("timed out release: %v", got)
	}
	findLink(t, linksOf(t, got), "review") // the move can be tried again
	if member(t, got, "context.waitFailed.timedOut") != true || str(t, got, "context.waitFailed.childId") != childID ||
		!strings.Contains(str(t, got, "context.waitFailed.reason"), "timeoutMs 60000") {
		t.Fatalf("the timed out release does not say so: %v", got["context"])
	}
	if s := str(t, getRun(t, w, tok, childID), "workflow.state"); s != "cancelled" {
		t.Fatalf("child after the timeout in %s, want cancelled", s)
	}
	types := eventTypes(t, g, id)
	for _, want := range []string{"workflow.parked", "workflow.wait.timedout", "workflow.wait.cascade_cancelled"} {
		if dsn == "" && !slices.Contains(types, want) {
			t.Errorf("events of the release %v lack %s", types, want)
		}
	}
}

// TestWorkflowExecutorWaitOnceAcrossReplicas: two replicas sweep the
// same expired wait at once; it is ended once.
func TestWorkflowExecutorWaitOnceAcrossReplicas(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti := newIssuer(t)
		clk := &gatewaytest.Clock{}
		g := waitGateway(t, ti, clk.Now, dsn, "")
		r := g.Replica(t, nil)
		tok := dayToken(t, ti)
		for range 3 {
			parkRelease(t, wrapGateway(g), tok)
		}
		clk.Set(2 * time.Minute)
		var wg sync.WaitGroup
		var total atomic.Int64
		for _, s := range []*gateway.Service{g.Service, r.Service} {
			wg.Go(func() {
				n, err := s.SweepWaits(context.Background())
				if err != nil {
					t.Errorf("SweepWaits: %v", err)
				}
				total.Add(int64(n))
			})
		}
		wg.Wait()
		if total.Load() != 3 {
			t.Fatalf("the replicas ended %d waits, want 3", total.Load())
		}
	})
}

// notifyAPI is the upstream of release_out's reviewed.onEnter: it counts
// the calls of /notify, each held on hold when set.
type notifyAPI struct {
	calls atomic.Int32
	hold  chan struct{}
}

func newNotifyAPI(t *testing.T, hold chan struct{}) (*notifyAPI, string) {
	a := &notifyAPI{hold: hold}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/notify" {
			a.calls.Add(1)
			if a.hold != nil {
				<-a.hold
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"notified":true}`))
	}))
	t.Cleanup(srv.Close)
	return a, srv.URL
}

// parkReleaseOut starts a release_out and fires review, which parks; it
// returns the release's id and its child's.
func parkReleaseOut(t *testing.T, w *gw, tok string) (string, string) {
	t.Helper()
	parked := startAndFire(t, w, tok, "release_out", "review", nil)
	return str(t, parked, "workflow.id"), str(t, parked, "waiting.childWorkflowId")
}

// eventually polls cond until it holds, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	gatewaytest.Eventually(t, what, 10*time.Second, cond)
}

// TestWorkflowExecutorResumeCallsOut: a parent whose move, once resumed,
// enters a state that calls a connection resumes outside the child's
// transaction, under a move lease: the child's final move commits and
// marks the parent due; the resume then calls the connection once and
// completes the move; nothing is left leased.
func TestWorkflowExecutorResumeCallsOut(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti := newIssuer(t)
		api, url := newNotifyAPI(t, nil)
		g := apiGateway(t, ti, "wait.yaml", waitYAML, url, dsn, nil, nil)
		w := wrapGateway(g)
		tok := dayToken(t, ti)
		id, childID := parkReleaseOut(t, w, tok)
		moveChild(t, w, tok, childID)
		var got map[string]any
		eventually(t, "the release resumes after its child ended", func() bool {
			got = getRun(t, w, tok, id)
			return str(t, got, "workflow.state") == "reviewed"
		})
		if got["waiting"] != nil || member(t, got, "context.body.notified") != true {
			t.Fatalf("resumed release: %v", got)
		}
		if n := api.calls.Load(); n != 1 {
			t.Fatalf("the continuation called the upstream %d times, want 1", n)
		}
		if !waitDeadline(t, g.DB, id).IsZero() {
			t.Fatal("the resumed release keeps a wait deadline")
		}
		if n, err := g.Service.SweepWaits(context.Background()); err != nil || n != 0 {
			t.Fatalf("a sweep after the resume: %d, %v; want 0", n, err)
		}
		if _, err := moveLease(g.DB, id, num(t, got, "workflow.version")-1); err == nil {
			t.Fatal("the resume left its move lease")
		}
		findLink(t, linksOf(t, got), "ship")
		types := eventTypes(t, g, id)
		for _, want := range []string{"workflow.parked", "workflow.resume.due", "workflow.resumed", "transition.fired"} {
			if dsn == "" && !slices.Contains(types, want) {
				t.Errorf("events of the release %v lack %s", types, want)
			}
		}
	})
}

// TestWorkflowExecutorResumeStoppedMidCall: the gateway resuming a parked
// move stops between the continuation's call and its commit (a replica
// stuck on the upstream, its lease left to expire, as a crash leaves it).
// While its lease is live nothing else resumes or moves the parent; past
// its deadline the wait sweeper of another replica records
// outcome-unknown and ends the wait without calling again; the stuck
// gateway's late answer changes nothing. The upstream is called once.
func TestWorkflowExecutorResumeStoppedMidCall(t *testing.T) {
	ti := newIssuer(t)
	hold := make(chan struct{})
	api, url := newNotifyAPI(t, hold)
	clk := &gatewaytest.Clock{}
	g := apiGateway(t, ti, "wait.yaml", waitYAML, url, "", clk.Now, nil)
	stuck := g.Replica(t, nil)
	w := wrapGateway(g)
	tok := dayToken(t, ti)
	ctx := context.Background()
	id, childID := parkReleaseOut(t, w, tok)
	// The child's final move goes to the replica that gets stuck: its
	// resume calls the upstream and never hears back.
	moveChild(t, wrapGateway(stuck), tok, childID)
	eventually(t, "the resume reaches the upstream", func() bool { return api.calls.Load() == 1 })
	due := getRun(t, w, tok, id)
	version := num(t, due, "workflow.version")
	if str(t, due, "workflow.state") != "draft" || str(t, due, "waiting.resumeAt") == "" {
		close(hold)
		t.Fatalf("the release while its resume calls out: %v", due)
	}
	if l, err := moveLease(g.DB, id, version); err != nil || l.Transition != "review" || l.Fingerprint != "resume:"+childID {
		close(hold)
		t.Fatalf("the resume's lease: %+v, %v", l, err)
	}
	// While the lease is live: no second resume, no move.
	if n, err := g.Service.SweepWaits(ctx); err != nil || n != 0 {
		close(hold)
		t.Fatalf("a sweep while the resume runs: %d, %v; want 0", n, err)
	}
	wantProblem(t, w.cancelMission(t, tok, newKey(), id, nil), http.StatusConflict, contracts.CodeIdempotencyInProgress)

	// Past the lease's deadline the stuck gateway is taken for stopped.
	clk.Set(gateway.DefaultLeaseTTL + time.Minute)
	if n, err := g.Service.SweepWaits(ctx); err != nil || n != 0 {
		close(hold)
		t.Fatalf("the sweep that resolves the lease: %d, %v; want 0 (it records, it does not resume)", n, err)
	}
	got := getRun(t, w, tok, id)
	if str(t, got, "workflow.state") != "draft" || got["waiting"] != nil || num(t, got, "workflow.version") != version+1 ||
		str(t, got, "context.lastRun.outcome") != "unknown" {
		close(hold)
		t.Fatalf("the release after its resume's lease expired: %v", got)
	}
	if n, err := g.Service.SweepWaits(ctx); err != nil || n != 0 {
		close(hold)
		t.Fatalf("a later sweep: %d, %v; want 0", n, err)
	}
	close(hold)
	stuck.Close() // waits for its resume to end
	if n := api.calls.Load(); n != 1 {
		t.Fatalf("the upstream was called %d times, want 1", n)
	}
	if after := getRun(t, w, tok, id); num(t, after, "workflow.version") != version+1 || after["waiting"] != nil ||
		str(t, after, "workflow.state") != "draft" {
		t.Fatalf("the stuck gateway's late answer changed the release: %v", after)
	}
	findLink(t, linksOf(t, got), "review") // the move can be taken again
}

func TestWorkflowExecutorCancelCascades(t *testing.T) {
	ti := newIssuer(t)
	g := waitGateway(t, ti, nil, "", "")
	w := wrapGateway(g)
	tok := dayToken(t, ti)

	parked := parkRelease(t, w, tok)
	childID := str(t, parked, "waiting.childWorkflowId")
	// The aura surface reads the parked mission too, with its child.
	runID := str(t, getRun(t, w, tok, str(t, parked, "workflow.id")), "workflow.id")
	m := w.getMission(t, tok, runID)
	gatewaytest.WantStatus(t, m, http.StatusOK)
	body := m.Object(t)
	if str(t, body, "waiting.childRunId") == "" {
		t.Fatalf("GET /v8/missions: waiting = %v", body["waiting"])
	}
	findLink(t, linksOf(t, body), "child")
	// And the MCP mission read.
	ctx := context.Background()
	cs := gatewaytest.MCPSession(t, g.URL+"/mcp", tok)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolGetMission, Arguments: map[string]any{"runId": runID}})
	if err != nil || res.IsError {
		t.Fatalf("aura_get_mission over MCP: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var read struct {
		Waiting struct {
			ChildRunID string `json:"childRunId"`
		} `json:"waiting"`
	}
	if err := json.Unmarshal(raw, &read); err != nil || read.Waiting.ChildRunID != str(t, body, "waiting.childRunId") {
		t.Fatalf("aura_get_mission over MCP: %s", raw)
	}
	gatewaytest.WantStatus(t, w.cancelMission(t, tok, newKey(), runID, map[string]any{"reason": "no longer needed"}), http.StatusOK)
	if s := str(t, getRun(t, w, tok, childID), "workflow.state"); s != "cancelled" {
		t.Fatalf("child after the parent's cancel in %s, want cancelled", s)
	}
	if s := str(t, getRun(t, w, tok, runID), "workflow.state"); s != "cancelled" {
		t.Fatalf("parent after its cancel in %s", s)
	}

	// Cancelling the child instead fails the parent's move: the parent
	// is back where it was, its move can be tried again.
	parked = parkRelease(t, w, tok)
	id := str(t, parked, "workflow.id")
	gatewaytest.WantStatus(t, w.cancelMission(t, tok, newKey(), str(t, parked, "waiting.childRunId"), nil), http.StatusOK)
	got := getRun(t, w, tok, id)
	if str(t, got, "workflow.state") != "draft" || got["waiting"] != nil {
		t.Fatalf("parent after its child's cancel: %v", got)
	}
	findLink(t, linksOf(t, got), "review")
	if types := eventTypes(t, g, id); !slices.Contains(types, "workflow.wait.failed") {
		t.Errorf("events of the parent %v lack workflow.wait.failed", types)
	}
}

func TestWorkflowExecutorWaitSurvivesRestart(t *testing.T) {
	ti := newIssuer(t)
	g := waitGateway(t, ti, nil, "", "")
	tok := dayToken(t, ti)
	parked := parkRelease(t, wrapGateway(g), tok)
	id, childID := str(t, parked, "workflow.id"), str(t, parked, "waiting.childWorkflowId")
	path := g.DBPath
	g.Close()

	g = waitGateway(t, ti, nil, "", path)
	w := wrapGateway(g)
	got := getRun(t, w, tok, id)
	if str(t, got, "waiting.childWorkflowId") != childID {
		t.Fatalf("after the restart: waiting = %v", got["waiting"])
	}
	// The child is moved on the aura surface this time.
	child := getRun(t, w, tok, childID)
	gatewaytest.WantStatus(t, w.signal(t, tok, newKey(), childID, map[string]any{"signal": "approve", "expectedVersion": num(t, child, "workflow.version"),
		"arguments": map[string]any{"verdict": "lgtm"}}), http.StatusOK)
	if got := getRun(t, w, tok, id); str(t, got, "workflow.state") != "reviewed" || str(t, got, "context.verdict") != "lgtm" {
		t.Fatalf("after the restart the release did not resume: %v", got)
	}
}

// eventTypes lists the types of the stored audit events of a workflow,
// read from the SQLite file (nil on PostgreSQL).
func eventTypes(t *testing.T, g *gatewaytest.Gateway, workflowID string) []string {
	t.Helper()
	if g.DBPath == "" || g.Store == nil {
		return nil
	}
	g.Flush(t)
	db, err := sql.Open("sqlite", "file:"+g.DBPath+"?_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type FROM events WHERE workflow_id = ? ORDER BY at, seq`, workflowID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var types []string
	for rows.Next() {
		var typ string
		if err := rows.Scan(&typ); err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return types
}

// TestWorkflowExecutorWaitNested: a child parked on a grandchild parks
// its parent too; the grandchild's final move resumes both, in its own
// transaction; cancelling the top cancels down the line.
func TestWorkflowExecutorWaitNested(t *testing.T) {
	ti := newIssuer(t)
	g := waitGateway(t, ti, nil, "", "")
	w := wrapGateway(g)
	tok := dayToken(t, ti)
	park := func() (outer, middle, review string) {
		body := startAndFire(t, w, tok, "outer", "go", nil)
		middle = str(t, body, "waiting.childWorkflowId")
		m := getRun(t, w, tok, middle)
		if str(t, m, "workflow.state") != "m0" || str(t, m, "waiting.transition") != "auto" {
			t.Fatalf("middle: %v", m)
		}
		return str(t, body, "workflow.id"), middle, str(t, m, "waiting.childWorkflowId")
	}
	outer, middle, review := park()
	moveChild(t, w, tok, review)
	if m := getRun(t, w, tok, middle); str(t, m, "workflow.state") != "m1" || str(t, m, "context.verdict") != "lgtm" {
		t.Fatalf("middle after the review: %v", m)
	}
	if o := getRun(t, w, tok, outer); str(t, o, "workflow.state") != "s1" || str(t, o, "context.verdict") != "lgtm" {
		t.Fatalf("outer after the review: %v", o)
	}

	outer, middle, review = park()
	gatewaytest.WantStatus(t, w.cancelMission(t, tok, newKey(), outer, nil), http.StatusOK)
	for _, id := range []string{middle, review} {
		if s := str(t, getRun(t, w, tok, id), "workflow.state"); s != "cancelled" {
			t.Errorf("%s after the top's cancel: %s, want cancelled", id, s)
		}
	}
}

// TestWorkflowExecutorWaitProxyRun: a capability whose executor is a
// workflow parks the proxy_default run's first move; the child's end
// completes it, recorded in lastRun like any move.
func TestWorkflowExecutorWaitProxyRun(t *testing.T) {
	ti := newIssuer(t)
	g := waitGateway(t, ti, nil, "", "")
	w := wrapGateway(g)
	tok := dayToken(t, ti)
	res := w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "reviewed_note"}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	run := res.Object(t)
	id, childID := str(t, run, "workflow.id"), str(t, run, "waiting.childWorkflowId")
	if childID == "" || str(t, run, "waiting.transition") != "reviewed_note" {
		t.Fatalf("the run's first move did not park: %v", run)
	}
	moveChild(t, w, tok, childID)
	got := getRun(t, w, tok, id)
	if got["waiting"] != nil || str(t, got, "context.lastRun.capability") != "reviewed_note" ||
		str(t, got, "context.lastRun.output.verdict") != "lgtm" {
		t.Fatalf("the run after the review: %v", got)
	}
}

// TestWorkflowExecutorOnEnterWaits: a state's onEnter workflow executor
// whose child waits for a move parks the instance in the entered state
// (the move that entered it, or the start); the child's end adds its
// context and the chain goes on; a timeout leaves the state entered and
// says so, and cancels the child.
func TestWorkflowExecutorOnEnterWaits(t *testing.T) {
	ti := newIssuer(t)
	clk := &gatewaytest.Clock{}
	g := waitGateway(t, ti, clk.Now, "", "")
	w := wrapGateway(g)
	tok := dayToken(t, ti)
	submit := func() map[string]any {
		parked := startAndFire(t, w, tok, "release_enter", "submit", map[string]any{"ticket": "T-9"})
		if str(t, parked, "workflow.state") != "reviewing" || str(t, parked, "waiting.state") != "reviewing" ||
			str(t, parked, "waiting.transition") != "submit" || str(t, parked, "waiting.deadline") == "" {
			t.Fatalf("the release after submit: %v", parked)
		}
		findLink(t, linksOf(t, parked), "child")
		return parked
	}
	parked := submit()
	id, childID := str(t, parked, "workflow.id"), str(t, parked, "waiting.childWorkflowId")
	res := w.command(t, tok, map[string]any{"workflowId": id, "expectedVersion": num(t, parked, "workflow.version"), "transition": "ship"})
	wantProblem(t, res, http.StatusConflict, contracts.CodeInvalidTransition)
	moveChild(t, w, tok, childID)
	got := getRun(t, w, tok, id)
	// The child's context (its ticket from its input) joins the release's.
	if str(t, got, "workflow.state") != "shipped" || str(t, got, "context.verdict") != "lgtm" || str(t, got, "context.ticket") != "T-9" || got["waiting"] != nil {
		t.Fatalf("the release after its onEnter's child ended: %v", got)
	}
	if types := eventTypes(t, g, id); !slices.Contains(types, "workflow.parked") || !slices.Contains(types, "workflow.resumed") {
		t.Errorf("events of the release %v", types)
	}

	// A start whose initial state's onEnter waits parks the start.
	res = w.command(t, tok, map[string]any{"definitionId": "review_first"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	first := res.Object(t)
	if str(t, first, "workflow.state") != "reviewing" || str(t, first, "waiting.state") != "reviewing" {
		t.Fatalf("review_first after its start: %v", first)
	}
	moveChild(t, w, tok, str(t, first, "waiting.childWorkflowId"))
	if got := getRun(t, w, tok, str(t, first, "workflow.id")); str(t, got, "workflow.state") != "done" || str(t, got, "context.verdict") != "lgtm" {
		t.Fatalf("review_first after its child ended: %v", got)
	}

	// timeoutMs: the state stays entered, without the onEnter's output.
	parked = submit()
	id, childID = str(t, parked, "workflow.id"), str(t, parked, "waiting.childWorkflowId")
	clk.Set(2 * time.Minute)
	if n, err := g.Service.SweepWaits(context.Background()); err != nil || n != 1 {
		t.Fatalf("sweep past the deadline: %d, %v; want 1", n, err)
	}
	got = getRun(t, w, tok, id)
	if str(t, got, "workflow.state") != "reviewing" || got["waiting"] != nil || str(t, got, "context.waitFailed.state") != "reviewing" ||
		!strings.Contains(str(t, got, "context.waitFailed.reason"), "onEnter of state reviewing failed") {
		t.Fatalf("the release after its onEnter's wait timed out: %v", got)
	}
	findLink(t, linksOf(t, got), "ship")
	if s := str(t, getRun(t, w, tok, childID), "workflow.state"); s != "cancelled" {
		t.Fatalf("child after the timeout in %s, want cancelled", s)
	}
}
