package e2e_test

import (
	_ "embed"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// guardsYAML exposes deploy behind an argument guard (env staging or
// prod) and a schedule guard (weekdays 09:00-17:00, Paris), running
// /bin/sh to append a line to the file its %s names.
//
//go:embed testdata/guards.yaml
var guardsYAML string

// TestArgumentAndScheduleGuards drives a capability behind an argument
// guard and a schedule guard through REST, on a gateway whose clock the
// test sets, with a real child process as the executor. Each refusal is
// 409 GUARD_REJECTED saying what failed, and the command never ran; once
// both guards pass it runs once.
func TestArgumentAndScheduleGuards(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	cfg := fmt.Sprintf(guardsYAML, marker)
	path := filepath.Join(t.TempDir(), "praxec.yaml")
	writeFile(t, path, cfg)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, paris) // a Saturday
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	g := gatewaytest.New(t, &gatewaytest.Options{ConfigFile: path, Now: clock})
	w := wrapGateway(g)
	deploy := func(env string) *gatewaytest.Response {
		tok := g.Token(t, tenantA, userA, nil, nil)
		return w.command(t, tok, map[string]any{"definitionId": "proxy_default", "input": map[string]any{"capability": "deploy", "env": env}})
	}
	ran := func() int { return gatewaytest.FileCount(t, marker, "ran") }

	p := wantProblem(t, deploy("prod"), http.StatusConflict, contracts.CodeGuardRejected)
	if !strings.Contains(p.Detail, "schedule guard: calls are allowed on mon, tue, wed, thu, fri 09:00-17:00; it is sat 10:00 in Europe/Paris; "+
		"the schedule next allows a call at 2026-12-07T09:00:00+01:00") {
		t.Errorf("Saturday: %q", p.Detail)
	}
	mu.Lock()
	now = time.Date(2026, 12, 8, 10, 0, 0, 0, paris) // a Tuesday
	mu.Unlock()
	p = wantProblem(t, deploy("dev"), http.StatusConflict, contracts.CodeGuardRejected)
	if !strings.Contains(p.Detail, `argument guard: the argument env is "dev"; it must be one of ["staging","prod"]`) || strings.Contains(p.Detail, "schedule") {
		t.Errorf("Tuesday, env dev: %q", p.Detail)
	}
	if n := ran(); n != 0 {
		t.Fatalf("the command ran %d times behind refusing guards", n)
	}
	if res := deploy("prod"); res.Status != http.StatusOK && res.Status != http.StatusCreated {
		t.Fatalf("Tuesday, env prod: %d %s", res.Status, res.Body)
	}
	if n := ran(); n != 1 {
		t.Errorf("the command ran %d times, want once", n)
	}
}
