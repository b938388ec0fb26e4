package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// Deps returns the import paths pkg depends on, itself included, as
// go list -deps prints them. It skips t when the go command is not
// available and fails t when go list fails.
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not available")
	}
	out, err := exec.Command(gobin, "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	return strings.Fields(string(out))
}
