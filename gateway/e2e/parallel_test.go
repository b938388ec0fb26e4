package e2e_test

// The parallel executor through the gateway (issue 14, item 6): one move
// lease for every branch, taken before any branch starts; a move whose
// branch failed after another acted answers outcome-unknown, recorded; a
// gateway that stops mid-move (its lease past its deadline) is resolved
// as outcome-unknown without any branch called again; every branch's
// attempts in lastRun and the audit event.

import (
	_ "embed"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

//go:embed testdata/parallel.yaml
var parallelYAML string

// newReleaseAPI is the REST upstream of parallel.yaml: a call to
// /announce waits on hold (when set), one to /changelog is refused with
// 400.
func newReleaseAPI(t *testing.T, hold chan struct{}) (*countingAPI, *httptest.Server) {
	a := &countingAPI{hold: map[string]chan struct{}{"/announce": hold}, refuse: map[string]string{"/changelog": `{"error":"no changelog"}`}}
	return a, a.serve(t)
}

func parallelGateway(t *testing.T, ti *gatewaytest.Issuer, api string, now func() time.Time) *gatewaytest.Gateway {
	t.Helper()
	return apiGateway(t, ti, "parallel.yaml", parallelYAML, api, "", now, nil)
}

// TestParallelMove: a parallel move's outputs and every branch's attempts
// are in lastRun and in the transition.fired audit event; a branch that
// fails after another acted makes the move outcome-unknown, recorded, so
// the exact retry calls nothing.
func TestParallelMove(t *testing.T) {
	ti := newIssuer(t)
	api, srv := newReleaseAPI(t, nil)
	g := parallelGateway(t, ti, srv.URL, nil)
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)

	_, submit := startRun(t, w, tok, "release")
	trace := newTraceID()
	res := w.do(t, req{method: http.MethodPost, path: "/v8/praxec/command", body: submit, token: tok, trace: trace})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	body := res.Object(t)
	for _, b := range []string{"tag", "announce"} {
		if st := num(t, body, "context.lastRun.output."+b+".status"); st != 200 {
			t.Errorf("branch %s status %d", b, st)
		}
	}
	attempts, _ := member(t, body, "context.lastRun.attempts").([]any)
	branches := map[string]bool{}
	for _, a := range attempts {
		branches[a.(map[string]any)["branch"].(string)] = true
	}
	if len(attempts) != 2 || !branches["tag"] || !branches["announce"] {
		t.Errorf("lastRun.attempts %v", attempts)
	}
	var audited bool
	for _, ev := range g.Events(t, tenantA, trace) {
		if list, _ := ev.Attributes["attempts"].([]any); ev.Type == "transition.fired" && len(list) == 2 {
			audited = true
		}
	}
	if !audited {
		t.Error("no transition.fired event lists both branches' attempts")
	}

	_, submit = startRun(t, w, tok, "release.broken")
	for range 2 {
		res = w.command(t, tok, submit)
		wantProblem(t, res, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	}
	if api.calls("/changelog").Load() != 1 {
		t.Errorf("the failed branch was called %d times, want 1", api.calls("/changelog").Load())
	}
}

// TestParallelStaleLease: a gateway stopped in the middle of a parallel
// move (one branch answered, one still running, its lease past its
// deadline) is resolved by the next request as outcome-unknown; no branch
// is called again, and the stopped gateway's late answer is the record's.
func TestParallelStaleLease(t *testing.T) {
	ti := newIssuer(t)
	hold := make(chan struct{})
	api, srv := newReleaseAPI(t, hold)
	clk := &gatewaytest.Clock{}
	g := parallelGateway(t, ti, srv.URL, clk.Now)
	w := wrapGateway(g)
	tok := mint(t, ti, tenantA, userA)
	wf, version, submit, late := stuckMove(t, g, api, hold, tok, "release", "/announce", "/tag")
	// One lease, on the version the move leaves, held for both branches.
	l, err := moveLease(g.DB, wf, version)
	if err != nil {
		close(hold)
		t.Fatalf("no lease while the branches run: %v", err)
	}
	if l.Transition != "release" {
		t.Errorf("lease %+v", l)
	}
	// Refused while the lease is live; past its deadline the lease's
	// gateway is taken for stopped.
	resolveStaleLease(t, w, clk, tok, submit)
	wantUnknownOutcome(t, w, tok, wf, 0)

	wantLateOutcomeUnknown(t, hold, late, "the stopped gateway")
	if a, b := api.calls("/tag").Load(), api.calls("/announce").Load(); a != 1 || b != 1 {
		t.Errorf("the branches were called %d and %d times, want once each", a, b)
	}
}
