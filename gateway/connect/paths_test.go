package connect_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// TestCLIPathAuthority: with roots on the connection, the working
// directory and every declared path argument must resolve under them,
// symlinks followed, or the move is refused with path-forbidden before
// the command runs (the command here would leave a marker file).
func TestCLIPathAuthority(t *testing.T) {
	base := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(base, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	readRoot, writeRoot, outside := mk("read"), mk("write"), mk("outside")
	if err := os.WriteFile(filepath.Join(readRoot, "in.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Links inside the roots that point outside them.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(readRoot, "escape")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(writeRoot, "secret-link")))
	must(os.Symlink(filepath.Join(outside, "missing"), filepath.Join(writeRoot, "dangling")))
	// A link from outside into a root is fine: it resolves inside.
	must(os.Symlink(writeRoot, filepath.Join(outside, "into-write")))

	marker := filepath.Join(base, "ran")
	vars := map[string]string{"PATH": "/usr/bin:/bin"}
	conn := config.Connection{Kind: "cli", Command: "sh", WorkingDirectory: writeRoot,
		Roots: &config.Roots{Read: []string{readRoot}, Write: []string{writeRoot}}}
	x := config.Executor{Args: []string{"-c", "touch " + marker},
		Paths: &config.PathArgs{Read: []string{"$.arguments.src"}, Write: []string{"$.arguments.dst"}}}

	cases := []struct {
		name     string
		conn     *config.Connection
		src, dst any
		ok       bool
		say      string
	}{
		{name: "inside", src: filepath.Join(readRoot, "in.txt"), dst: "out/new.txt", ok: true},
		{name: "relative read in the write root", src: "new.txt", dst: "new.txt", ok: true},
		{name: "link from outside into a root", src: filepath.Join(outside, "into-write", "x"), dst: filepath.Join(outside, "into-write", "y"), ok: true},
		{name: "optional path left out", dst: "y", ok: true},
		{name: "list of paths", src: []any{filepath.Join(readRoot, "in.txt"), "a"}, dst: "b", ok: true},
		{name: "read outside", src: filepath.Join(outside, "secret"), dst: "y", say: "outside the read roots"},
		{name: "write under a read root", src: "x", dst: filepath.Join(readRoot, "in.txt"), say: "outside the write roots"},
		{name: "read through a symlink out", src: filepath.Join(readRoot, "escape", "secret"), dst: "y", say: "resolves to " + outside},
		{name: "write through a symlinked file out", dst: "secret-link", say: "outside the write roots"},
		{name: "write through a dangling link", dst: "dangling", say: "symlink whose target does not exist"},
		{name: "dot-dot", dst: "sub/../../outside/x", say: `".." is not accepted`},
		{name: "not a string", dst: map[string]any{"a": 1}, say: "is empty"},
		{name: "list with one outside", src: []any{"a", filepath.Join(outside, "secret")}, dst: "b", say: "outside the read roots"},
		{name: "working directory outside", conn: &config.Connection{Kind: "cli", Command: "sh", WorkingDirectory: outside,
			Roots: &config.Roots{Write: []string{writeRoot}}}, dst: "y", say: "the working directory"},
		{name: "working directory through a link out", conn: &config.Connection{Kind: "cli", Command: "sh", WorkingDirectory: filepath.Join(readRoot, "escape"),
			Roots: &config.Roots{Read: []string{readRoot}, Write: []string{writeRoot}}}, dst: filepath.Join(writeRoot, "y"), say: "the working directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(marker)
			cn := conn
			if c.conn != nil {
				cn = *c.conn
			}
			args := map[string]any{}
			if c.src != nil {
				args["src"] = c.src
			}
			if c.dst != nil {
				args["dst"] = c.dst
			}
			_, err := runCLI(t, cn, x, workflow.Scope{Arguments: args}, vars)
			_, statErr := os.Stat(marker)
			ran := statErr == nil
			if c.ok {
				if err != nil || !ran {
					t.Fatalf("refused or not run: %v (ran %v)", err, ran)
				}
				return
			}
			var ce *contracts.Error
			if !errors.As(err, &ce) || ce.Code != contracts.CodePathForbidden || ce.Status() != 403 {
				t.Fatalf("err = %v, want path-forbidden", err)
			}
			if !strings.Contains(ce.Message, c.say) {
				t.Errorf("message %q does not say %q", ce.Message, c.say)
			}
			if ran {
				t.Errorf("the command ran although the move was refused")
			}
		})
	}
}

// TestCLIPathsNeedRoots: an executor that declares paths on a connection
// without roots is a configuration error.
func TestCLIPathsNeedRoots(t *testing.T) {
	_, err := config.Parse("x.yaml", []byte(`connections:
  sh: { kind: cli, command: /bin/sh }
proxy:
  expose:
    - name: a.b
      executor: { kind: cli, connection: sh, paths: { write: ["$.arguments.f"] } }
    - name: a.c
      executor: { kind: cli, connection: sh, paths: { write: ["$.output.f"] } }
`))
	if err == nil || !strings.Contains(err.Error(), "x.yaml:6:46: proxy.expose[0].executor.paths: are checked against the roots") ||
		!strings.Contains(err.Error(), "proxy.expose[1].executor.paths.write[0]: is a path") {
		t.Fatalf("err = %v", err)
	}
	if _, err := config.Parse("y.yaml", []byte(`connections:
  sh: { kind: cli, command: /bin/sh, roots: { read: [/srv], write: [/tmp] } }
proxy:
  expose:
    - name: a.b
      executor: { kind: cli, connection: sh, paths: { read: ["$.arguments.f", "/etc/hosts"], write: ["$.arguments.g"] } }
`)); err != nil {
		t.Fatal(err)
	}
}
