package connect_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

// upstream is a real REST upstream that counts its calls and answers each
// with what its handler decides for the n-th call.
type upstream struct {
	calls atomic.Int32
	srv   *httptest.Server
}

func newUpstream(t *testing.T, answer func(n int32, w http.ResponseWriter, r *http.Request)) *upstream {
	t.Helper()
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the upstream has the whole request: it may act on it
		answer(u.calls.Add(1), w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func ok(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"done":true}`))
}

// reliabilityEngine loads yaml (with PRIMARY and BACKUP replaced by the
// upstreams' URLs) through config.Parse and connect.Setup, as the gateway
// does, and returns an engine running the real connections.
func reliabilityEngine(t *testing.T, yaml, primary, backup string) *workflow.Engine {
	t.Helper()
	yaml = strings.NewReplacer("PRIMARY", primary, "BACKUP", backup).Replace(yaml)
	cfg, err := config.Parse("praxec.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	m, reg, problems, err := connect.Setup(context.Background(), cfg, &connect.Options{Logger: quiet()})
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	t.Cleanup(func() { m.Close() })
	n := 0
	return &workflow.Engine{Registry: reg, Runners: m.Runners(), NewID: func(p string) string { n++; return fmt.Sprintf("%s_%d", p, n) }}
}

// fireCapability starts a proxy_default run with capability id as its
// first move.
func fireCapability(ctx context.Context, e *workflow.Engine, id string) (map[string]any, error) {
	out, err := e.Start(ctx, workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Tenant: "t",
		Input: map[string]any{"capability": id}, Arguments: map[string]any{}})
	if err != nil {
		return nil, err
	}
	last, _ := out.Instance.Context[workflow.LastRunKey].(map[string]any)
	return last, nil
}

func attemptsOf(last map[string]any) []map[string]any {
	list, _ := last["attempts"].([]any)
	var out []map[string]any
	for _, a := range list {
		out = append(out, a.(map[string]any))
	}
	return out
}

const reliabilityYAML = `
connections:
  primary: {kind: rest, baseUrl: PRIMARY}
  backup: {kind: rest, baseUrl: BACKUP}
  missing: {kind: cli, command: /nonexistent/praxa-no-such-command}
  failing: {kind: cli, command: /bin/sh}
proxy:
  expose:
    - name: deploy.retry2
      executor: {kind: rest, connection: primary, method: POST, path: /deploy, body: {v: 1}}
      reliability: {retries: 2, backoffMs: 1}
    - name: deploy.retry1
      executor: {kind: rest, connection: primary, method: POST, path: /deploy, body: {v: 1}}
      reliability: {retries: 1, backoffMs: 1}
    - name: deploy.fallback
      executor: {kind: rest, connection: primary, method: POST, path: /deploy, body: {v: 1}}
      reliability:
        retries: 1
        backoffMs: 1
        timeoutMs: 2000
        fallback:
          executors:
            - {kind: rest, connection: backup, method: POST, path: /deploy, body: {v: 1}}
    - name: deploy.cli_fallback
      executor: {kind: cli, connection: missing, args: [go]}
      reliability:
        fallback:
          executors:
            - {kind: rest, connection: backup, method: POST, path: /deploy}
    - name: deploy.failed_cli
      executor: {kind: cli, connection: failing, args: [-c, "exit 3"]}
      reliability:
        retries: 3
        backoffMs: 1
        timeoutMs: 5000
        fallback:
          executors:
            - {kind: rest, connection: backup, method: POST, path: /deploy}
    - name: deploy.put
      executor: {kind: rest, connection: primary, method: PUT, path: /deploy/1, body: {v: 1}}
      reliability:
        retries: 2
        backoffMs: 1
        timeoutMs: 2000
        fallback:
          executors:
            - {kind: rest, connection: backup, method: POST, path: /deploy, body: {v: 1}}
    - name: deploy.slow
      executor: {kind: rest, connection: primary, method: POST, path: /deploy}
      reliability:
        retries: 3
        backoffMs: 1
        timeoutMs: 200
        fallback:
          executors:
            - {kind: rest, connection: backup, method: POST, path: /deploy}
`

// TestReliabilityRetriesAndFallbacks drives capabilities with retries and
// fallback executors against real upstreams and counts their calls: a
// call is repeated, on the same executor or on a fallback, only when it
// was not made (503 with Retry-After, a closed port, a missing command);
// one that may have
// acted (a 500 after the body was read, an answer cut off, a timeout after
// the request was sent) or that the upstream answered with a failure is
// made exactly once.
func TestReliabilityRetriesAndFallbacks(t *testing.T) {
	refuse503Twice := func(n int32, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			// Retry-After: a POST answered 503 without it may have been
			// taken by the upstream behind a proxy, and is not repeated.
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		ok(w)
	}
	fail500 := func(n int32, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }
	cutOff := func(n int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"done":`))
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	hangUp := func(n int32, w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	slow := func(n int32, w http.ResponseWriter, r *http.Request) {
		time.Sleep(500 * time.Millisecond) // an upstream really slower than the call's timeout
		ok(w)
	}
	answerOK := func(n int32, w http.ResponseWriter, r *http.Request) { ok(w) }
	always503 := func(n int32, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }
	hangUpThen503 := func(n int32, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			hangUp(n, w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	hangUpOnce := func(n int32, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			hangUp(n, w, r)
			return
		}
		ok(w)
	}
	closedPort := "http://127.0.0.1:1"

	for _, tc := range []struct {
		name, capability string
		primary          func(int32, http.ResponseWriter, *http.Request)
		closed           bool // the primary's port is closed
		// wantCode is the error code of the move, "" when the move is
		// taken; wantOK is then lastRun.ok.
		wantCode                 contracts.Code
		wantOK                   bool
		wantPrimary, wantBackup  int32
		wantAttempts             int
		wantFallbackInLastRecord bool
	}{
		{name: "503 twice, retries 2: the third call succeeds", capability: "deploy.retry2", primary: refuse503Twice,
			wantOK: true, wantPrimary: 3, wantAttempts: 3},
		{name: "503 twice, retries 1: unavailable after two calls", capability: "deploy.retry1", primary: refuse503Twice,
			wantCode: contracts.CodeUnavailable, wantPrimary: 2},
		{name: "500 after the body was read: one call, no retry, no fallback", capability: "deploy.fallback", primary: fail500,
			wantOK: false, wantPrimary: 1, wantBackup: 0, wantAttempts: 0},
		{name: "POST 503 without Retry-After: failed, one call, no retry, no fallback", capability: "deploy.fallback", primary: always503,
			wantOK: false, wantPrimary: 1, wantBackup: 0, wantAttempts: 0},
		{name: "answer cut off: outcome unknown, one call, no fallback", capability: "deploy.fallback", primary: cutOff,
			wantCode: contracts.CodeOutcomeUnknown, wantPrimary: 1},
		{name: "connection dropped without an answer: outcome unknown, one call", capability: "deploy.fallback", primary: hangUp,
			wantCode: contracts.CodeOutcomeUnknown, wantPrimary: 1},
		{name: "timeout after the request was sent: outcome unknown, one call", capability: "deploy.slow", primary: slow,
			wantCode: contracts.CodeOutcomeUnknown, wantPrimary: 1},
		{name: "closed port: retried, then the fallback succeeds", capability: "deploy.fallback", closed: true,
			wantOK: true, wantBackup: 1, wantAttempts: 3, wantFallbackInLastRecord: true},
		{name: "missing cli command: the fallback succeeds", capability: "deploy.cli_fallback", primary: answerOK,
			wantOK: true, wantBackup: 1, wantAttempts: 2, wantFallbackInLastRecord: true},
		{name: "cli exit 3 (treatNonZeroAsFailure): no retry, no fallback", capability: "deploy.failed_cli", primary: answerOK,
			wantOK: false, wantBackup: 0, wantAttempts: 0},
		// An idempotent PUT may be sent again after it went unanswered, but
		// it may have acted: when the retries end refused, the call is
		// still outcome-unknown, and no fallback (another request) follows.
		{name: "PUT unanswered, then refused: retried, outcome unknown, no fallback", capability: "deploy.put", primary: hangUpThen503,
			wantCode: contracts.CodeOutcomeUnknown, wantPrimary: 3, wantBackup: 0},
		{name: "PUT answered 500 three times: retried, failed, no fallback", capability: "deploy.put", primary: fail500,
			wantOK: false, wantPrimary: 3, wantBackup: 0, wantAttempts: 3},
		{name: "PUT refused 503 three times: the fallback runs", capability: "deploy.put", primary: always503,
			wantOK: true, wantPrimary: 3, wantBackup: 1, wantAttempts: 4, wantFallbackInLastRecord: true},
		{name: "PUT unanswered once, then answered: retried, success", capability: "deploy.put", primary: hangUpOnce,
			wantOK: true, wantPrimary: 2, wantAttempts: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			primary := newUpstream(t, answerOK)
			if tc.primary != nil {
				primary = newUpstream(t, tc.primary)
			}
			backup := newUpstream(t, answerOK)
			base := primary.srv.URL
			if tc.closed {
				base = closedPort
			}
			e := reliabilityEngine(t, reliabilityYAML, base, backup.srv.URL)
			tape := workflow.NewRecorder(nil)
			last, err := fireCapability(workflow.WithTape(context.Background(), tape), e, tc.capability)
			var ce *contracts.Error
			switch {
			case tc.wantCode != "":
				if !errors.As(err, &ce) || ce.Code != tc.wantCode {
					t.Fatalf("err %v, want %s", err, tc.wantCode)
				}
			case err != nil:
				t.Fatalf("err %v", err)
			case last["ok"] != tc.wantOK:
				t.Fatalf("lastRun %v, want ok %v", last, tc.wantOK)
			}
			if got := primary.calls.Load(); got != tc.wantPrimary {
				t.Errorf("primary called %d times, want %d", got, tc.wantPrimary)
			}
			if got := backup.calls.Load(); got != tc.wantBackup {
				t.Errorf("backup called %d times, want %d", got, tc.wantBackup)
			}
			if tc.wantCode != "" {
				return
			}
			attempts := attemptsOf(last)
			if len(attempts) != tc.wantAttempts {
				t.Fatalf("lastRun.attempts %v, want %d", attempts, tc.wantAttempts)
			}
			if tc.wantFallbackInLastRecord && attempts[len(attempts)-1]["fallback"] != 1 {
				t.Errorf("the last attempt %v is not the fallback's", attempts[len(attempts)-1])
			}

			// The replay (the move inside its store transaction) answers
			// the same, attempts included, and calls nobody.
			again, err := fireCapability(workflow.WithTape(context.Background(), tape.Replay()), e, tc.capability)
			if err != nil || fmt.Sprint(again) != fmt.Sprint(last) {
				t.Fatalf("replay: %v %v, want %v", again, err, last)
			}
			if primary.calls.Load() != tc.wantPrimary || backup.calls.Load() != tc.wantBackup {
				t.Fatalf("the replay called an upstream")
			}
		})
	}
}

// TestReliabilityAuditsAttempts checks that the transition.fired event of a
// move that needed retries lists what was tried.
func TestReliabilityAuditsAttempts(t *testing.T) {
	backup := newUpstream(t, func(n int32, w http.ResponseWriter, r *http.Request) { ok(w) })
	e := reliabilityEngine(t, reliabilityYAML, "http://127.0.0.1:1", backup.srv.URL)
	out, err := e.Start(context.Background(), workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Tenant: "t",
		Input: map[string]any{"capability": "deploy.fallback"}, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range out.Events {
		if ev.Type != "transition.fired" {
			continue
		}
		list, _ := ev.Attributes["attempts"].([]any)
		if len(list) != 3 {
			t.Fatalf("attempts %v", ev.Attributes["attempts"])
		}
		first := list[0].(map[string]any)
		if first["outcome"] != workflow.OutcomeUnavailable || first["connection"] != "primary" || first["attempt"] != 1 {
			t.Fatalf("first attempt %v", first)
		}
		return
	}
	t.Fatal("no transition.fired event")
}

// TestReliabilityDefaultRESTRetries keeps the built-in retries of a rest
// executor without reliability.retries: a 429, or a 503 with Retry-After,
// is tried again (three calls in all) whatever the method; a 503 without
// Retry-After, a 500 or a 502 is tried again for an idempotent method
// (GET) and never for a POST, which may have acted.
func TestReliabilityDefaultRESTRetries(t *testing.T) {
	const yaml = `
connections:
  primary: {kind: rest, baseUrl: PRIMARY}
proxy:
  expose:
    - name: deploy
      executor: {kind: rest, connection: primary, method: POST, path: /deploy}
    - name: status
      executor: {kind: rest, connection: primary, method: GET, path: /status}
`
	for _, tc := range []struct {
		capability string
		status     int
		retryAfter string // the answer's Retry-After, "" for none
		want       int32
	}{
		{"deploy", http.StatusServiceUnavailable, "0", 3}, {"deploy", http.StatusServiceUnavailable, "", 1},
		{"deploy", http.StatusTooManyRequests, "", 3},
		{"deploy", http.StatusInternalServerError, "", 1}, {"deploy", http.StatusBadGateway, "", 1},
		{"status", http.StatusServiceUnavailable, "", 3}, {"status", http.StatusInternalServerError, "", 3},
		{"status", http.StatusBadGateway, "", 3}, {"status", http.StatusNotFound, "", 1},
	} {
		name := tc.capability + "/" + http.StatusText(tc.status)
		if tc.retryAfter != "" {
			name += "/Retry-After"
		}
		t.Run(name, func(t *testing.T) {
			u := newUpstream(t, func(n int32, w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
			})
			e := reliabilityEngine(t, yaml, u.srv.URL, "")
			_, _ = fireCapability(context.Background(), e, tc.capability)
			if got := u.calls.Load(); got != tc.want {
				t.Fatalf("%d calls, want %d", got, tc.want)
			}
		})
	}
}
