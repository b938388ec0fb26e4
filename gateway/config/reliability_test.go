package config

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReliabilityProblems holds the problems of reliability (retries,
// backoffMs, fallback executors, the move lease bound) to their wording
// and their file:line:column: field.
func TestReliabilityProblems(t *testing.T) {
	const conns = `connections:
  api: {kind: rest, baseUrl: "http://127.0.0.1:1"}
  sh: {kind: cli, command: /bin/sh}
`
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{
			name: "OutOfBounds",
			yaml: conns + `proxy:
  expose:
    - name: a
      executor: {kind: rest, connection: api, method: POST, path: /x}
      reliability: {retries: 11, backoffMs: 0}
    - name: b
      executor: {kind: rest, connection: api, method: POST, path: /x}
      reliability: {retries: -1, retry: 2}
`,
			want: []string{
				"r.yaml:8:30: proxy.expose[0].reliability.retries: must be at most 10",
				"r.yaml:8:45: proxy.expose[0].reliability.backoffMs: must be at least 1",
				"r.yaml:11:30: proxy.expose[1].reliability.retries: must be at least 0",
				"r.yaml:11:34: proxy.expose[1].reliability.retry: is not a known field; known fields: timeoutMs, retries, backoffMs, fallback",
			},
		},
		{
			name: "FallbackExecutors",
			yaml: conns + `proxy:
  expose:
    - name: b
      executor: {kind: rest, connection: api, method: POST, path: /x}
      reliability:
        timeoutMs: 1000
        fallback:
          executors:
            - {kind: noop}
            - {kind: cli, connection: api}
            - {kind: rest, connection: nope, method: GET, path: /y, tool: x}
    - name: c
      executor: {kind: rest, connection: api, method: POST, path: /x}
      reliability: {fallback: {executors: []}}
    - name: d
      executor: {kind: rest, connection: api, method: POST, path: /x}
      reliability: {fallback: {}}
`,
			want: []string{
				"r.yaml:12:22: proxy.expose[0].reliability.fallback.executors[0].kind: is noop, which cannot be a fallback executor: a fallback calls another connection when the executor's could not be reached, so its kind is mcp, cli, rest or llm",
				"r.yaml:13:39: proxy.expose[0].reliability.fallback.executors[1].connection: names the rest connection api: a cli executor needs a cli connection",
				"r.yaml:14:40: proxy.expose[0].reliability.fallback.executors[2].connection: names no declared connection; declared connections: api, sh",
				"r.yaml:14:69: proxy.expose[0].reliability.fallback.executors[2].tool: is not a known field of a rest executor (tool belongs to mcp executors); known fields: kind, connection, method, path, query, headers, body, timeoutMs",
				"r.yaml:17:43: proxy.expose[1].reliability.fallback.executors: must not be empty",
				"r.yaml:20:21: proxy.expose[2].reliability.fallback.executors: is required",
			},
		},
		{
			name: "NoConnectionToRetry",
			yaml: conns + `capabilities:
  noop.cap:
    reliability: {retries: 1}
  ask:
    executor: {kind: human, queue: q}
    reliability:
      fallback:
        executors: [{kind: cli, connection: sh}]
  asked: {wraps: ask, reliability: {retries: 2}}
  quiet: {reliability: {retries: 0, timeoutMs: 5}}
`,
			want: []string{
				"r.yaml:6:19: capabilities[\"noop.cap\"].reliability.retries: applies to executors of kind mcp, cli, rest and llm, and this capability's executor is noop: there is no connection call to try again",
				"r.yaml:10:7: capabilities.ask.reliability.fallback: applies to executors of kind mcp, cli, rest and llm, and this capability's executor is human: there is no connection call to try again",
				"r.yaml:12:37: capabilities.asked.reliability.retries: applies to executors of kind mcp, cli, rest and llm, and this capability's executor is human: there is no connection call to try again",
			},
		},
		{
			name: "OutlastsTheMoveLease",
			yaml: conns + `capabilities:
  inner:
    executor: {kind: rest, connection: api, method: GET, path: /x}
  outer:
    wraps: inner
    reliability: {retries: 4}
proxy:
  expose:
    - capability: inner
      as: inner.fast
      reliability: {retries: 4, timeoutMs: 10000}
    - name: deploy
      executor: {kind: cli, connection: sh, args: [-c, "true"], timeoutMs: 120000}
      reliability:
        retries: 1
        fallback:
          executors: [{kind: rest, connection: api, method: POST, path: /deploy}]
`,
			want: []string{
				"r.yaml:9:5: capabilities.outer.reliability: lets one call take up to 5m20s (the executor 5 × 1m0s, plus the waits between retries), longer than the 5m0s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: lower timeoutMs, retries or the number of fallback executors, or raise server.leaseTTL",
				"r.yaml:17:7: proxy.expose[1].reliability: lets one call take up to 6m5s (the executor 2 × 2m0s, fallback 1 2 × 1m0s, plus the waits between retries), longer than the 5m0s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: lower timeoutMs, retries or the number of fallback executors, or raise server.leaseTTL",
			},
		},
		{
			name: "OutlastsAShorterLease",
			yaml: `server: {leaseTTL: 30s}
` + conns + `proxy:
  expose:
    - name: deploy
      executor: {kind: rest, connection: api, method: POST, path: /deploy}
      reliability: {retries: 2, timeoutMs: 10000}
`,
			want: []string{
				"r.yaml:9:7: proxy.expose[0].reliability: lets one call take up to 40s (the executor 3 × 10s, plus the waits between retries), longer than the 30s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: lower timeoutMs, retries or the number of fallback executors, or raise server.leaseTTL",
			},
		},
		{
			// One call alone may outlast the lease: a transition's executor
			// and a capability's reliability.timeoutMs, without retries.
			name: "OneCallOutlastsTheLease",
			yaml: `server: {leaseTTL: 30s}
` + conns + `workflows:
  w:
    version: 1
    title: W
    initial: a
    states: {a: {}, b: {}, c: {terminal: true}}
    transitions:
      - {name: go, from: a, to: b, executor: {kind: cli, connection: sh, args: [-c, "true"], timeoutMs: 60000}}
      - {name: on, from: b, to: c, executor: {kind: cli, connection: sh, args: [-c, "true"]}}
proxy:
  expose:
    - name: deploy
      executor: {kind: rest, connection: api, method: POST, path: /deploy}
      reliability: {timeoutMs: 45000}
`,
			want: []string{
				"r.yaml:12:105: workflows.w.transitions[0].executor.timeoutMs: lets one call take 1m0s, longer than the 30s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: lower timeoutMs or raise server.leaseTTL",
				"r.yaml:13:36: workflows.w.transitions[1].executor: sets no timeoutMs, so one call may take the default 1m0s, longer than the 30s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: set a shorter timeoutMs or raise server.leaseTTL",
				"r.yaml:18:7: proxy.expose[0].reliability: lets one call take up to 45s (the executor 1 × 45s), longer than the 30s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: lower timeoutMs, retries or the number of fallback executors, or raise server.leaseTTL",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			le := mustNotParse(t, "r.yaml", tc.yaml)
			if got := strings.Split(le.Error(), "\n"); !slices.Equal(got, tc.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", le, strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestReliabilityAccepted loads the new fields and resolves them onto the
// exposed capabilities.
func TestReliabilityAccepted(t *testing.T) {
	cfg, err := Parse("r.yaml", []byte(`connections:
  api: {kind: rest, baseUrl: "http://127.0.0.1:1"}
  backup: {kind: rest, baseUrl: "http://127.0.0.1:2"}
proxy:
  expose:
    - name: deploy
      executor: {kind: rest, connection: api, method: POST, path: /deploy}
      reliability:
        timeoutMs: 20000
        retries: 2
        backoffMs: 250
        fallback:
          executors:
            - {kind: rest, connection: backup, method: POST, path: /deploy, timeoutMs: 5000}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Exposed()[0].Reliability
	if r == nil || *r.Retries != 2 || r.BackoffMs != 250 || len(r.Fallback.Executors) != 1 {
		t.Fatalf("reliability %+v", r)
	}
	xs := r.Executors(*cfg.Exposed()[0].Executor)
	if xs[0].TimeoutMs != 20000 || xs[1].TimeoutMs != 5000 || xs[1].Connection != "backup" {
		t.Fatalf("executors %+v", xs)
	}
	// A longer server.leaseTTL admits a longer worst case.
	if _, err := Parse("r.yaml", []byte(`server: {leaseTTL: 20m}
connections:
  api: {kind: rest, baseUrl: "http://127.0.0.1:1"}
proxy:
  expose:
    - name: deploy
      executor: {kind: rest, connection: api, method: POST, path: /deploy}
      reliability: {retries: 10}
`)); err != nil {
		t.Errorf("retries within a 20m lease: %v", err)
	}
	// 3 × 20s + 3 × 5s, and two waits of at least the 5s REST Retry-After
	// bound each, on each executor.
	if got, want := r.WorstCase(xs[0]), 95*time.Second; got != want {
		t.Errorf("WorstCase = %v, want %v", got, want)
	}
	// An llm server may ask for Retry-After too (connect/llm.go honours
	// it): two attempts of 10s and one wait of at least 5s.
	one := 1
	llm := &Reliability{Retries: &one, BackoffMs: 100}
	if got, want := llm.WorstCase(Executor{Kind: ExecutorLLM, TimeoutMs: 10000}), 25*time.Second; got != want {
		t.Errorf("llm WorstCase = %v, want %v", got, want)
	}
}

// TestReliabilityDefaults: without retries a rest executor keeps its
// built-in retries within one timeout, other kinds none; backoff doubles
// up to MaxBackoff.
func TestReliabilityDefaults(t *testing.T) {
	var none *Reliability
	if n, shared := none.RetriesFor(ExecutorREST); n != DefaultRESTRetries || !shared {
		t.Errorf("rest default %d %v", n, shared)
	}
	if n, _ := none.RetriesFor(ExecutorMCP); n != 0 {
		t.Errorf("mcp default %d", n)
	}
	zero := 0
	if n, shared := (&Reliability{Retries: &zero}).RetriesFor(ExecutorREST); n != 0 || shared {
		t.Errorf("explicit 0: %d %v", n, shared)
	}
	r := &Reliability{BackoffMs: 1000}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 10: MaxBackoff} {
		if got := r.Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", n, got, want)
		}
	}
	if got := none.Backoff(1); got != DefaultBackoffMs*time.Millisecond {
		t.Errorf("default backoff %v", got)
	}
}

// TestReliabilitySchemaBounds holds the bounds of schema.json and the
// constants the engine and the checks use together.
func TestReliabilitySchemaBounds(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	props := root["$defs"].(map[string]any)["reliability"].(map[string]any)["properties"].(map[string]any)
	num := func(m any, k string) int { return int(m.(map[string]any)[k].(float64)) }
	if num(props["retries"], "maximum") != MaxRetries || num(props["backoffMs"], "maximum") != MaxBackoffMs {
		t.Errorf("schema bounds of retries and backoffMs differ from MaxRetries and MaxBackoffMs")
	}
	execs := props["fallback"].(map[string]any)["properties"].(map[string]any)["executors"]
	if num(execs, "maxItems") != MaxFallbacks {
		t.Errorf("schema maxItems of fallback.executors differs from MaxFallbacks")
	}
}
