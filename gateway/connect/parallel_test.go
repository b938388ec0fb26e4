package connect_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/workflow"
)

// branchAPI is a real REST upstream for parallel branches. It counts the
// calls of each path: /slow answers after a pause, /fast at once, /fail
// refuses (400), /acted answers 502 to a POST (the request went through a
// proxy: it may have acted), /hold waits until the request is cancelled,
// and reports it; /fail-after-hold refuses (400) once a /hold request has
// reached the upstream, so that a failFast move fails only after its held
// branch was sent.
type branchAPI struct {
	mu        sync.Mutex
	calls     map[string]int
	cancelled atomic.Int32
	held      chan struct{}
	srv       *httptest.Server
}

func newBranchAPI(t testing.TB, pause time.Duration) *branchAPI {
	t.Helper()
	a := &branchAPI{calls: map[string]int{}, held: make(chan struct{}, 16)}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		a.mu.Lock()
		a.calls[r.URL.Path]++
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/slow":
			time.Sleep(pause) // an upstream really this slow: branches overlap in real time
		case "/fail":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"no"}`))
			return
		case "/acted":
			w.WriteHeader(http.StatusBadGateway)
			return
		case "/fail-after-hold":
			select {
			case <-a.held:
			case <-time.After(10 * time.Second):
			}
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"no"}`))
			return
		case "/hold":
			a.held <- struct{}{}
			<-r.Context().Done()
			a.cancelled.Add(1)
			return
		}
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *branchAPI) total() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.calls {
		n += c
	}
	return n
}

func (a *branchAPI) count(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[path]
}

const parallelYAML = `
connections:
  api: {kind: rest, baseUrl: PRIMARY}
  down: {kind: rest, baseUrl: BACKUP}
proxy:
  expose:
    - name: both.ok
      executor:
        kind: parallel
        branches:
          slow: {kind: rest, connection: api, method: GET, path: /slow}
          fast: {kind: rest, connection: api, method: GET, path: /fast}
          none: {kind: noop}
    - name: ok.and.fail
      executor:
        kind: parallel
        branches:
          slow: {kind: rest, connection: api, method: GET, path: /slow}
          fail: {kind: rest, connection: api, method: POST, path: /fail}
    - name: fail.and.fail
      executor:
        kind: parallel
        branches:
          fail: {kind: rest, connection: api, method: POST, path: /fail}
          missing: {kind: rest, connection: api, method: POST, path: /fail, body: {again: true}}
    - name: acted.and.fail
      executor:
        kind: parallel
        branches:
          acted: {kind: rest, connection: api, method: POST, path: /acted}
          fail: {kind: rest, connection: api, method: POST, path: /fail}
    - name: fail.fast
      executor:
        kind: parallel
        policy: failFast
        branches:
          hold: {kind: rest, connection: api, method: POST, path: /hold}
          fail: {kind: rest, connection: api, method: POST, path: /fail-after-hold}
    - name: unreachable
      reliability: {timeoutMs: 2000}
      executor:
        kind: parallel
        branches:
          a: {kind: rest, connection: down, method: POST, path: /a}
          b: {kind: rest, connection: down, method: GET, path: /b}
`

// branchAttempts returns the attempts of a lastRun by branch.
func branchAttempts(t *testing.T, last map[string]any) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, a := range attemptsOf(last) {
		name, _ := a["branch"].(string)
		if name == "" {
			t.Errorf("attempt %v names no branch", a)
		}
		out[name] = append(out[name], a)
	}
	return out
}

// TestParallelBranches runs parallel executors against a real REST
// upstream: outputs merged under the branches' names, every branch's
// attempts listed, and the move's answer decided by what the branches may
// have done.
func TestParallelBranches(t *testing.T) {
	api := newBranchAPI(t, 100*time.Millisecond)
	e := reliabilityEngine(t, parallelYAML, api.srv.URL, "http://127.0.0.1:1")
	ctx := context.Background()

	t.Run("AllSucceed", func(t *testing.T) {
		last, err := fireCapability(ctx, e, "both.ok")
		if err != nil {
			t.Fatal(err)
		}
		out := last["output"].(map[string]any)
		if len(out) != 3 || !reflect.DeepEqual(out["none"], map[string]any{}) {
			t.Errorf("output %v", out)
		}
		for _, b := range []string{"slow", "fast"} {
			br, _ := out[b].(map[string]any)
			if body, _ := br["body"].(map[string]any); br["status"] != 200 || body["path"] != "/"+b {
				t.Errorf("branch %s: %v", b, out[b])
			}
		}
		if last["ok"] != true {
			t.Errorf("ok = %v", last["ok"])
		}
		got := branchAttempts(t, last)
		if len(got["slow"]) != 1 || len(got["fast"]) != 1 || got["slow"][0]["outcome"] != "ok" {
			t.Errorf("attempts %v", got)
		}
	})

	t.Run("FailedAfterAnotherActed", func(t *testing.T) {
		for _, id := range []string{"ok.and.fail", "acted.and.fail"} {
			_, err := fireCapability(ctx, e, id)
			ce := contracts.AsError(err)
			if ce.Code != contracts.CodeOutcomeUnknown {
				t.Fatalf("%s: %v, want outcome-unknown", id, err)
			}
			if !strings.Contains(ce.Message, "branch fail") || !strings.Contains(ce.Message, "may have taken effect") {
				t.Errorf("%s: message %q", id, ce.Message)
			}
		}
	})

	t.Run("AllFailed", func(t *testing.T) {
		before := api.count("/fail")
		last, err := fireCapability(ctx, e, "fail.and.fail")
		if err != nil {
			t.Fatal(err)
		}
		if last["ok"] != false || !strings.Contains(last["error"].(string), "branch missing") {
			t.Errorf("lastRun %v", last)
		}
		out := last["output"].(map[string]any)
		for _, b := range []string{"fail", "missing"} {
			if br, _ := out[b].(map[string]any); br["status"] != 400 {
				t.Errorf("branch %s answered %v", b, out[b])
			}
		}
		if n := api.count("/fail") - before; n != 2 {
			t.Errorf("/fail called %d times, want 2 (a refused POST is not repeated)", n)
		}
		if got := branchAttempts(t, last); len(got) != 2 || got["fail"][0]["outcome"] != "failed" {
			t.Errorf("attempts %v", got)
		}
	})

	t.Run("FailFastCancelsTheOthers", func(t *testing.T) {
		_, err := fireCapability(ctx, e, "fail.fast")
		// The held POST reached the upstream before it was cancelled: it
		// may have acted.
		if ce := contracts.AsError(err); ce.Code != contracts.CodeOutcomeUnknown || !strings.Contains(ce.Message, "branch hold") {
			t.Fatalf("%v, want outcome-unknown naming the held branch", err)
		}
		gatewaytest.Poll(5*time.Second, func() bool { return api.cancelled.Load() != 0 })
		if api.cancelled.Load() != 1 {
			t.Error("the held branch was not cancelled")
		}
	})

	t.Run("NothingReached", func(t *testing.T) {
		_, err := fireCapability(ctx, e, "unreachable")
		if ce := contracts.AsError(err); ce.Code != contracts.CodeUnavailable {
			t.Fatalf("%v, want unavailable", err)
		}
	})
}

// TestParallelTape: the branches' calls are recorded once, under one
// lease taken before any branch starts (the tape's before hook runs once,
// with no call made yet, and no renewal), and a replay hands every branch
// its own recorded answer without calling again.
func TestParallelTape(t *testing.T) {
	api := newBranchAPI(t, 50*time.Millisecond)
	e := reliabilityEngine(t, parallelYAML, api.srv.URL, "http://127.0.0.1:1")
	ctx := context.Background()
	var leases, renewals int
	rec := workflow.NewRecorder(func(context.Context) error {
		leases++
		if n := api.total(); n != 0 {
			t.Errorf("the lease was taken after %d calls", n)
		}
		return nil
	}).RenewBefore(func(context.Context) error { renewals++; return nil })
	first, err := fireCapability(workflow.WithTape(ctx, rec), e, "both.ok")
	if err != nil {
		t.Fatal(err)
	}
	if leases != 1 || renewals != 0 || rec.Calls() != 1 {
		t.Errorf("%d leases, %d renewals, %d tape entries; want 1, 0, 1", leases, renewals, rec.Calls())
	}
	calls := api.total()
	for range 3 {
		again, err := fireCapability(workflow.WithTape(ctx, rec.Replay()), e, "both.ok")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, first) {
			t.Errorf("replayed %v, recorded %v", again, first)
		}
	}
	if api.total() != calls {
		t.Errorf("the replay called the upstream %d times", api.total()-calls)
	}

	// A failure after a branch acted is recorded as such: the lease
	// settles it as outcome-unknown.
	rec = workflow.NewRecorder(nil)
	if _, err := fireCapability(workflow.WithTape(ctx, rec), e, "ok.and.fail"); err == nil {
		t.Fatal("no error")
	}
	if !rec.MayHaveActed() || !rec.Unknown() {
		t.Errorf("MayHaveActed %v, Unknown %v, want both", rec.MayHaveActed(), rec.Unknown())
	}
	rec = workflow.NewRecorder(nil)
	fireCapability(workflow.WithTape(ctx, rec), e, "unreachable")
	if rec.MayHaveActed() {
		t.Error("a parallel move that reached nothing may have acted")
	}

	// A lease refused stops the move before any branch starts.
	calls = api.total()
	refused := errors.New("lease held elsewhere")
	rec = workflow.NewRecorder(func(context.Context) error { return refused })
	if _, err := fireCapability(workflow.WithTape(ctx, rec), e, "both.ok"); !errors.Is(err, refused) {
		t.Errorf("%v, want the lease's refusal", err)
	}
	if api.total() != calls {
		t.Error("a branch ran without the lease")
	}
}

// TestParallelReplayByBranch: a replay matches each branch's calls by its
// name: a definition whose branch changed between recording and replay
// (a reload) does not take the recorded answers.
func TestParallelReplayByBranch(t *testing.T) {
	api := newBranchAPI(t, time.Millisecond)
	e := reliabilityEngine(t, parallelYAML, api.srv.URL, "http://127.0.0.1:1")
	ctx := context.Background()
	rec := workflow.NewRecorder(nil)
	if _, err := fireCapability(workflow.WithTape(ctx, rec), e, "both.ok"); err != nil {
		t.Fatal(err)
	}
	changed := reliabilityEngine(t, strings.Replace(parallelYAML, "fast: {kind: rest, connection: api, method: GET, path: /fast}",
		"fast: {kind: rest, connection: api, method: GET, path: /fast2}", 1), api.srv.URL, "http://127.0.0.1:1")
	if _, err := fireCapability(workflow.WithTape(ctx, rec.Replay()), changed, "both.ok"); !errors.Is(err, workflow.ErrTapeMismatch) {
		t.Errorf("%v, want ErrTapeMismatch", err)
	}
}

// BenchmarkParallelREST: one move of n REST calls to an upstream that
// answers each after 50 ms, made by a parallel executor (parallel) and one
// after another by a chain of deterministic transitions (sequential), in
// one run, so the ratio of the two is read from one machine state.
func BenchmarkParallelREST(b *testing.B) {
	const n = 8
	api := newBranchAPI(b, 50*time.Millisecond)
	var y strings.Builder
	y.WriteString("connections:\n  api: {kind: rest, baseUrl: " + api.srv.URL + "}\nproxy:\n  expose:\n    - name: fan\n      executor:\n        kind: parallel\n        branches:\n")
	for i := range n {
		fmt.Fprintf(&y, "          b%d: {kind: rest, connection: api, method: GET, path: /slow}\n", i)
	}
	y.WriteString("workflows:\n  seq:\n    version: 1\n    title: Sequential\n    initial: s0\n    states:\n")
	for i := range n + 1 {
		fmt.Fprintf(&y, "      s%d: {terminal: %v}\n", i, i == n)
	}
	y.WriteString("    transitions:\n")
	for i := range n {
		fmt.Fprintf(&y, "      - {name: t%d, from: s%d, to: s%d, actor: deterministic, executor: {kind: rest, connection: api, method: GET, path: /slow}}\n", i, i, i+1)
	}
	cfg, err := config.Parse("bench.yaml", []byte(y.String()))
	if err != nil {
		b.Fatal(err)
	}
	e := benchEngine(b, cfg)
	ctx := context.Background()
	b.Run("parallel", func(b *testing.B) {
		for b.Loop() {
			out, err := e.Start(ctx, workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "fan"}, Arguments: map[string]any{}})
			if err != nil {
				b.Fatal(err)
			}
			if last := out.Instance.Context[workflow.LastRunKey].(map[string]any); last["ok"] != true {
				b.Fatal(last)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		for b.Loop() {
			out, err := e.Start(ctx, workflow.StartRequest{DefinitionID: "seq"})
			if err != nil {
				b.Fatal(err)
			}
			if out.Instance.State != fmt.Sprintf("s%d", n) {
				b.Fatal(out.Instance.State)
			}
		}
	})
}

// benchEngine is reliabilityEngine for a benchmark: cfg wired through
// connect.Setup as the gateway wires it.
func benchEngine(b *testing.B, cfg *config.Config) *workflow.Engine {
	b.Helper()
	m, reg, problems, err := connect.Setup(context.Background(), cfg, &connect.Options{Logger: quiet()})
	if err != nil || len(problems) > 0 {
		b.Fatal(err, problems)
	}
	b.Cleanup(func() { m.Close() })
	var n atomic.Int64
	return &workflow.Engine{Registry: reg, Runners: m.Runners(), NewID: func(p string) string { return fmt.Sprintf("%s_%d", p, n.Add(1)) }}
}

// TestParallelStandalone: a parallel capability called without a run (the
// light path) answers the merged outputs and lists every branch's
// attempts, as its capability.called event records them.
func TestParallelStandalone(t *testing.T) {
	api := newBranchAPI(t, time.Millisecond)
	e := reliabilityEngine(t, parallelYAML, api.srv.URL, "http://127.0.0.1:1")
	d, _ := e.Registry.Lookup(config.ProxyDefaultWorkflow)
	if !d.Standalone("both.ok") {
		t.Fatal("a parallel capability without guards cannot be called without a run")
	}
	call, err := e.CallStandalone(context.Background(), d, "both.ok", workflow.CheckedArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if !call.OK || len(call.Output) != 3 || len(call.Attempts) != 2 {
		t.Errorf("call %+v", call)
	}
	for _, a := range call.Attempts {
		if b := a.(map[string]any)["branch"]; b != "slow" && b != "fast" {
			t.Errorf("attempt %v", a)
		}
	}
	if _, err := e.CallStandalone(context.Background(), d, "acted.and.fail", workflow.CheckedArgs{}); contracts.AsError(err).Code != contracts.CodeOutcomeUnknown {
		t.Errorf("%v, want outcome-unknown", err)
	}
}
