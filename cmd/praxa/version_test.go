package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
)

// TestVersionAndCompletion: a binary names the revision the build
// stamped with -ldflags, as deploy/image/build.sh stamps it, with VCS
// stamping off (GOFLAGS=-buildvcs=false, a git worktree, a tarball: no
// VCS settings); built with VCS stamping where the checkout allows it,
// it names the VCS revision; each shell's completion script is valid for
// that shell, and bash's completes a command and a command's flags.
func TestVersionAndCompletion(t *testing.T) {
	bin := buildPraxa(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "praxa ") || !strings.Contains(string(out), "contract ") {
		t.Fatalf("praxa version: %q, %v", out, err)
	}
	// The variables the image's build stamps are the ones version reads.
	buildSh, err := os.ReadFile(filepath.Join("..", "..", "deploy", "image", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	stamps := regexp.MustCompile(`-X main\.(\w+)=`).FindAllStringSubmatch(string(buildSh), -1)
	var names []string
	for _, m := range stamps {
		names = append(names, m[1])
	}
	if strings.Join(names, " ") != "buildVersion buildRevision buildTime" {
		t.Errorf("deploy/image/build.sh stamps %v, want buildVersion buildRevision buildTime (version.go)", names)
	}
	stamped := filepath.Join(t.TempDir(), "praxa")
	ldflags := "-X main.buildVersion=v9.8.7-test -X main.buildRevision=0123456789abcdef -X main.buildTime=2026-12-01T10:00:00Z"
	if b, err := exec.Command("go", "build", "-buildvcs=false", "-ldflags", ldflags, "-o", stamped, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags: %v\n%s", err, b)
	}
	out, err = exec.Command(stamped, "version").Output()
	if want := "praxa v9.8.7-test revision 0123456789abcdef built from 2026-12-01T10:00:00Z go"; err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("a binary stamped with -ldflags and no VCS settings: %q, %v; want it to start %q", out, err, want)
	}
	// Built with VCS stamping, a binary whose build information holds a
	// revision names it (go stamps none in a git worktree, whose .git is a
	// file, nor outside a checkout).
	withVCS := filepath.Join(t.TempDir(), "praxa")
	if b, err := exec.Command("go", "build", "-buildvcs=auto", "-o", withVCS, ".").CombinedOutput(); err != nil {
		t.Logf("no build with VCS stamping here: %v\n%s", err, b)
	} else if info, err := exec.Command("go", "version", "-m", withVCS).Output(); err == nil {
		rev := regexp.MustCompile(`(?m)^\s*build\s+vcs\.revision=(\S+)`).FindSubmatch(info)
		out, err := exec.Command(withVCS, "version").Output()
		switch {
		case rev == nil:
			t.Logf("go stamped no VCS revision here (a worktree or no checkout): %q", out)
		case err != nil || !strings.Contains(string(out), "revision "+string(rev[1])):
			t.Errorf("a binary stamped with VCS revision %s does not name it: %q, %v", rev[1], out, err)
		}
	}
	code, _, stderr := runCommand(t, "completion", "tcsh")
	if code != 2 || !strings.Contains(stderr, "bash, zsh or fish") {
		t.Errorf("completion tcsh: %d %s", code, stderr)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to check the script with")
	}
	script := filepath.Join(t.TempDir(), "praxa.bash")
	_, stdout, _ := runCommand(t, "completion", "bash")
	if err := os.WriteFile(script, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	probe := `source "$1"; COMP_WORDS=(praxa se); COMP_CWORD=1; _praxa; echo "${COMPREPLY[@]}"; ` +
		`COMP_WORDS=(praxa serve --da); COMP_CWORD=2; _praxa; echo "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, "-c", probe, "probe", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 2 || lines[0] != "serve" || lines[1] != "--data-dir" {
		t.Errorf("bash completion: %q", got)
	}
}

// TestDescribeBuild: the VCS settings and the module version win; a
// build without them (GOFLAGS=-buildvcs=false, the image's build) names
// what -ldflags stamped instead of "(devel)" and no revision.
func TestDescribeBuild(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	stamp := buildStamp{version: "v1.2.3", revision: "def456", time: "2026-12-02T11:00:00Z"}
	c := " contract " + contracts.ServerVersion
	for _, tc := range []struct {
		name  string
		bi    *debug.BuildInfo
		stamp buildStamp
		want  string
	}{
		{"nothing", nil, buildStamp{}, "praxa (no build information)" + c},
		{"devel, no vcs, no stamp", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, buildStamp{},
			"praxa (devel) go1.26.8" + c},
		{"devel, no vcs, stamped", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, stamp,
			"praxa v1.2.3 revision def456 built from 2026-12-02T11:00:00Z go1.26.8" + c},
		{"vcs wins over the stamp", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs}, stamp,
			"praxa v1.2.3 revision abc123+dirty built from 2026-12-01T10:00:00Z go1.26.8" + c},
		{"a module version wins", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.0.0"}}, stamp,
			"praxa v1.0.0 revision def456 built from 2026-12-02T11:00:00Z go1.26.8" + c},
		{"stamp alone", nil, stamp, "praxa v1.2.3 revision def456 built from 2026-12-02T11:00:00Z" + c},
	} {
		if got := describeBuild(tc.bi, tc.stamp); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
