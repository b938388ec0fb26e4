package e2e_test

// A start whose chain calls outside twice before it commits holds its
// start lease (gateway/leases_start.go) across both calls by renewing it
// before the second (renewStartLease): each call fits in the lease TTL,
// their sum does not. A replica sweeping during the second call finds the
// start lease live, and the start completes once; a start lease that did
// expire between the calls stops the start before the second call.

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// startRenewalYAML is a workflow whose start chains two deterministic
// outside calls, /one then /two, under a one-minute lease TTL.
const startRenewalYAML = `
server: {leaseTTL: 1m}
connections:
  api:
    kind: rest
    baseUrl: http://127.0.0.1:1
workflows:
  start_two_calls:
    version: 1
    title: Start with two calls
    initial: ready
    states:
      ready: {title: Ready}
      half: {title: Half done}
      done: {title: Done, terminal: true}
    transitions:
      - {name: first, title: First, from: ready, to: half, actor: deterministic,
         executor: {kind: rest, connection: api, method: POST, path: /one, timeoutMs: 5000}}
      - {name: second, title: Second, from: half, to: done, actor: deterministic,
         executor: {kind: rest, connection: api, method: POST, path: /two, timeoutMs: 5000}}
`

func TestStartLeaseRenewedAcrossCalls(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti, clk := newIssuer(t), &gatewaytest.Clock{}
		// Each call runs during runs (the test's clock moves and sweeps);
		// calls counts the calls of each path.
		var calls [2]atomic.Int32
		var during [2]func()
		api := jsonUpstream(t, func(w http.ResponseWriter, r *http.Request) bool {
			i := 0
			if r.URL.Path == "/two" {
				i = 1
			}
			calls[i].Add(1)
			if f := during[i]; f != nil {
				f()
			}
			return false
		})
		g := apiGateway(t, ti, "start-renewal.yaml", startRenewalYAML, api.URL, dsn, clk.Now, nil)
		other := g.Replica(t, nil)
		w := wrapGateway(g)
		tok := mint(t, ti, tenantA, userA)
		sweep := func() int {
			n, err := other.Service.SweepLeases(context.Background())
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			return n
		}
		start := func(runID string) *gatewaytest.Response {
			return w.command(t, tok, map[string]any{"definitionId": "start_two_calls", "runId": runID})
		}
		wantCalls := func(what string, one, two int32) {
			t.Helper()
			if c1, c2 := calls[0].Load(), calls[1].Load(); c1 != one || c2 != two {
				t.Fatalf("%s: calls %d and %d, want %d and %d", what, c1, c2, one, two)
			}
		}

		// Renewed before the second call: 80s in all, past the 1m TTL, each
		// call 40s; a sweep during the second call resolves nothing, and
		// the start completes with one call of each.
		var swept int
		during[0] = func() { clk.Advance(40 * time.Second) }
		during[1] = func() { clk.Advance(40 * time.Second); swept += sweep() }
		res := start("run-renewed")
		gatewaytest.WantStatus(t, res, http.StatusOK)
		if swept != 0 {
			t.Errorf("renewed start lease: %d leases swept during the second call, want 0", swept)
		}
		wantCalls("renewed start lease", 1, 1)
		if s := str(t, res.Object(t), "workflow.state"); s != "done" {
			t.Errorf("state %q, want done", s)
		}
		// Completed once: the runId is taken, a later sweep finds no lease,
		// and nothing calls again.
		clk.Advance(2 * time.Minute)
		if n := sweep(); n != 0 {
			t.Errorf("a sweep after the start resolved %d leases, want 0", n)
		}
		wantProblem(t, start("run-renewed"), http.StatusConflict, contracts.CodeRunIDAlreadyRunning)
		wantCalls("after the renewed start", 1, 1)

		// Expired before the second call (the first took longer than the
		// TTL, and another replica resolved the lease meanwhile): the start
		// stops before the second call and answers outcome-unknown.
		during[0] = func() { clk.Advance(2 * time.Minute); sweep() }
		during[1] = nil
		wantProblem(t, start("run-swept"), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
		wantCalls("swept start lease", 2, 1)

		// Expired between the calls, and nobody resolved it yet: the
		// renewal is refused all the same, the start stops, and its answer
		// says why.
		during[0] = func() { clk.Advance(2 * time.Minute) }
		p := wantProblem(t, start("run-expired"), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
		wantCalls("expired start lease", 3, 1)
		if !strings.Contains(p.Detail, "lease") {
			t.Errorf("the answer does not say the lease was lost: %q", p.Detail)
		}
	})
}
