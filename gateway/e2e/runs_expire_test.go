package e2e_test

// The run sweeper (gateway/runs_expire.go): a proxy_default run idle
// longer than proxy.runRetention moves to the terminal state expired, in
// a transaction of its own with a workflow.expired audit event; a run
// that moved since, or that holds a move lease, is left; afterwards the
// run answers as any ended workflow; replicas sweeping at once expire each
// run once.

import (
	"context"
	_ "embed"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store"
)

//go:embed testdata/runs-expire.yaml
var expireYAML string

// expireGateway serves expireYAML on a clock now, on SQLite, or on the
// PostgreSQL schema dsn when it is not empty; the api connection reaches
// api when it is not empty.
func expireGateway(t *testing.T, ti *gatewaytest.Issuer, now func() time.Time, dsn, api string) *gatewaytest.Gateway {
	t.Helper()
	return apiGateway(t, ti, "expire.yaml", expireYAML, api, dsn, now, nil)
}

// dayToken is a token of tenantA valid for a day: the tests move the
// gateway's clock hours ahead.
func dayToken(t *testing.T, ti *gatewaytest.Issuer) string {
	t.Helper()
	return ti.Token(t, resource, gatewaytest.TokenSpec{Tenant: tenantA, Subject: userA, TTL: 24 * time.Hour})
}

// startNote starts a proxy_default run with the note capability and
// returns its workflow id and version.
func startNote(t *testing.T, w *gw, tok string) (string, int64) {
	t.Helper()
	res := w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "note", "text": "hello"}})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	body := res.Object(t)
	return str(t, body, "workflow.id"), num(t, body, "workflow.version")
}

// getRun reads a run with praxec.query get.
func getRun(t *testing.T, w *gw, tok, id string) map[string]any {
	t.Helper()
	res := w.query(t, tok, map[string]any{"workflowId": id})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	return res.Object(t)
}

func TestIdleRunsExpire(t *testing.T) {
	eachStore(t, testIdleRunsExpire)
}

func testIdleRunsExpire(t *testing.T, dsn string) {
	ti := newIssuer(t)
	clk := &gatewaytest.Clock{}
	g := expireGateway(t, ti, clk.Now, dsn, "")
	w := wrapGateway(g)
	tok := dayToken(t, ti)
	ctx := context.Background()
	if got := g.Service.RunRetention(); got != time.Hour {
		t.Fatalf("RunRetention() = %v, want the configured 1h", got)
	}

	idle, idleVersion := startNote(t, w, tok)
	moved, movedVersion := startNote(t, w, tok)
	leased, leasedVersion := startNote(t, w, tok)
	// A run waiting for a person's approval.
	waiting, waitingVersion := startNote(t, w, tok)
	res := w.command(t, tok, map[string]any{"workflowId": waiting, "expectedVersion": waitingVersion, "transition": "release"})
	gatewaytest.WantStatus(t, res, http.StatusOK)
	if s := str(t, res.Object(t), "result.status"); s != "pending_approval" {
		t.Fatalf("release: %s, want pending_approval", s)
	}
	clk.Set(30 * time.Minute)
	gatewaytest.WantStatus(t, w.command(t, tok, map[string]any{"workflowId": moved, "expectedVersion": movedVersion, "transition": "note",
		"arguments": map[string]any{"text": "again"}}), http.StatusOK)
	// A call in flight on leased: its move lease, as another gateway
	// holds it, live for a day.
	lease := store.MoveLease{Tenant: tenantA, WorkflowID: leased, ExpectedVersion: leasedVersion, Transition: "note", Fingerprint: "fp",
		Owner: "gw_other/mv_1", CreatedAt: clk.Now(), Deadline: clk.Now().Add(24 * time.Hour)}
	if err := g.DB.Update(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertMoveLease(ctx, lease) }); err != nil {
		t.Fatal(err)
	}

	// Not idle for an hour yet: nothing expires.
	if n, err := g.Service.SweepIdleRuns(ctx); err != nil || n != 0 {
		t.Fatalf("sweep at 30m: %d, %v; want 0", n, err)
	}
	clk.Set(70 * time.Minute)
	if n, err := g.Service.SweepIdleRuns(ctx); err != nil || n != 1 {
		t.Fatalf("sweep at 70m: %d, %v; want 1 (the idle run; the moved one is idle 40m, the leased one has a call in flight, the waiting one an approval pending)", n, err)
	}

	// The expired run answers as an ended workflow.
	body := getRun(t, w, tok, idle)
	if str(t, body, "workflow.state") != "expired" || str(t, body, "result.status") != "completed" || len(linksOf(t, body)) != 0 {
		t.Errorf("the expired run: %v", body)
	}
	if v := num(t, body, "workflow.version"); v != idleVersion+1 {
		t.Errorf("the expired run's version is %d, want %d", v, idleVersion+1)
	}
	if str(t, body, "context.expired.retention") != "1h0m0s" {
		t.Errorf("context.expired = %v", member(t, body, "context.expired"))
	}
	traceID := str(t, body, "context.expired.traceId")
	wantProblem(t, w.command(t, tok, map[string]any{"workflowId": idle, "expectedVersion": idleVersion + 1, "transition": "note"}),
		http.StatusConflict, contracts.CodeInvalidTransition)
	wantProblem(t, w.command(t, tok, map[string]any{"workflowId": idle, "expectedVersion": idleVersion, "transition": "note"}),
		http.StatusConflict, contracts.CodeVersionConflict)
	// aura_get_trace shows the expiry, in the run's tenant.
	var expired *traceEvent
	evs := w.traceEvents(t, tok, traceID)
	for i := range evs {
		if evs[i].Type == "workflow.expired" {
			expired = &evs[i]
		}
	}
	if expired == nil || len(evs) != 1 || expired.WorkflowID != idle || expired.RunID != idle || expired.Outcome != "allowed" ||
		expired.Operation != "expireRuns" || expired.Attributes["from"] != "running" || expired.Attributes["retention"] != "1h0m0s" {
		t.Errorf("the trace of the expiry: %+v", evs)
	}
	for _, id := range []string{moved, leased, waiting} {
		if s := str(t, getRun(t, w, tok, id), "workflow.state"); s != "running" {
			t.Errorf("run %s is %s, want running", id, s)
		}
	}

	// The call in flight ends (its lease goes); 40 minutes later both
	// remaining runs are idle past the hour.
	if err := g.DB.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteMoveLease(ctx, tenantA, leased, leasedVersion, lease.Owner)
	}); err != nil {
		t.Fatal(err)
	}
	clk.Set(110 * time.Minute)
	if n, err := g.Service.SweepIdleRuns(ctx); err != nil || n != 2 {
		t.Fatalf("sweep at 110m: %d, %v; want 2 (the moved and the leased runs)", n, err)
	}
	if body := getRun(t, w, tok, waiting); str(t, body, "workflow.state") != "running" || str(t, body, "result.status") != "pending_approval" {
		t.Errorf("the run waiting for an approval: %v", body)
	}
	if n, err := g.Service.SweepIdleRuns(ctx); err != nil || n != 0 {
		t.Errorf("a second sweep: %d, %v; want 0", n, err)
	}
	if got := g.Service.RunsExpired(); got != 3 {
		t.Errorf("RunsExpired() = %d, want 3", got)
	}
	// A cancel of an expired run is refused as on any ended mission.
	wantProblem(t, w.cancelMission(t, tok, newKey(), moved, nil), http.StatusConflict, contracts.CodeMissionStateConflict)
}

// TestIdleRunsExpireOnceAcrossReplicas: two replicas on one store sweep
// the same idle runs at once; each run is expired exactly once, with one
// workflow.expired event.
func TestIdleRunsExpireOnceAcrossReplicas(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ti := newIssuer(t)
		clk := &gatewaytest.Clock{}
		g := expireGateway(t, ti, clk.Now, dsn, "")
		r := g.Replica(t, nil)
		w := wrapGateway(g)
		tok := dayToken(t, ti)
		const runs = 30
		ids := make([]string, runs)
		for i := range ids {
			ids[i], _ = startNote(t, w, tok)
		}
		clk.Set(2 * time.Hour)
		if total := sweepAtOnce(t, (*gateway.Service).SweepIdleRuns, g.Service, r.Service, g.Service, r.Service); total != runs {
			t.Errorf("the sweeps expired %d runs in all, want %d", total, runs)
		}
		for _, id := range ids {
			body := getRun(t, w, tok, id)
			if s := str(t, body, "workflow.state"); s != "expired" {
				t.Errorf("run %s is %s", id, s)
				continue
			}
			var n int
			if err := g.DB.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
				evs, err := tx.TraceEvents(ctx, tenantA, str(t, body, "context.expired.traceId"), 10)
				n = len(evs)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("run %s: %d events in the trace of its expiry, want 1", id, n)
			}
		}
	})
}

// TestRunRetentionReload: a reload applies a new proxy.runRetention from
// the next sweep: 0s keeps the runs, a longer retention spares a run a
// shorter one expires.
func TestRunRetentionReload(t *testing.T) {
	ti := newIssuer(t)
	clk := &gatewaytest.Clock{}
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	withRetention := func(d string) string { return strings.Replace(expireYAML, "runRetention: 1h", "runRetention: "+d, 1) }
	writeFile(t, path, expireYAML)
	g := gatewaytest.New(t, &gatewaytest.Options{
		Issuer:     ti,
		Now:        clk.Now,
		ConfigFile: path,
		Edit:       func(cfg *config.Config) { cfg.Auth.Resource = resource },
	})
	w := wrapGateway(g)
	tok := dayToken(t, ti)
	id, _ := startNote(t, w, tok)
	clk.Set(90 * time.Minute)
	for _, tc := range []struct {
		retention string
		want      time.Duration
		expired   int
	}{
		{"0s", 0, 0},
		{"2h", 2 * time.Hour, 0},
		{"45m", 45 * time.Minute, 1},
	} {
		writeFile(t, path, withRetention(tc.retention))
		if _, err := g.Reload(t); err != nil {
			t.Fatalf("reload with runRetention %s: %v", tc.retention, err)
		}
		if got := g.Service.RunRetention(); got != tc.want {
			t.Errorf("after the reload with %s: RunRetention() = %v", tc.retention, got)
		}
		if n, err := g.Service.SweepIdleRuns(context.Background()); err != nil || n != tc.expired {
			t.Errorf("runRetention %s, idle 90m: the sweep expired %d (%v), want %d", tc.retention, n, err, tc.expired)
		}
	}
	if s := str(t, getRun(t, w, tok, id), "workflow.state"); s != "expired" {
		t.Errorf("the run is %s, want expired", s)
	}
	// Without proxy.runRetention the default holds.
	writeFile(t, path, strings.Replace(expireYAML, "  runRetention: 1h\n", "", 1))
	if _, err := g.Reload(t); err != nil {
		t.Fatal(err)
	}
	if got := g.Service.RunRetention(); got != config.DefaultRunRetention {
		t.Errorf("unset: RunRetention() = %v, want %v", got, config.DefaultRunRetention)
	}
}

// TestIdleRunsExpireRacingMoves: moves sent on idle runs while replicas
// sweep them each win or lose cleanly: a run either moved (its move
// answered 200, the sweep left it) or expired (its move answered 409, as
// on any ended workflow), never both, never neither. A move that calls
// outside (ping, under a move lease) reaches the upstream only when it
// wins: no call is made for a run that expired under it.
func TestIdleRunsExpireRacingMoves(t *testing.T) {
	for _, transition := range []string{"note", "ping"} {
		t.Run(transition, func(t *testing.T) { testIdleRunsExpireRacingMoves(t, transition) })
	}
}

func testIdleRunsExpireRacingMoves(t *testing.T, transition string) {
	var pings atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pings.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(upstream.Close)
	eachStore(t, func(t *testing.T, dsn string) {
		pings.Store(0)
		ti := newIssuer(t)
		clk := &gatewaytest.Clock{}
		g := expireGateway(t, ti, clk.Now, dsn, upstream.URL)
		r := g.Replica(t, nil)
		ws := []*gw{wrapGateway(g), wrapGateway(r)}
		tok := dayToken(t, ti)
		const runs = 20
		ids := make([]string, runs)
		versions := make([]int64, runs)
		for i := range ids {
			ids[i], versions[i] = startNote(t, ws[0], tok)
		}
		clk.Set(2 * time.Hour)
		statuses := make([]int, runs)
		var swept atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res := ws[i%2].command(t, tok, map[string]any{"workflowId": ids[i], "expectedVersion": versions[i], "transition": transition})
				statuses[i] = res.Status
				if res.Status == http.StatusConflict {
					var p problem
					if err := gatewaytest.DecodeJSON(res.Body, &p); err != nil || p.Code != contracts.CodeInvalidTransition && p.Code != contracts.CodeVersionConflict {
						t.Errorf("run %d: the losing move answered %s", i, res.Body)
					}
				}
			}()
		}
		for _, svc := range []interface {
			SweepIdleRuns(context.Context) (int, error)
		}{g.Service, r.Service} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				n, err := svc.SweepIdleRuns(context.Background())
				if err != nil {
					t.Errorf("SweepIdleRuns: %v", err)
				}
				swept.Add(int64(n))
			}()
		}
		close(start)
		wg.Wait()
		expired := 0
		for i, id := range ids {
			body := getRun(t, ws[0], tok, id)
			state, version := str(t, body, "workflow.state"), num(t, body, "workflow.version")
			switch {
			case statuses[i] == http.StatusOK && state == "running" && version == versions[i]+1:
			case statuses[i] == http.StatusConflict && state == "expired" && version == versions[i]+1:
				expired++
			default:
				t.Errorf("run %d: the move answered %d, the run is %s at version %d (from %d)", i, statuses[i], state, version, versions[i])
			}
		}
		if int64(expired) != swept.Load() {
			t.Errorf("%d runs expired, the sweeps counted %d", expired, swept.Load())
		}
		if want := int32(0); transition == "ping" {
			want = int32(runs - expired)
			if got := pings.Load(); got != want {
				t.Errorf("the upstream was called %d times, want %d (once per move that won)", got, want)
			}
		}
		t.Logf("%d of %d runs expired before their move", expired, runs)
	})
}
