package e2e_test

// Move leases (issue 8, gateway/leases.go): a move that calls outside
// takes a store lease on its workflow version before the call, so two
// replicas never both call, a gateway that stops mid-call is resolved as
// outcome-unknown without calling again, and an outcome-unknown is
// recorded on the workflow so a keyless retry replays it.

import (
	_ "embed"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

//go:embed testdata/leases.yaml
var leasesYAML string

// newDeployAPI is the REST upstream of leases.yaml and
// start-leases.yaml: a call to /deploy waits on hold (when set), one to
// /slow outlasts its timeout.
func newDeployAPI(t *testing.T, hold chan struct{}) (*countingAPI, *httptest.Server) {
	a := &countingAPI{hold: map[string]chan struct{}{"/deploy": hold}, slow: map[string]time.Duration{"/slow": time.Second}}
	return a, a.serve(t)
}

func leasesGateway(t *testing.T, ti *gatewaytest.Issuer, api string, now func() time.Time) *gatewaytest.Gateway {
	t.Helper()
	return apiGateway(t, ti, "leases.yaml", leasesYAML, api, "", now, nil)
}

// startRun starts a proxy run with the status capability and returns the
// submit arguments of the capability named next.
func startRun(t *testing.T, w *gw, tok, next string) (string, map[string]any) {
	t.Helper()
	res := w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "status"}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	body := res.Object(t)
	l := findLink(t, linksOf(t, body), next)
	return str(t, body, "workflow.id"), l.Args
}

// TestLeaseReplicasCallOnce: the same external move sent to two replicas
// at once reaches the upstream once; the others answer 409 in progress
// (with Retry-After) or the recorded answer.
func TestLeaseReplicasCallOnce(t *testing.T) {
	ti := newIssuer(t)
	hold := make(chan struct{})
	api, srv := newDeployAPI(t, hold)
	g := leasesGateway(t, ti, srv.URL, nil)
	r := g.Replica(t, nil)
	ws := []*gw{wrapGateway(g), wrapGateway(r)}
	tok := mint(t, ti, tenantA, userA)
	_, submit := startRun(t, ws[0], tok, "deploy")

	res := raceHeld(6, 1, ws, hold, func(w *gw) *gatewaytest.Response { return w.command(t, tok, submit) })
	if ok := raceAnswers(t, res, http.StatusOK); ok == 0 {
		t.Errorf("no request moved the workflow")
	}
	if c := api.calls("/deploy").Load(); c != 1 {
		t.Fatalf("the upstream was called %d times, want 1", c)
	}
	// Retried on either replica, the move answers from the record.
	for _, w := range ws {
		gatewaytest.WantStatus(t, w.command(t, tok, submit), http.StatusOK)
	}
	if c := api.calls("/deploy").Load(); c != 1 {
		t.Errorf("after the retries the upstream was called %d times, want 1", c)
	}
}

// TestLeaseStaleResolvedWithoutCall: a gateway stuck mid-call (its lease
// past its deadline, as a gateway that crashed leaves it) is resolved by
// the next request as outcome-unknown, without calling; the stuck
// gateway's late answer does not overwrite the record.
func TestLeaseStaleResolvedWithoutCall(t *testing.T) {
	ti := newIssuer(t)
	hold := make(chan struct{})
	api, srv := newDeployAPI(t, hold)
	clk := &gatewaytest.Clock{}
	g := leasesGateway(t, ti, srv.URL, clk.Now)
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)
	wf, version, submit, late := stuckMove(t, g, api, hold, tok, "deploy", "/deploy")
	// The lease was taken before the call.
	l, err := moveLease(g.DB, wf, version)
	if err != nil {
		close(hold)
		t.Fatalf("no lease while the call runs: %v", err)
	}
	if l.Transition != "deploy" || l.Owner == "" || !l.Deadline.After(clk.Now()) {
		t.Errorf("lease %+v", l)
	}

	// While the lease is live another request is refused at once; past
	// its deadline the lease's gateway is taken for stopped.
	res := resolveStaleLease(t, w, clk, tok, submit)
	if c := api.calls("/deploy").Load(); c != 1 {
		t.Errorf("the upstream was called %d times, want 1", c)
	}
	links := linksOf(t, res.Object(t))
	findLink(t, links, "get")
	findLink(t, links, "deploy")

	wantUnknownOutcome(t, w, tok, wf, version)

	// The stuck gateway's call returns: its answer is the record's.
	wantLateOutcomeUnknown(t, hold, late, "the stuck gateway")
	if c := api.calls("/deploy").Load(); c != 1 {
		t.Errorf("the upstream was called %d times, want 1", c)
	}
}

// TestLeaseKeylessSubmitAfter504: a keyless praxec submit whose call
// timed out answers outcome-unknown and is recorded on the workflow: the
// exact retry replays the 504 and does not call again; the workflow shows
// the uncertainty and offers the next moves.
func TestLeaseKeylessSubmitAfter504(t *testing.T) {
	ti := newIssuer(t)
	api, srv := newDeployAPI(t, nil)
	w := wrapGateway(leasesGateway(t, ti, srv.URL, nil))
	tok := mint(t, ti, tenantA, userA)
	wf, submit := startRun(t, w, tok, "slow.deploy")
	version := num(t, map[string]any{"v": submit["expectedVersion"]}, "v")

	res := w.command(t, tok, submit)
	wantProblem(t, res, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	for range 2 {
		res = w.command(t, tok, submit)
		wantProblem(t, res, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	}
	if c := api.calls("/slow").Load(); c != 1 {
		t.Errorf("the upstream was called %d times, want 1", c)
	}
	links := linksOf(t, res.Object(t))
	findLink(t, links, "get")
	next := findLink(t, links, "slow.deploy")
	if v := num(t, map[string]any{"v": next.Args["expectedVersion"]}, "v"); v != version+1 {
		t.Errorf("next move at version %d, want %d", v, version+1)
	}
	wantUnknownOutcome(t, w, tok, wf, 0)
}
