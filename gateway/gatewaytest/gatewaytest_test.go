package gatewaytest_test

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
)

const (
	module = "github.com/praxa/praxa"
	self   = module + "/gateway/gatewaytest"
)

// TestOnlyTestsImportIt: no non-test package of the module (the commands,
// the gateway, the adapter, the suite...) depends on this package, directly
// or not. Test files are not counted: go list -deps follows non-test
// imports only.
func TestOnlyTestsImportIt(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not available")
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(gobin, args...).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
			}
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	var pkgs []string
	for _, p := range strings.Fields(run("list", module+"/...")) {
		if p != self {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no package")
	}
	// Every package reached from the module's packages, with its imports.
	lines := run(append([]string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, pkgs...)...)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(lines), "\n") {
		f := strings.Fields(line)
		seen[f[0]] = true
		for _, imp := range f[1:] {
			if imp == self {
				t.Errorf("%s imports %s: only test files may", f[0], self)
			}
		}
	}
	for _, must := range []string{module + "/cmd/praxa", module + "/gateway", module + "/gateway/httpapi"} {
		if !seen[must] {
			t.Errorf("go list -deps did not reach %s", must)
		}
	}
}

// TestGateway: a gateway and a replica of it answer over HTTP, with tokens
// from the shared issuer, and see each other's writes.
func TestGateway(t *testing.T) {
	g := gatewaytest.New(t, nil)
	r := g.Replica(t, nil)
	if r.DBPath != g.DBPath || r.Config.Auth.Resource != g.Config.Auth.Resource || r.Issuer != g.Issuer || r.URL == g.URL {
		t.Fatalf("replica %s (db %s, resource %s) of %s (db %s, resource %s)", r.URL, r.DBPath, r.Config.Auth.Resource, g.URL, g.DBPath, g.Config.Auth.Resource)
	}
	tok := g.Token(t, "acme", "alice", nil, nil)
	body := `{"intent":"deploy the payments service to staging"}`
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v8/intents", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "gatewaytest-key-0001")
	res, err := g.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	trace := strings.Split(res.Header.Get("Traceparent"), "-")
	if len(trace) != 4 {
		t.Fatalf("Traceparent %q", res.Header.Get("Traceparent"))
	}
	if evs := g.Events(t, "acme", trace[1]); len(evs) == 0 {
		t.Error("no audit event of the submit")
	}

	// The replica reads the trace the first gateway wrote.
	req, _ = http.NewRequest(http.MethodGet, r.URL+"/v8/traces/"+trace[1], nil)
	req.Header.Set("Authorization", "Bearer "+r.Token(t, "acme", "alice", []string{string(contracts.ScopeTracesRead)}, nil))
	res, err = r.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("trace on the replica: %d", res.StatusCode)
	}
	for _, path := range []string{"/openapi.json", "/readyz"} {
		res, err := g.Client.Get(g.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
	}
	g.Close()
	g.Close() // a second Close does nothing
}
