package lightpath_test

import (
	"testing"

	"github.com/praxa/praxa/internal/testkit"
)

// TestDependencies keeps the light path below the service: it imports
// neither package gateway nor a surface, nor storage drivers or HTTP.
func TestDependencies(t *testing.T) {
	forbidden := []string{"github.com/praxa/praxa/gateway", "github.com/praxa/praxa/gateway/httpapi", "github.com/praxa/praxa/mcpadapter",
		"github.com/praxa/praxa/gateway/store/sqlitestore", "github.com/praxa/praxa/gateway/store/pgstore", "net/http", "database/sql"}
	for _, dep := range testkit.Deps(t, "github.com/praxa/praxa/gateway/lightpath") {
		for _, f := range forbidden {
			if dep == f {
				t.Errorf("gateway/lightpath depends on %s", dep)
			}
		}
	}
}
