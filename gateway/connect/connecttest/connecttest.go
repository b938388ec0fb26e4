// Package connecttest provides real upstreams for the tests of
// connections: npm's @modelcontextprotocol/server-everything, installed
// once per machine at a pinned version.
package connecttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// EverythingVersion is the pinned version of
// @modelcontextprotocol/server-everything the tests run.
const EverythingVersion = "2026.8.31"

// EverythingPackage is the npm package of the MCP test server.
const EverythingPackage = "@modelcontextprotocol/server-everything"

var install = sync.OnceValues(func() (string, error) {
	dir := os.Getenv("PRAXA_MCP_EVERYTHING_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "praxa-mcp-everything-"+EverythingVersion)
	}
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err == nil {
		return entry, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, EverythingPackage+"@"+EverythingVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &installError{out: string(out), err: err}
	}
	if _, err := os.Stat(entry); err != nil {
		return "", err
	}
	return entry, nil
})

type installError struct {
	out string
	err error
}

func (e *installError) Error() string { return "npm install: " + e.err.Error() + "\n" + e.out }

// Everything returns the command and arguments that start the MCP test
// server over stdio, installing it first (into $PRAXA_MCP_EVERYTHING_DIR,
// or a directory under the system temp dir, reused across runs). The test
// is skipped, with the reason, when node or npm is missing or the install
// fails (no registry).
func Everything(t testing.TB) (command string, args []string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the MCP connection tests need it (CI installs node and npm)")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the MCP connection tests install " + EverythingPackage + " with it")
	}
	entry, err := install()
	if err != nil {
		t.Skipf("cannot install %s@%s (is the npm registry reachable?): %v", EverythingPackage, EverythingVersion, err)
	}
	return node, []string{entry, "stdio"}
}
