package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigValidateScripts: praxa config validate compiles the scripts a
// file names, and checks that each script executor names one of them.
func TestConfigValidateScripts(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "praxec.yaml")
	script := filepath.Join(dir, "scripts", "quote.cel")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg, "scripts: {dir: scripts}\nproxy:\n  expose:\n    - name: q\n      executor: {kind: script, script: quote}\n")
	write(script, "// Quote.\n{\"total\": now()}\n")
	code, _, stderr := runCommand(t, "config", "validate", cfg)
	if code != 1 || !strings.Contains(stderr, filepath.ToSlash(script)+":2:14: undeclared reference to 'now'") {
		t.Errorf("a script that reads the clock: exit %d:\n%s", code, stderr)
	}
	write(script, "// Quote.\n{\"total\": 1}\n")
	if code, stdout, stderr := runCommand(t, "config", "validate", cfg); code != 0 || stdout != cfg+": ok\n" {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
	write(cfg, "scripts: {dir: scripts}\nproxy:\n  expose:\n    - name: q\n      executor: {kind: script, script: qoute}\n")
	if code, _, stderr := runCommand(t, "config", "validate", cfg); code != 1 ||
		!strings.Contains(stderr, cfg+": proxy.expose[0].executor.script: names no script of") || !strings.Contains(stderr, "its scripts: quote") {
		t.Errorf("an executor naming no script: exit %d:\n%s", code, stderr)
	}
	if code, stdout, stderr := runCommand(t, "config", "validate", filepath.Join("..", "..", "examples", "scripts.yaml")); code != 0 {
		t.Errorf("examples: exit %d:\n%s%s", code, stdout, stderr)
	}
}
