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
	cfg := fmt.Sprintf(`server:
  limits:
    requestTimeout: 500ms
connections:
  shell:
    kind: cli
    command: /bin/sh
proxy:
  expose:
    - name: slow.deploy
      description: Deploy, slowly.
      executor:
        kind: cli
        connection: shell
        args: ["-c", 'echo ran >> %s; for i in $(seq 200); do test -f %s && exit 0; sleep 0.1; done; exit 1']
        timeoutMs: 20000
`, marker, release)
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	_, w := fileGateway(t, ti, cfgPath)
	tok := ti.token(t, tenantA, userA)
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
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The same request with the same key: in progress while the move
	// runs, then its recorded answer.
	var last *resp
	for range 200 {
		last = w.createMission(t, tok, key, create)
		if last.Status != http.StatusConflict {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantStatus(t, last, http.StatusCreated)
	if last.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was not answered from the record: %v", last.Header)
	}
	if b, _ := os.ReadFile(marker); strings.Count(string(b), "ran") != 1 {
		t.Errorf("the command ran %d times, want 1", strings.Count(string(b), "ran"))
	}
}
