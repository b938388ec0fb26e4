package main

import (
	"strings"
	"testing"
)

// TestHelpOnStdout: a usage asked for with -h goes to stdout with exit
// status 0 (so `praxa serve -h | less` shows it); a usage printed for a
// mistake goes to stderr with status 2. Commands that only open the store
// describe -addr and -dev as they use them.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"serve", "-h"}, {"mcp", "--help"}, {"config", "validate", "-h"}, {"approvals", "list", "-help"}} {
		code, stdout, stderr := runCommand(t, args...)
		if code != 0 || !strings.Contains(stdout, "Usage: praxa") || stderr != "" {
			t.Errorf("%v: %d\nstdout %q\nstderr %q", args, code, stdout, stderr)
		}
	}
	code, stdout, stderr := runCommand(t, "serve", "--bogus")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "Usage: praxa serve") {
		t.Errorf("serve --bogus: %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	_, serve, _ := runCommand(t, "serve", "-h")
	_, mcp, _ := runCommand(t, "mcp", "-h")
	if !strings.Contains(serve, "listen address") || strings.Contains(mcp, "listen address") || !strings.Contains(mcp, "the built-in token issuer of the data directory") {
		t.Errorf("-addr and -dev: serve's\n%s\nmcp's\n%s", serve, mcp)
	}
}
