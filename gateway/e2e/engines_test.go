package e2e_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
)

// TestTwoEnginesOneFile runs two complete gateways (two services, two
// stores opened on the same SQLite file, two HTTP servers) as two replicas
// would, and races the same moves through both.
func TestTwoEnginesOneFile(t *testing.T) {
	ti := newIssuer(t)
	g1 := startGateway(t, ti, gwOptions{})
	g2 := startGateway(t, ti, gwOptions{dbPath: g1.dbPath})
	raceTwoEngines(t, ti, g1, g2)
}

// TestTwoEnginesOnePostgres runs the same races on two gateways sharing
// one PostgreSQL database (pgstore), as replicas behind a load balancer.
func TestTwoEnginesOnePostgres(t *testing.T) {
	dsn := pgtest.Schema(t)
	ti := newIssuer(t)
	g1 := startGateway(t, ti, gwOptions{storeDSN: dsn})
	g2 := startGateway(t, ti, gwOptions{storeDSN: dsn})
	raceTwoEngines(t, ti, g1, g2)
}

// raceTwoEngines races the same moves through two gateways on one store.
func raceTwoEngines(t *testing.T, ti *gatewaytest.Issuer, g1, g2 *gw) {
	engines := []*gw{g1, g2}
	tok := mint(t, ti, tenantA, userA)
	const racers = 20

	t.Run("praxec_submit_race", func(t *testing.T) {
		r := g1.command(t, tok, map[string]any{"definitionId": "deploy_pipeline"})
		gatewaytest.WantStatus(t, r, http.StatusOK)
		id := str(t, r.Object(t), "workflow.id")
		// Every racer sends the same submit, in one trace so the audit
		// events of all of them can be counted afterwards.
		trace := newTraceID()
		call := map[string]any{"workflowId": id, "expectedVersion": 1, "transition": "run_lint"}
		errs := make([]error, racers)
		answers := gatewaytest.Race(racers, func(i int) (a *gatewaytest.Response) {
			a, errs[i] = engines[i%2].send(req{method: http.MethodPost, path: "/v8/praxec/command", body: call, token: tok, trace: trace})
			return a
		})
		failOn(t, errs)

		var body []byte
		ok, conflicts := 0, 0
		for i, a := range answers {
			switch a.Status {
			case http.StatusOK:
				validateOutput(t, contracts.ToolPraxecCommand, a)
				ok++
				if body == nil {
					body = a.Body
				} else if !bytes.Equal(body, a.Body) {
					t.Errorf("racer %d (engine %d) answered 200 with another body:\n%s\nvs\n%s", i, i%2+1, a.Body, body)
				}
			case http.StatusConflict:
				wantProblem(t, a, http.StatusConflict, contracts.CodeVersionConflict)
				conflicts++
			default:
				t.Errorf("racer %d (engine %d): %d %s", i, i%2+1, a.Status, a.Body)
			}
		}
		t.Logf("%d racers: %d answered 200 (one fired, the rest exact replays), %d VERSION_CONFLICT", racers, ok, conflicts)
		if ok == 0 {
			t.Fatal("no racer succeeded")
		}
		// Exactly one transition fired: both engines read version 2...
		for i, g := range engines {
			r := g.query(t, tok, map[string]any{"workflowId": id})
			gatewaytest.WantStatus(t, r, http.StatusOK)
			if b := r.Object(t); num(t, b, "workflow.version") != 2 || str(t, b, "workflow.state") != "test" {
				t.Errorf("engine %d reads %v", i+1, b["workflow"])
			}
		}
		// ...and the trace holds one transition.fired.
		events := g2.traceEvents(t, tok, trace)
		if n := countEvents(events, "transition.fired"); n != 1 {
			t.Errorf("%d transition.fired events in the race's trace, want 1", n)
		}
	})

	t.Run("aura_signal_race_one_key", func(t *testing.T) {
		r := g1.createMission(t, tok, newKey(), map[string]any{"goal": "race", "definitionId": "guarded_merge"})
		gatewaytest.WantStatus(t, r, http.StatusCreated)
		cb := r.Object(t)
		lnk := findLink(t, linksOf(t, cb), "run_tests")
		trace := newTraceID()
		// The same link, followed verbatim (same key) through both engines.
		rq := (&agent{token: tok, trace: trace}).request(t, lnk, nil)
		errs := make([]error, racers)
		answers := gatewaytest.Race(racers, func(i int) (a *gatewaytest.Response) {
			a, errs[i] = engines[i%2].send(rq)
			return a
		})
		failOn(t, errs)
		var body []byte
		fresh, replayed, busy := 0, 0, 0
		for i, a := range answers {
			switch a.Status {
			case http.StatusOK:
				validateOutput(t, contracts.ToolSignalMission, a)
				if a.Header.Get("Idempotent-Replayed") == "true" {
					replayed++
				} else {
					fresh++
				}
				if body == nil {
					body = a.Body
				} else if !bytes.Equal(body, a.Body) {
					t.Errorf("racer %d answered another body", i)
				}
			case http.StatusConflict:
				// The key's first request is still running in this process.
				wantProblem(t, a, http.StatusConflict, contracts.CodeIdempotencyInProgress)
				busy++
			default:
				t.Errorf("racer %d (engine %d): %d %s", i, i%2+1, a.Status, a.Body)
			}
		}
		t.Logf("%d racers with one key: %d executed, %d replayed, %d in progress", racers, fresh, replayed, busy)
		if fresh != 1 {
			t.Errorf("%d racers executed the signal, want exactly 1", fresh)
		}
		if n := countEvents(g1.traceEvents(t, tok, trace), "transition.fired"); n != 1 {
			t.Errorf("%d transition.fired events, want 1", n)
		}
	})

	t.Run("started_on_one_driven_on_the_other", func(t *testing.T) {
		key := newKey()
		create := map[string]any{"goal": "cross", "definitionId": "deploy_pipeline"}
		r := g1.createMission(t, tok, key, create)
		gatewaytest.WantStatus(t, r, http.StatusCreated)
		runID := str(t, r.Object(t), "runId")
		// The key is in the shared store: the other engine replays it.
		again := g2.createMission(t, tok, key, create)
		gatewaytest.WantStatus(t, again, http.StatusCreated)
		wantReplay(t, "engine 1's create on engine 2", r, again)

		got := g2.getMission(t, tok, runID)
		gatewaytest.WantStatus(t, got, http.StatusOK)
		validateOutput(t, contracts.ToolGetMission, got)
		ag := &agent{g: g2, token: tok}
		s := ag.followOK(t, got.Object(t), "run_lint", nil)
		ag.followOK(t, s.Object(t), "cancel", nil)

		back := g1.getMission(t, tok, runID)
		gatewaytest.WantStatus(t, back, http.StatusOK)
		b := back.Object(t)
		if str(t, b, "workflow.state") != "cancelled" || num(t, b, "workflow.version") != 3 || str(t, b, "result.status") != "completed" {
			t.Errorf("engine 1 reads %s", back.Body)
		}
		if ev := strs(t, b, "evidence"); len(ev) != 1 || ev[0] != "lint_passed" {
			t.Errorf("evidence %v", ev)
		}
	})
}

// failOn fails the test on the first transport error of a race.
func failOn(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("racer %d: %v", i, err)
		}
	}
}
