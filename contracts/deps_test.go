package contracts_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the contract at the bottom of the module: it
// imports no other package of this module, nothing of HTTP transport and
// nothing of storage.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not available")
	}
	const self = "github.com/praxa/praxa/contracts"
	out, err := exec.Command(gobin, "list", "-deps", self).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{"net/http", "database/sql",
		"github.com/go-chi/chi", "modernc.org/sqlite", "github.com/jackc/pgx", "go.etcd.io/bbolt"}
	var deps []string
	for _, dep := range strings.Fields(string(out)) {
		deps = append(deps, dep)
		if dep != self && (dep == "github.com/praxa/praxa" || strings.HasPrefix(dep, "github.com/praxa/praxa/")) {
			t.Errorf("contracts depends on %s, another package of this module", dep)
		}
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("contracts depends on %s", dep)
			}
		}
	}
	if len(deps) == 0 || deps[len(deps)-1] != self {
		t.Errorf("go list -deps did not list %s itself: %v", self, deps)
	}
}
