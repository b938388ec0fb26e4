package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/gatewaytest"
)

// crashStartConfig exposes one command line capability whose effect (a
// line appended to the file %[1]s) happens at once and whose call then
// takes a while: long enough to kill the gateway in the middle of it, on
// a loaded machine too. The lease is short so that the restarted gateway
// resolves the start within the test.
const crashStartConfig = `server:
  leaseTTL: 4s
  limits:
    ratePerSecond: -1
connections:
  sh: {kind: cli, command: /bin/sh}
proxy:
  expose:
    - name: effect
      description: Append a line to the effects file, then take a while.
      executor:
        kind: cli
        connection: sh
        args: ["-c", "echo effect >> %[1]s; sleep 5"]
        timeoutMs: 3500
      audit:
        sinks: [{kind: file, path: %[2]s}]
`

// crashAnswerOf is a decoded answer of the gateway.
type crashAnswerOf struct {
	status   int
	replayed bool
	body     map[string]any
	raw      []byte
}

// crashDo sends one request to the gateway at base.
func crashDo(t *testing.T, client *http.Client, method, base, path, token, key, trace string, body any) (crashAnswerOf, error) {
	t.Helper()
	opts := append([]gatewaytest.RequestOption{gatewaytest.Bearer(token)}, gatewaytest.KeyTrace(key, trace)...)
	r, err := (&gatewaytest.Client{URL: base, HTTP: client}).Send(method, path, body, opts...)
	if err != nil {
		return crashAnswerOf{}, err
	}
	a := crashAnswerOf{status: r.Status, replayed: r.Header.Get("Idempotent-Replayed") == "true", raw: r.Body}
	if err := json.Unmarshal(r.Body, &a.body); err != nil {
		t.Fatalf("%s %s: %d, not a JSON object: %s", method, path, r.Status, r.Body)
	}
	return a, nil
}

// crashLink returns the link with rel of an answer, nil when it has none.
func crashLink(body map[string]any, rel string) map[string]any {
	links, _ := body["links"].([]any)
	for _, l := range links {
		if m, _ := l.(map[string]any); m != nil && m["rel"] == rel {
			return m
		}
	}
	return nil
}

// crashEffects counts the effects the capability's command made.
func crashEffects(t *testing.T, path string) int {
	t.Helper()
	return gatewaytest.FileCount(t, path, "effect\n")
}

// TestCrashDuringStartLeavesRun: a gateway killed with SIGKILL while the
// command line call of a mission start is running (its effect made) leaves
// the run it stored with the start's lease. After a restart on the same
// data directory, the retry of the start (same key, same body) answers 409
// in progress until the lease ends, then the recorded 504 outcome-unknown,
// which links the run and the start's trace; reading the run shows that
// its start's outcome is unknown, and the trace how it ended. The effect
// happened once: nothing calls again (issue 27 item 7).
func TestCrashDuringStartLeavesRun(t *testing.T) {
	effects, sink := filepath.Join(t.TempDir(), "effects"), filepath.Join(t.TempDir(), "effect-audit.jsonl")
	site := crashSetup(t, fmt.Sprintf(crashStartConfig, effects, sink))
	child := site.child
	token := crashToken(t, site.bin, site.dataDir)
	client := crashClient()

	tr := make([]byte, 16)
	rand.Read(tr)
	trace, key := hex.EncodeToString(tr), "crash-start-"+hex.EncodeToString(tr[:8])
	start := map[string]any{"definitionId": "proxy_default", "goal": "make the effect", "input": map[string]any{"capability": "effect"}}
	killed := make(chan error, 1)
	go func() {
		_, err := crashDo(t, client, http.MethodPost, child.url, "/v8/missions", token, key, trace, start)
		killed <- err
	}()
	gatewaytest.Poll(30*time.Second, func() bool { return crashEffects(t, effects) != 0 })
	if crashEffects(t, effects) != 1 {
		t.Fatalf("the start's command made %d effects, want 1; gateway: %s", crashEffects(t, effects), child.stderr())
	}
	child.kill(t)
	if err := <-killed; err == nil {
		t.Fatalf("the start answered although its gateway was killed mid-call")
	}

	site.restart(t)
	child = site.child
	// The retry: in progress while the lease of the killed gateway holds,
	// then its recorded outcome.
	var got crashAnswerOf
	gatewaytest.Poll(30*time.Second, func() bool {
		var err error
		got, err = crashDo(t, client, http.MethodPost, child.url, "/v8/missions", token, key, "", start)
		if err != nil {
			t.Fatal(err)
		}
		if got.status == http.StatusConflict && got.body["code"] != "idempotency-request-in-progress" {
			t.Fatalf("retry: 409 %s", got.raw)
		}
		return got.status != http.StatusConflict
	})
	if got.status != http.StatusGatewayTimeout || got.body["code"] != "outcome-unknown" {
		t.Fatalf("retry after the lease: %d %s, want 504 outcome-unknown", got.status, got.raw)
	}
	get := crashLink(got.body, "get")
	if get == nil || get["method"] != "aura_get_mission" {
		t.Fatalf("the 504 links no run to read back: %s", got.raw)
	}
	runID, _ := get["args"].(map[string]any)["runId"].(string)
	if l := crashLink(got.body, "trace"); l == nil || l["args"].(map[string]any)["traceId"] != trace {
		t.Errorf("the 504 links no trace of the start %s: %s", trace, got.raw)
	}

	// The run: its start's outcome unknown, still at the initial state.
	run, err := crashDo(t, client, http.MethodGet, child.url, "/v8/missions/"+url.PathEscape(runID), token, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.status != http.StatusOK {
		t.Fatalf("GET the run %s: %d %s", runID, run.status, run.raw)
	}
	ctx, _ := run.body["context"].(map[string]any)
	last, _ := ctx["lastRun"].(map[string]any)
	if last["outcome"] != "unknown" || last["capability"] != "effect" || last["traceId"] != trace || last["error"] == nil {
		t.Errorf("the run's lastRun = %v, want the start's unknown outcome, its capability, error and trace", last)
	}
	if l := crashLink(run.body, "trace"); l == nil || l["method"] != "aura_get_trace" {
		t.Errorf("the run links no trace: %s", run.raw)
	}
	events, err := crashDo(t, client, http.MethodGet, child.url, "/v8/traces/"+trace, token, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	list, _ := events.body["events"].([]any)
	for _, ev := range list {
		if m, _ := ev.(map[string]any); m["type"] == "start.outcome_unknown" && m["runId"] == runID {
			found = true
		}
	}
	if events.status != http.StatusOK || !found {
		t.Errorf("the start's trace %s: %d %s; want its start.outcome_unknown naming %s", trace, events.status, events.raw, runID)
	}
	// The capability's audit sink received the unknown outcome too: it is
	// an event of the capability's call.
	if lines, err := os.ReadFile(sink); err != nil || !bytes.Contains(lines, []byte(`"start.outcome_unknown"`)) {
		t.Errorf("the capability's audit sink %s holds no start.outcome_unknown (%v): %s", sink, err, lines)
	}

	// Every later retry replays the record; nothing called again.
	again, err := crashDo(t, client, http.MethodPost, child.url, "/v8/missions", token, key, "", start)
	if err != nil {
		t.Fatal(err)
	}
	if again.status != http.StatusGatewayTimeout || !again.replayed || crashLink(again.body, "get") == nil {
		t.Errorf("a later retry: %d (replayed %v) %s, want the recorded 504 with its link", again.status, again.replayed, again.raw)
	}
	if n := crashEffects(t, effects); n != 1 {
		t.Errorf("the command made %d effects, want 1", n)
	}
	child.stop(t)
}
