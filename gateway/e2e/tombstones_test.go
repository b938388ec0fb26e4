package e2e_test

// Tombstones of expired idempotency keys (issue 27 item 6,
// gateway/idempotency.go): past server.idempotency.retention a key no
// longer replays, but the same request with it is refused with 409
// idempotency-key-expired, linking what the first request created,
// instead of acting a second time, until the tombstone window ends.

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// TestLateRetryRefused: a start sent again with its key after the
// retention (3s here, as the attacker's test had it) answers 409
// idempotency-key-expired linking the mission it created, on the aura
// and the praxec surface, before and after the sweeper dropped the
// answer, and never calls the upstream again; another request with the
// key is still idempotency-key-reused. Past the tombstone window the
// sweeper forgets the key and it is a new request.
func TestLateRetryRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		const retention, window = 3 * time.Second, 10 * time.Minute // window: within the tokens' hour
		ti := newIssuer(t)
		api, srv := newDeployAPI(t, nil)
		clk := &gatewaytest.Clock{}
		g := startLeasesGateway(t, ti, srv.URL, dsn, clk.Now, func(cfg *config.Config) {
			cfg.Server.Idempotency.Retention = config.Duration(retention)
			cfg.Server.Idempotency.TombstoneRetention = config.Duration(window)
		})
		w := wrapGateway(g)
		tok := mint(t, ti, tenantA, userA)

		createKey, startKey := newKey(), newKey()
		create := func() *gatewaytest.Response {
			return w.createMission(t, tok, createKey, deployStart(""))
		}
		startArgs := deployStart("")
		delete(startArgs, "goal")
		startArgs["idempotencyKey"] = startKey
		start := func() *gatewaytest.Response { return w.command(t, tok, startArgs) }

		created := create()
		gatewaytest.WantStatus(t, created, http.StatusCreated)
		runID := str(t, created.Object(t), "runId")
		started := start()
		gatewaytest.WantStatus(t, started, http.StatusOK)
		workflowID := str(t, started.Object(t), "workflow.id")
		if c := api.calls("/deploy").Load(); c != 2 {
			t.Fatalf("the upstream was called %d times, want 2", c)
		}

		// The late retries, with the record expired but not swept, then
		// swept (its answer dropped).
		lateRetries := func(when string) {
			t.Helper()
			p := wantProblem(t, create(), http.StatusConflict, contracts.CodeIdempotencyKeyExpired)
			if p.Retryable || len(p.Links) != 1 || p.Links[0].Method != contracts.ToolGetMission || p.Links[0].Args["runId"] != runID {
				t.Errorf("%s: aura late retry: %+v, want one link to aura_get_mission %s", when, p, runID)
			}
			mission := w.do(t, req{method: http.MethodGet, path: "/v8/missions/" + runID, token: tok})
			gatewaytest.WantStatus(t, mission, http.StatusOK)

			p = wantProblem(t, start(), http.StatusConflict, contracts.CodeIdempotencyKeyExpired)
			if len(p.Links) != 1 || p.Links[0].Method != contracts.ToolPraxecQuery || p.Links[0].Args["workflowId"] != workflowID {
				t.Errorf("%s: praxec late retry: %+v, want one link to praxec.query get %s", when, p, workflowID)
			}
			gatewaytest.WantStatus(t, w.query(t, tok, p.Links[0].Args), http.StatusOK)

			// Another request under the key is a reuse, as before expiry,
			// and links the mission too.
			other := deployStart("")
			other["goal"] = "deploy the other service"
			p = wantProblem(t, w.createMission(t, tok, createKey, other), http.StatusUnprocessableEntity, contracts.CodeIdempotencyKeyReused)
			if len(p.Links) != 2 || p.Links[0].Args["runId"] != runID || p.Links[1].Rel != "retry_with_key" {
				t.Errorf("%s: reuse of an expired key: %+v", when, p.Links)
			}
			if c := api.calls("/deploy").Load(); c != 2 {
				t.Fatalf("%s: the upstream was called %d times, want 2", when, c)
			}
		}
		clk.Set(retention + time.Second)
		lateRetries("expired")
		if n, err := g.DB.SweepIdempotency(context.Background(), clk.Now()); err != nil || n < 2 {
			t.Fatalf("SweepIdempotency = %d, %v; want the two records turned into tombstones", n, err)
		}
		lateRetries("swept")

		// Past the window the key is forgotten.
		clk.Set(window + time.Minute)
		if n, err := g.DB.SweepIdempotency(context.Background(), clk.Now()); err != nil || n < 2 {
			t.Fatalf("SweepIdempotency past the window = %d, %v; want the two tombstones deleted", n, err)
		}
		again := create()
		gatewaytest.WantStatus(t, again, http.StatusCreated)
		if str(t, again.Object(t), "runId") == runID {
			t.Errorf("past the tombstone window the key replayed %s", runID)
		}
		if c := api.calls("/deploy").Load(); c != 3 {
			t.Errorf("the upstream was called %d times, want 3", c)
		}
	})
}
