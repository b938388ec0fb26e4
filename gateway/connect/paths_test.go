package connect_test

import (
	"errors"
	"fmt"
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

// TestCLICallerValuesAreNeverOptions: a caller's value never becomes an
// option of the command. In a path slot, a value that starts with '-' is
// path-forbidden, and the command receives the checked absolute path,
// never the caller's spelling; anywhere else in argv it is refused
// INVALID_PARAMS unless the executor lists the argument under
// optionArguments. Nothing runs when a value is refused. (Before: cp
// src --target-directory=/elsewhere wrote outside every root.)
func TestCLICallerValuesAreNeverOptions(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "in.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(base, "ran")
	vars := map[string]string{"PATH": "/usr/bin:/bin"}
	conn := config.Connection{Kind: "cli", Command: "sh", WorkingDirectory: root, Roots: &config.Roots{Write: []string{root}}}
	// The script records its arguments, one a line, and that it ran.
	script := `touch ` + marker + `; for a; do printf '%s\n' "$a"; done`
	paths := &config.PathArgs{Read: []string{"$.arguments.src"}, Write: []string{"$.arguments.dst"}}

	cases := []struct {
		name string
		x    config.Executor
		args map[string]any
		// want is the command's arguments, one a line; "" when refused.
		want string
		code contracts.Code
	}{
		{name: "paths passed as the absolute paths checked", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.src", "$.arguments.dst"}, Paths: paths},
			args: map[string]any{"src": "in.txt", "dst": "sub/out.txt"}, want: filepath.Join(root, "in.txt") + "\n" + filepath.Join(root, "sub", "out.txt") + "\n"},
		{name: "an option in a write path", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.src", "$.arguments.dst"}, Paths: paths},
			args: map[string]any{"src": "in.txt", "dst": "--target-directory=/elsewhere"}, code: contracts.CodePathForbidden},
		{name: "an option in a read path", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.src"}, Paths: paths},
			args: map[string]any{"src": "--help"}, code: contracts.CodePathForbidden},
		{name: "an option in a list of paths", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.src"}, Paths: paths},
			args: map[string]any{"src": []any{"in.txt", "-r"}}, code: contracts.CodePathForbidden},
		{name: "an option in an unconfined argument", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.word"}, UnconfinedArguments: true},
			args: map[string]any{"word": "--help"}, code: contracts.CodeInvalidParams},
		{name: "an option among a list's values", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.words"}, UnconfinedArguments: true},
			args: map[string]any{"words": []any{"a", "-n"}}, code: contracts.CodeInvalidParams},
		{name: "a negative number", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.n"}, UnconfinedArguments: true},
			args: map[string]any{"n": -1}, code: contracts.CodeInvalidParams},
		{name: "an option the operator allows", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.flag"}, UnconfinedArguments: true, OptionArguments: []string{"$.arguments.flag"}},
			args: map[string]any{"flag": "--verbose"}, want: "--verbose\n"},
		{name: "a dash inside a value", x: config.Executor{Args: []string{"-c", script, "sh", "$.arguments.word"}, UnconfinedArguments: true},
			args: map[string]any{"word": "a-b --c"}, want: "a-b --c\n"},
		{name: "an operator's literal option", x: config.Executor{Args: []string{"-c", script, "sh", "--literal"}},
			want: "--literal\n"},
	}
	for _, shell := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/shell=%v", c.name, shell), func(t *testing.T) {
				os.Remove(marker)
				cn, x := conn, c.x
				if shell {
					// The same words on a command line: /bin/sh -c
					// "touch MARKER; printf '%s\n' ARGS…", each value quoted.
					cn.Shell, cn.Command = true, "touch "+marker+"; printf '%s\\n'"
					x.Args = x.Args[3:]
				}
				out, err := runCLI(t, cn, x, workflow.Scope{Arguments: c.args}, vars)
				_, statErr := os.Stat(marker)
				ran := statErr == nil
				if c.code == "" {
					if err != nil || !ran {
						t.Fatalf("refused or not run: %v", err)
					}
					if got := out["stdout"]; got != c.want {
						t.Errorf("the command got %q, want %q", got, c.want)
					}
					return
				}
				var ce *contracts.Error
				if !errors.As(err, &ce) || ce.Code != c.code {
					t.Fatalf("err = %v, want %s", err, c.code)
				}
				if ce.Hint == "" {
					t.Errorf("the refusal carries no hint: %v", ce)
				}
				if ran {
					t.Errorf("the command ran although the call was refused")
				}
			})
		}
	}
}
