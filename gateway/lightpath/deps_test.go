package lightpath_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the light path below the service: it imports
// neither package gateway nor a surface, nor storage drivers or HTTP.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not available")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/praxa/praxa/gateway/lightpath").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{"github.com/praxa/praxa/gateway", "github.com/praxa/praxa/gateway/httpapi", "github.com/praxa/praxa/mcpadapter",
		"github.com/praxa/praxa/gateway/store/sqlitestore", "github.com/praxa/praxa/gateway/store/pgstore", "net/http", "database/sql"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f {
				t.Errorf("gateway/lightpath depends on %s", dep)
			}
		}
	}
}
