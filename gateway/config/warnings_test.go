package config_test

import (
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/config"
)

// TestWarnings: an executor whose declared timeout (or worst case under its
// reliability) outlasts the request deadline is named, with where it was
// declared; one without timeoutMs, or within the deadline, is not, nor a
// workflow executor's (its timeoutMs bounds a parked wait, not a request).
func TestWarnings(t *testing.T) {
	const file = `server:
  limits:
    requestTimeout: 10s
connections:
  shell:
    kind: cli
    command: /bin/sh
proxy:
  expose:
    - name: run_tests
      executor: {kind: cli, connection: shell, args: ["-c", "true"]}
      reliability:
        timeoutMs: 120000
    - name: quick
      executor: {kind: cli, connection: shell, args: ["-c", "true"], timeoutMs: 1000}
    - name: default_timeout
      executor: {kind: cli, connection: shell, args: ["-c", "true"]}
    - name: retried
      executor: {kind: cli, connection: shell, args: ["-c", "true"], timeoutMs: 4000}
      reliability:
        retries: 2
workflows:
  ship:
    version: 1
    title: Ship
    initial: a
    states:
      a: {title: A}
      b: {title: B, terminal: true}
    transitions:
      - name: go
        title: Go
        from: a
        to: b
        executor: {kind: cli, connection: shell, args: ["-c", "true"], timeoutMs: 11000}
      - name: wait
        title: Wait for a day
        from: a
        to: b
        executor: {kind: workflow, definitionId: review, timeoutMs: 86400000}
  review:
    version: 1
    title: Review
    initial: a
    states:
      a: {title: A}
      b: {title: B, terminal: true}
    transitions:
      - {name: approve, title: Approve, from: a, to: b}
`
	cfg, err := config.Parse("w.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Warnings()
	want := []string{"proxy.expose[0]: the executor may run for 2m0s", "proxy.expose[3]: the executor may run for 12.", "workflows.ship.transitions[0]: the executor may run for 11s"}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) || !strings.Contains(got[i], "requestTimeout (10s)") {
			t.Errorf("warning %d: %q, want %q…", i, got[i], w)
		}
	}
}
