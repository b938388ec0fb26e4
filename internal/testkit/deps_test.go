package testkit

import (
	"slices"
	"strings"
	"testing"
)

// TestDeps: the dependencies of testkit are itself and the standard
// library packages it imports, none other of the module.
func TestDeps(t *testing.T) {
	deps := Deps(t, "github.com/praxa/praxa/internal/testkit")
	for _, want := range []string{"github.com/praxa/praxa/internal/testkit", "os/exec", "encoding/json", "testing"} {
		if !slices.Contains(deps, want) {
			t.Errorf("Deps lacks %s: %v", want, deps)
		}
	}
	for _, dep := range deps {
		if strings.Contains(dep, ".") && dep != "github.com/praxa/praxa/internal/testkit" {
			t.Errorf("testkit depends on %s, outside the standard library", dep)
		}
	}
}
