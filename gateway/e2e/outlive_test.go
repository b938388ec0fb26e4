package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/store/pgstore/pgtest"
)

// TestMoveOutlivesItsRequest: an executor that runs longer than the
// request's deadline is not cut off. The request answers 504
// outcome-unknown (never a retryable 503), the move finishes under its
// lease and records its answer, and the same request with the same key
// is then answered from that record: the command ran once.
func TestMoveOutlivesItsRequest(t *testing.T) {
	ti := newIssuer(t)
	marker := filepath.Join(t.TempDir(), "ran")
	release := filepath.Join(t.TempDir(), "release")
	// The command waits for the test to create the release file (the
	// request has answered by then), bounded by its own 20s timeout.
	cfg := gatewaytest.SlowDeployConfig(fmt.Sprintf(`echo ran >> %s; for i in $(seq 200); do test -f %s && exit 0; sleep 0.1; done; exit 1`, marker, release))
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, cfgPath, cfg)
	_, w := fileGateway(t, ti, cfgPath)
	tok := mint(t, ti, tenantA, userA)
	key := newKey()
	create := map[string]any{"goal": "deploy", "definitionId": "proxy_default", "input": map[string]any{"capability": "slow.deploy"}, "runId": "slow-1"}

	res := w.createMission(t, tok, key, create)
	p := wantProblem(t, res, http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
	if !strings.Contains(p.Detail, "still running") {
		t.Errorf("detail %q", p.Detail)
	}
	if !strings.Contains(string(res.Body), `"aura_get_mission"`) {
		t.Errorf("the answer has no link to read the mission back: %s", res.Body)
	}
	writeFile(t, release, "")
	// The same request with the same key: in progress while the move
	// runs, then its recorded answer.
	var last *gatewaytest.Response
	gatewaytest.Poll(10*time.Second, func() bool {
		last = w.createMission(t, tok, key, create)
		return last.Status != http.StatusConflict
	})
	gatewaytest.WantStatus(t, last, http.StatusCreated)
	if last.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was not answered from the record: %v", last.Header)
	}
	if n := gatewaytest.FileCount(t, marker, "ran"); n != 1 {
		t.Errorf("the command ran %d times, want 1", n)
	}
}

// TestOutlivedMoveReadOnAnotherReplica: while a start or a move that
// outlived its request runs on one replica, another replica's read of the
// run says so from the store's leases (the start: 409 in progress; the
// move: moving on the mission), and once it ends, the read shows its
// outcome. On two replicas of one SQLite file and, with
// PRAXA_TEST_PG_DSN, of one PostgreSQL database.
func TestOutlivedMoveReadOnAnotherReplica(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			var dsn string
			if driver == "postgres" {
				dsn = pgtest.Schema(t)
			}
			dir := t.TempDir()
			gate := filepath.Join(dir, "gate")
			cfg := gatewaytest.SlowDeployConfig(fmt.Sprintf(`for i in $(seq 400); do test -f %s || exit 0; sleep 0.05; done; exit 1`, gate))
			cfgPath := filepath.Join(dir, "praxec.yaml")
			writeFile(t, cfgPath, cfg)
			ti := newIssuer(t)
			opts := func(dbPath string) *gatewaytest.Options {
				return &gatewaytest.Options{Issuer: ti, ConfigFile: cfgPath,
					StoreDSN: dsn, DBPath: dbPath, Edit: func(cfg *config.Config) { cfg.Auth.Resource = resource }}
			}
			g1 := gatewaytest.New(t, opts(""))
			w1, w2 := wrapGateway(g1), wrapGateway(gatewaytest.New(t, opts(g1.DBPath)))
			tok := mint(t, ti, tenantA, userA)
			hold := func() { writeFile(t, gate, "") }
			release := func() { os.Remove(gate) }
			t.Cleanup(release)
			// settled reads the run on replica 2 until nothing runs on it.
			settled := func(run string) (m map[string]any) {
				gatewaytest.Eventually(t, "run "+run+" settling", 20*time.Second, func() bool {
					r := w2.getMission(t, tok, run)
					if r.Status != http.StatusOK {
						return false
					}
					m = r.Object(t)
					return m["moving"] == nil
				})
				return m
			}

			run := "slow-" + randomHex(8)
			hold()
			wantProblem(t, w1.createMission(t, tok, newKey(), map[string]any{"goal": "deploy", "definitionId": "proxy_default", "runId": run,
				"input": map[string]any{"capability": "slow.deploy"}}), http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
			p := wantProblem(t, w2.getMission(t, tok, run), http.StatusConflict, contracts.CodeIdempotencyInProgress)
			if !strings.Contains(p.Detail, "still starting") {
				t.Errorf("the read of a starting run: %+v", p)
			}
			release()
			v := num(t, settled(run), "workflow.version")

			hold()
			wantProblem(t, w1.signal(t, tok, newKey(), run, map[string]any{"signal": "slow.deploy", "expectedVersion": v}),
				http.StatusGatewayTimeout, contracts.CodeOutcomeUnknown)
			r := w2.getMission(t, tok, run)
			gatewaytest.WantStatus(t, r, http.StatusOK)
			validateOutput(t, contracts.ToolGetMission, r)
			if got := str(t, r.Object(t), "moving.transition"); got != "slow.deploy" {
				t.Errorf("replica 2 reads %s while the move runs", r.Body)
			}
			release()
			if v2 := num(t, settled(run), "workflow.version"); v2 <= v {
				t.Errorf("the move ended at version %d, want past %d", v2, v)
			}
		})
	}
}
