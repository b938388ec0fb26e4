package main

import (
	"regexp"
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

// TestUsageNamesEveryFlag: the usage line of every command (and of each
// of its verbs) names every flag its -h lists, whatever the flag: the line
// is generated from the flag set (usageLine), so a new flag cannot be left
// out of it.
func TestUsageNamesEveryFlag(t *testing.T) {
	flagRE := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	checked := 0
	for _, c := range commands {
		if c.name == "completion" {
			continue // operands only
		}
		lines := [][]string{{c.name}}
		if len(c.verbs) > 0 {
			lines = nil
			for _, v := range c.verbs {
				lines = append(lines, []string{c.name, v})
			}
		}
		for _, args := range lines {
			code, stdout, stderr := runCommand(t, append(args, "-h")...)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: praxa "+c.name) {
				t.Errorf("%v -h: %d\nstdout %q\nstderr %q", args, code, stdout, stderr)
				continue
			}
			usage, defaults, _ := strings.Cut(stdout, "\n\n")
			for _, m := range flagRE.FindAllStringSubmatch(defaults, -1) {
				if !strings.Contains(usage+" ", "--"+m[1]+" ") && !strings.Contains(usage, "--"+m[1]+"]") {
					t.Errorf("%v: the usage line leaves out --%s:\n%s", args, m[1], usage)
				}
				checked++
			}
		}
	}
	// serve's, which the issue found short of these.
	_, serve, _ := runCommand(t, "serve", "-h")
	for _, want := range []string{"[--store DSN|FILE]", "[--tools SET]", "[--lexicon-writes]", "[--tls-cert FILE]"} {
		if !strings.Contains(serve, want) {
			t.Errorf("serve's usage line leaves out %s:\n%s", want, serve)
		}
	}
	if checked < 60 {
		t.Errorf("only %d flags checked: the test no longer reads the -h output", checked)
	}
}

// TestHelpHidesStorePassword: -h prints --store's default, PRAXA_STORE,
// with a DSN's password masked (a PostgreSQL DSN in the environment must
// not reach a terminal or a log through help), for every command that
// opens the store.
func TestHelpHidesStorePassword(t *testing.T) {
	const dsn = "postgres://praxa:s3cret-pw@db.internal:5432/praxa"
	for _, args := range [][]string{{"serve", "-h"}, {"mcp", "-h"}, {"audit", "export", "-h"}, {"backup", "-h"}, {"memory", "import", "-h"}} {
		_, stdout, stderr := runCommandEnv(t, map[string]string{"PRAXA_STORE": dsn}, args...)
		if strings.Contains(stdout+stderr, "s3cret-pw") {
			t.Errorf("%v prints the store's password:\n%s%s", args, stdout, stderr)
		}
		if !strings.Contains(stdout+stderr, "postgres://praxa:xxxxx@db.internal:5432/praxa") {
			t.Errorf("%v does not show the store's DSN masked:\n%s%s", args, stdout, stderr)
		}
	}
}
