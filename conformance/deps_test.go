package conformance_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBlackBox keeps the suite a black box: of this module it imports only
// the contract, the REST client and the token issuer, never the gateway's
// internals (nor the MCP adapter or the OpenAPI builder), so it can only
// check what any gateway shows over HTTP and MCP. Test files are not
// counted: the tests below wire a real gateway to run the suite against.
func TestBlackBox(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not available")
	}
	const (
		module = "github.com/praxa/praxa"
		self   = module + "/conformance"
	)
	out, err := exec.Command(gobin, "list", "-deps", self).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := map[string]bool{self: true, module + "/contracts": true, module + "/gateway/restclient": true, module + "/issuer": true}
	seen := false
	for _, dep := range strings.Fields(string(out)) {
		seen = seen || dep == self
		if (dep == module || strings.HasPrefix(dep, module+"/")) && !allowed[dep] {
			t.Errorf("conformance depends on %s: it may import only contracts, gateway/restclient and issuer of this module", dep)
		}
	}
	if !seen {
		t.Errorf("go list -deps did not list %s itself", self)
	}
}
