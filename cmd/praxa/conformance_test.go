package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/praxa/praxa/conformance"
	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

// runCommand runs one command line in process.
func runCommand(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCommandEnv(t, nil, args...)
}

// runCommandEnv is runCommand in the environment vars (nothing else set).
func runCommandEnv(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &environment{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code = run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// startDevInProcess starts praxa serve --dev in process on a loopback port
// and a new data directory, every tool set on, closed when the test ends
// (a close error fails it). It returns the gateway, its data directory and
// what serve printed (the ready token among it).
func startDevInProcess(t *testing.T) (*app, string, *gatewaytest.LogBuffer) {
	t.Helper()
	dataDir := t.TempDir()
	s := serveInProcess(t, serveFlags{dataDir: dataDir, dev: true, tools: contracts.SetAll})
	return s.app, dataDir, s.log
}

// served is praxa serve run in process (startGateway).
type served struct {
	*app
	// log holds what serve printed, on its standard output and error.
	log  *gatewaytest.LogBuffer
	once sync.Once
	err  error
}

// serveInProcess runs praxa serve with f in process, on 127.0.0.1:0
// unless f.addr names another address, until t ends or stop is called.
func serveInProcess(t *testing.T, f serveFlags) *served {
	t.Helper()
	if f.addr == "" {
		f.addr = "127.0.0.1:0"
	}
	s := &served{log: &gatewaytest.LogBuffer{}}
	env := &environment{stdin: strings.NewReader(""), stdout: s.log, stderr: s.log, getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a, err := startGateway(ctx, env, f)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, s.log)
	}
	s.app = a
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// stop closes the gateway (its audit flushed, its store closed); calls
// after the first return the first's error.
func (s *served) stop() error {
	s.once.Do(func() { s.err = s.app.close() })
	return s.err
}

// devToken is the ready token serve --dev printed in serveLog.
func devToken(t *testing.T, serveLog *gatewaytest.LogBuffer) string {
	t.Helper()
	printed := regexp.MustCompile(`export PRAXA_TOKEN=(\S+)`).FindStringSubmatch(serveLog.String())
	if printed == nil {
		t.Fatalf("serve --dev printed no token:\n%s", serveLog.String())
	}
	return printed[1]
}

// TestConformanceCommandDev runs praxa conformance against praxa serve --dev
// in process, with the dev issuer's key, and records the run.
func TestConformanceCommandDev(t *testing.T) {
	app, dataDir, _ := startDevInProcess(t)

	// Without --dev-data-dir the suite signs with an issuer of its own,
	// which a --dev gateway does not trust: the failure names the flag.
	code, stdout, stderr := runCommand(t, "conformance", app.url, "--issuer-addr", "127.0.0.1:0", "--case", "AUTH-001")
	if code == 0 || !strings.Contains(stderr, "add --dev-data-dir DIR") {
		t.Errorf("conformance against serve --dev with the suite's own issuer: %d\n%s%s", code, stdout, stderr)
	}

	// URL first, flags after it; repeatable and comma-separated selections.
	code, stdout, stderr = runCommand(t, "conformance", app.url, "--dev-data-dir", dataDir,
		"--group", "contract,mcp", "--case", "AUTH-001", "--case", "MIS-012,ERR-007,VAL-013", "--json", "--record")
	if code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var rep conformance.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json: stdout is not a report: %v\n%s", err, stdout)
	}
	want, _ := conformance.Select([]conformance.Group{conformance.GroupContract, conformance.GroupMCP}, []string{"AUTH-001", "MIS-012", "ERR-007", "VAL-013"})
	if len(rep.Results) != len(want) {
		t.Errorf("%d results, want %d", len(rep.Results), len(want))
	}
	// examples/praxec.yaml gives the quota tenant its quota: ERR-007 runs.
	for _, line := range []string{"PASS  AUTH-001", "PASS  ERR-007", "PASS  VAL-013", "PASS  MCP-012", "PASS  MCP-015", "GROUP", "authentication  1", "no failure outside the baseline", "recorded as coverage run cov_"} {
		if !strings.Contains(stderr, line) {
			t.Errorf("the progress on stderr lacks %q:\n%s", line, stderr)
		}
	}
}

// fakeTarget claims the contract but serves anyone: a mission read answers
// 404 with or without credentials, everything else 200.
func fakeTarget(t *testing.T) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/.well-known/oauth-protected-resource" {
			json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL})
			return
		}
		if strings.HasPrefix(r.URL.Path, "/v8/missions/") {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"type":"about:blank","title":"Not found","status":404,"code":"not-found"}`))
			return
		}
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestConformanceCommandFailures: a failure outside the baseline exits 1; the
// same failure listed in the baseline with a reason does not; a baseline
// line without a reason is refused.
func TestConformanceCommandFailures(t *testing.T) {
	url := fakeTarget(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	own := []string{"--issuer-addr", "127.0.0.1:0"}

	code, stdout, stderr := runCommand(t, append([]string{"conformance", url, "--case", "AUTH-002,AUTH-003"}, own...)...)
	if code != 1 || !strings.Contains(stdout, "FAIL  AUTH-002") || !strings.Contains(stderr, "2 case(s) failed outside the baseline") {
		t.Errorf("failures: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "Make the target trust the suite's token issuer") {
		t.Errorf("the own issuer's trust instructions are missing:\n%s", stderr)
	}

	known := write("known.txt", "# the fake target\nAUTH-002  accepts anonymous requests\nAUTH-003\taccepts Basic credentials\nAUTH-001 passes, so the run says to drop it\n")
	code, stdout, stderr = runCommand(t, append([]string{"conformance", url, "--case", "AUTH-001,AUTH-002,AUTH-003", "--baseline", known}, own...)...)
	if code != 0 || !strings.Contains(stdout, "KNOWN AUTH-002") || !strings.Contains(stdout, "AUTH-001 passes now: remove it from the baseline") {
		t.Errorf("known failures: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	bad := write("bad.txt", "AUTH-002\n")
	code, _, stderr = runCommand(t, append([]string{"conformance", url, "--baseline", bad}, own...)...)
	if code != 1 || !strings.Contains(stderr, "has no reason") {
		t.Errorf("a baseline line without a reason: exit %d\n%s", code, stderr)
	}

	for _, args := range [][]string{{"conformance"}, {"conformance", url, "--group", "nope"}, {"conformance", url, "--case", "NOPE-1"}, {"conformance", url, url}} {
		if code, _, _ := runCommand(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
