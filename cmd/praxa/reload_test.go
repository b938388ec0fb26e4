package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// exampleConfig is examples/praxec.yaml to be written elsewhere (its
// skills directory made absolute), with extra added to its workflows.
func exampleConfig(t *testing.T, extra string) string {
	t.Helper()
	skills, err := filepath.Abs(filepath.Join("..", "..", "examples", "skills"))
	must(t, err, "skills directory")
	c := strings.Replace(string(examples.PraxecYAML), "\n  dir: skills\n", "\n  dir: "+skills+"\n", 1)
	return strings.Replace(c, "\nworkflows:\n", "\nworkflows:\n"+extra, 1)
}

// serveExample starts praxa serve --dev (data in dir) on exampleConfig
// written to a file of its own, which the test rewrites to reload; it
// returns the file and the server.
func serveExample(t *testing.T, bin, dir string) (string, *devServe) {
	t.Helper()
	return serveConfig(t, bin, dir, exampleConfig(t, ""))
}

// serveConfig starts praxa serve --dev (data in dir) on the configuration
// cfg written to a file of its own; it returns the file and the server.
func serveConfig(t *testing.T, bin, dir, cfg string) (string, *devServe) {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "praxec.yaml")
	must(t, os.WriteFile(cfgPath, []byte(cfg), 0o600), "write the configuration")
	return cfgPath, startDevServe(t, bin, dir, "--config", cfgPath)
}

// post sends a JSON POST with a bearer token and returns the status and
// body.
func post(t *testing.T, url, token string, body any) (int, []byte) {
	t.Helper()
	r := gatewaytest.NewClient(url, nil).Post(t, "", body, gatewaytest.Bearer(token))
	return r.Status, r.Body
}

// finds says whether a praxec search for query answers the item id.
func finds(t *testing.T, url, token, query, id string) bool {
	t.Helper()
	status, body := post(t, url+"/v8/praxec/query", token, map[string]any{"query": query, "kind": "workflow"})
	if status != http.StatusOK {
		t.Fatalf("search answered %d: %s", status, body)
	}
	return strings.Contains(string(body), `"id":"`+id+`"`)
}

// TestServeReloadsOnSIGHUP runs the built binary on a configuration file,
// changes the file and sends SIGHUP: the new workflow is served. A bad
// file sent the same way is refused with its problems on stderr, and the
// running configuration stays; the operator endpoint refuses it too.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	bin := buildPraxa(t)
	dir := t.TempDir()
	cfgPath, gw := serveExample(t, bin, dir)
	tok := mintToken(t, bin, dir)

	if finds(t, gw.url, tok, "rotate signing keys", "rotate_keys") {
		t.Fatal("rotate_keys is served before it is configured")
	}
	must(t, os.WriteFile(cfgPath, []byte(exampleConfig(t, gatewaytest.RotateKeysWorkflowYAML)), 0o600), "write the configuration")
	must(t, gw.cmd.Process.Signal(syscall.SIGHUP), "SIGHUP")
	waitFor(t, gw, "praxa: configuration reloaded from "+cfgPath)
	if !finds(t, gw.url, tok, "rotate signing keys", "rotate_keys") {
		t.Fatalf("rotate_keys is not served after SIGHUP:\n%s", gw.stderr())
	}
	status, body := post(t, gw.url+"/v8/praxec/command", tok, map[string]any{"definitionId": "rotate_keys", "input": map[string]any{}})
	if status != http.StatusOK {
		t.Fatalf("starting rotate_keys answered %d: %s", status, body)
	}

	bad := strings.Replace(exampleConfig(t, gatewaytest.RotateKeysWorkflowYAML), "    initial: start\n", "    initial: nowhere\n", 1)
	must(t, os.WriteFile(cfgPath, []byte(bad), 0o600), "write the configuration")
	must(t, gw.cmd.Process.Signal(syscall.SIGHUP), "SIGHUP")
	// The JSON log line and the plain refusal line are written one after
	// the other: wait for both rather than read stderr between them.
	waitFor(t, gw, "praxa: reload refused, the running configuration stays")
	waitFor(t, gw, "workflows.rotate_keys.initial: names no declared state")
	if !finds(t, gw.url, tok, "rotate signing keys", "rotate_keys") {
		t.Fatal("a refused reload dropped the running configuration")
	}

	// The operator endpoint answers the same refusal as a problem.
	status, body = post(t, gw.url+"/v8/config/reload", tok, map[string]any{})
	if status != http.StatusBadRequest || !strings.Contains(string(body), `"code":"INVALID_PARAMS"`) ||
		!strings.Contains(string(body), `"pointer":"","detail":"`+cfgPath+`:`) {
		t.Fatalf("reload of a bad file answered %d: %s", status, body)
	}
	must(t, os.WriteFile(cfgPath, []byte(exampleConfig(t, "")), 0o600), "write the configuration")
	status, body = post(t, gw.url+"/v8/config/reload", tok, map[string]any{})
	if status != http.StatusOK || !strings.Contains(string(body), `"reloaded":true`) {
		t.Fatalf("reload answered %d: %s", status, body)
	}
	if finds(t, gw.url, tok, "rotate signing keys", "rotate_keys") {
		t.Fatal("rotate_keys is still served after a reload dropped it")
	}
}

// waitFor waits up to 30s for s's stderr to contain want.
func waitFor(t *testing.T, s *devServe, want string) {
	t.Helper()
	if !gatewaytest.Poll(30*time.Second, func() bool { return strings.Contains(s.stderr(), want) }) {
		t.Fatalf("stderr never said %q:\n%s", want, s.stderr())
	}
}
