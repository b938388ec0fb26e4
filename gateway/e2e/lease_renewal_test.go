package e2e_test

// A move whose chain calls outside twice holds its lease across both
// calls by renewing it before the second (gateway/leases.go): each call
// fits in the lease TTL, their sum does not. A replica sweeping during
// the second call finds the lease live; a lease that did expire between
// the calls (its holder too slow) stops the move before the second call.

import (
	"context"
	_ "embed"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

//go:embed testdata/lease-renewal.yaml
var renewalYAML string

func TestLeaseRenewedAcrossCalls(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti := newIssuer(t)
		clk := &gatewaytest.Clock{}
		// During each call the clock moves 40s: 80s in all, past the 1m
		// TTL, while each call stays within it. onTwo runs during the
		// second call.
		var one, two atomic.Int32
		var onTwo func()
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			clk.Advance(40 * time.Second)
			switch r.URL.Path {
			case "/one":
				one.Add(1)
			case "/two":
				two.Add(1)
				if onTwo != nil {
					onTwo()
				}
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"ok":true}`))
		}))
		t.Cleanup(api.Close)
		g := apiGateway(t, ti, "renewal.yaml", renewalYAML, api.URL, dsn, clk.Now, nil)
		other := g.Replica(t, nil)
		w := wrapGateway(g)
		tok := mint(t, ti, tenantA, userA)
		startAndFire := func() *gatewaytest.Response {
			res := w.command(t, tok, map[string]any{"definitionId": "two_calls"})
			gatewaytest.WantStatus(t, res, http.StatusOK)
			body := res.Object(t)
			return w.command(t, tok, map[string]any{"workflowId": str(t, body, "workflow.id"),
				"expectedVersion": num(t, body, "workflow.version"), "transition": "first"})
		}

		// Renewed before the second call: a sweep during it resolves
		// nothing, and the move completes with one call of each.
		var swept int
		onTwo = func() {
			n, err := other.Service.SweepLeases(context.Background())
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			swept += n
		}
		res := startAndFire()
		gatewaytest.WantStatus(t, res, http.StatusOK)
		if swept != 0 || one.Load() != 1 || two.Load() != 1 {
			t.Fatalf("renewed lease: %d leases swept during the second call, calls %d and %d, want 0, 1, 1", swept, one.Load(), two.Load())
		}
		if s := str(t, res.Object(t), "workflow.state"); s != "done" {
			t.Errorf("state %q, want done", s)
		}

		// Expired before the second call (the first took longer than the
		// TTL, and another replica resolved the lease meanwhile): the move
		// stops before the second call and answers outcome-unknown.
		onTwo = nil
		slowOne := func() {
			clk.Advance(2 * time.Minute)
			if _, err := other.Service.SweepLeases(context.Background()); err != nil {
				t.Errorf("sweep: %v", err)
			}
		}
		api.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/one":
				one.Add(1)
				slowOne()
			case "/two":
				two.Add(1)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"ok":true}`))
		})
		wantProblem(t, startAndFire(), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
		if one.Load() != 2 || two.Load() != 1 {
			t.Fatalf("lost lease: calls %d and %d, want 2 and 1 (no second call after the lease was lost)", one.Load(), two.Load())
		}

		// Expired between the calls, and nobody resolved it yet: the
		// renewal is refused all the same, the move stops, and its answer
		// says why.
		slowOne = func() { clk.Advance(2 * time.Minute) }
		p := wantProblem(t, startAndFire(), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
		if one.Load() != 3 || two.Load() != 1 {
			t.Fatalf("expired lease: calls %d and %d, want 3 and 1", one.Load(), two.Load())
		}
		if !strings.Contains(p.Detail, "lease") {
			t.Errorf("the answer does not say the lease was lost: %q", p.Detail)
		}
	})
}
