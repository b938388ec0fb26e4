package connect_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

// needBwrap skips a test of the sandbox itself where bubblewrap is missing
// (CI installs it).
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the sandbox itself is not exercised")
	}
}

var shPath = map[string]string{"PATH": "/usr/bin:/bin"}

// confinedRepo is a writable directory holding a protected .git and a
// protected lock file two directories down.
func confinedRepo(t *testing.T) (dir string, c config.Connection) {
	t.Helper()
	dir = t.TempDir()
	for _, f := range []string{".git/HEAD", "sub/deep/lock"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("original\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, config.Connection{Kind: "cli", Command: "/bin/sh", WorkingDirectory: dir,
		Confine: &config.Confine{Writable: []string{dir}, Protected: []string{filepath.Join(dir, ".git"), filepath.Join(dir, "sub/deep/lock")}}}
}

// TestCLIConfinementProtected: a protected path inside a writable
// directory stays read-only: it cannot be written, removed, renamed, or
// moved aside with a directory above it and replaced, while the rest of
// the writable directory can be written.
func TestCLIConfinementProtected(t *testing.T) {
	needBwrap(t)
	dir, c := confinedRepo(t)
	attempts := []string{
		"echo forged > .git/HEAD",
		"touch .git/hooks",
		"rm -rf .git",
		"mv .git moved",
		"echo forged > sub/deep/lock",
		"rm -f sub/deep/lock",
		"mv sub/deep/lock sub/deep/lock2",
		// Moving a directory above the protected path aside, and putting
		// a forged one in its place.
		"mv sub sub2 && mkdir -p sub/deep && echo forged > sub/deep/lock",
		"mv sub/deep sub/deep2 && mkdir sub/deep && echo forged > sub/deep/lock",
	}
	script := "touch inside || exit 9\n"
	for i, a := range attempts {
		script += "(" + a + ") 2>/dev/null && echo " + string(rune('a'+i)) + "\n"
	}
	out, err := runCLI(t, c, config.Executor{Args: []string{"-c", script + "exit 0"}}, workflow.Scope{}, shPath)
	if err != nil {
		t.Fatal(err)
	}
	if s := out["stdout"]; s != "" {
		for _, l := range strings.Fields(s.(string)) {
			t.Errorf("the command succeeded at %q", attempts[l[0]-'a'])
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "inside")); err != nil {
		t.Errorf("no write in the writable directory: %v", err)
	}
	for _, f := range []string{".git/HEAD", "sub/deep/lock"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != "original\n" {
			t.Errorf("%s: %q, %v", f, b, err)
		}
	}
	for _, f := range []string{".git/hooks", "moved", "sub2", "sub/deep2", "sub/deep/lock2"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was made", f)
		}
	}
}

// TestCLIConfinementDropsCapabilities: the command has no capabilities,
// so it cannot remount the read-only file system or unmount a protected
// path. (bubblewrap started by root keeps them all unless told
// otherwise.)
func TestCLIConfinementDropsCapabilities(t *testing.T) {
	needBwrap(t)
	dir, c := confinedRepo(t)
	other := t.TempDir()
	script := `grep CapEff /proc/self/status
mount -o remount,rw / 2>/dev/null && echo remounted
umount ` + filepath.Join(dir, ".git") + ` 2>/dev/null && echo unmounted
touch ` + filepath.Join(other, "x") + ` 2>/dev/null && echo escaped
echo forged > .git/HEAD 2>/dev/null && echo forged
true`
	out, err := runCLI(t, c, config.Executor{Args: []string{"-c", script}}, workflow.Scope{}, shPath)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := out["stdout"].(string); strings.TrimSpace(s) != "CapEff:\t0000000000000000" {
		t.Errorf("the confined command kept capabilities or got out: %q", s)
	}
	if _, err := os.Stat(filepath.Join(other, "x")); err == nil {
		t.Error("the confined command wrote outside its directories")
	}
}

// TestCLIConfinementProtectedRefused: a protected path that cannot be
// protected now (missing, or reached through a symbolic link the command
// could replace) refuses the call, unavailable, and nothing runs.
func TestCLIConfinementProtectedRefused(t *testing.T) {
	needBwrap(t)
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name, protected, want string
		prepare               func(dir string) error
	}{
		{name: "missing", protected: ".git", want: "does not exist"},
		{name: "a link", protected: ".git", want: "symbolic link",
			prepare: func(dir string) error { return os.Symlink(elsewhere, filepath.Join(dir, ".git")) }},
		{name: "a link above it", protected: "vendor/lock", want: "symbolic link",
			prepare: func(dir string) error {
				if err := os.WriteFile(filepath.Join(elsewhere, "lock"), nil, 0o644); err != nil {
					return err
				}
				return os.Symlink(elsewhere, filepath.Join(dir, "vendor"))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.prepare != nil {
				if err := tc.prepare(dir); err != nil {
					t.Fatal(err)
				}
			}
			c := config.Connection{Kind: "cli", Command: "/bin/sh", WorkingDirectory: dir,
				Confine: &config.Confine{Writable: []string{dir}, Protected: []string{filepath.Join(dir, tc.protected)}}}
			_, err := runCLI(t, c, config.Executor{Args: []string{"-c", "touch ran"}}, workflow.Scope{}, shPath)
			if outcome(err) != workflow.OutcomeUnavailable || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "the command was not run") {
				t.Fatalf("err %v, want unavailable saying %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Error("the command ran")
			}
		})
	}
}

// TestCLIPrivateEnvironment: a confined command's HOME, TMPDIR and XDG
// directories are fresh directories of its own, writable, gone when the
// call ends, and different at every call; what one call leaves there the
// next does not see. A variable the connection's env names is env's.
func TestCLIPrivateEnvironment(t *testing.T) {
	needBwrap(t)
	dir := t.TempDir()
	names := []string{"HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"}
	c := config.Connection{Kind: "cli", Command: "/bin/sh", WorkingDirectory: dir, Env: map[string]string{"LANG": "C"},
		Confine: &config.Confine{Writable: []string{dir}}}
	script := `printf '{'
for v in ` + strings.Join(names, " ") + `; do
  eval "d=\$$v"
  [ -n "$d" ] && [ -z "$(ls -A "$d")" ] && touch "$d/left-behind" || d="not fresh or not writable: $d"
  printf '"%s":"%s",' "$v" "$d"
done
printf '"seen":"%s"}' "$(ls -A "$(dirname "$HOME")/.." | tr '\n' ' ')"`
	vars := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/gateway", "TMPDIR": "/tmp/gateway"}
	// Another call in flight: its directory is hidden from this one.
	hidden, release := connect.AcquirePrivate(t)
	defer release()
	var seen []map[string]any
	for range 2 {
		out, err := runCLI(t, c, config.Executor{Args: []string{"-c", script}}, workflow.Scope{}, vars)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out["stdout"].(string)), &got); err != nil {
			t.Fatalf("%v: %q %q", err, out["stdout"], out["stderr"])
		}
		seen = append(seen, got)
	}
	for i, got := range seen {
		dirs := map[string]bool{}
		for _, v := range names {
			d, _ := got[v].(string)
			if !filepath.IsAbs(d) || filepath.Dir(d) != filepath.Dir(got["HOME"].(string)) || strings.HasPrefix(d, "/home/gateway") || strings.HasPrefix(d, "/tmp/gateway") || dirs[d] {
				t.Errorf("call %d: %s = %q", i, v, d)
			}
			dirs[d] = true
			if _, err := os.Stat(d); err == nil {
				t.Errorf("call %d: %s (%s) is still there after the call", i, v, d)
			}
		}
		if strings.Contains(got["seen"].(string), filepath.Base(hidden)) {
			t.Errorf("call %d saw another call's private directory: %q", i, got["seen"])
		}
	}
	if seen[0]["HOME"] == seen[1]["HOME"] {
		t.Errorf("two calls shared HOME %v", seen[0]["HOME"])
	}

	// The connection's env names HOME: env's value stands.
	c.Env = map[string]string{"HOME": "${SHARED}"}
	vars["SHARED"] = dir
	out, err := runCLI(t, c, config.Executor{Args: []string{"-c", `printf %s "$HOME"`}}, workflow.Scope{}, vars)
	if err != nil || out["stdout"] != dir {
		t.Errorf("env HOME: %v %v", out, err)
	}
}

// TestCLIPrivateEnvironmentConcurrent: confined calls in flight together
// each get their own directories, and all are removed.
func TestCLIPrivateEnvironmentConcurrent(t *testing.T) {
	needBwrap(t)
	dir := t.TempDir()
	c := config.Connection{Kind: "cli", Command: "/bin/sh", WorkingDirectory: dir, Confine: &config.Confine{Writable: []string{dir}}}
	m := connect.New(map[string]config.Connection{"sh": c}, &connect.Options{Logger: quiet(), Getenv: env(shPath)})
	defer m.Close()
	const n = 6
	homes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out, err := m.Runners()["cli"].Run(context.Background(), config.Executor{Kind: "cli", Connection: "sh",
				Args: []string{"-c", `echo x > "$HOME/f" && sleep 0.2 && printf %s "$HOME"`}}, workflow.Scope{})
			if err != nil {
				t.Error(err)
				return
			}
			homes[i], _ = out["stdout"].(string)
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, h := range homes {
		if h == "" || seen[h] {
			t.Fatalf("homes %q", homes)
		}
		seen[h] = true
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(homes[0]))); err == nil {
		t.Errorf("the private root %s is still there after every call ended", filepath.Dir(filepath.Dir(homes[0])))
	}
}
