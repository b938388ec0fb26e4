package connect

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/praxa/praxa/gateway/config"
)

// spawner starts child processes from one goroutine locked to its OS
// thread for the life of the process: a parent-death signal fires when the
// thread that started the child ends, and this one never does.
var spawner = sync.OnceValue(func() chan func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread()
		for f := range ch {
			f()
		}
	}()
	return ch
})

// spawn starts cmd on the spawner's thread.
func spawn(cmd *exec.Cmd) error {
	return onSpawner(cmd.Start)
}

// onSpawner runs f on the spawner's thread.
func onSpawner(f func() error) error {
	done := make(chan error, 1)
	spawner() <- func() { done <- f() }
	return <-done
}

// inherited are the variables a child takes from the gateway's
// environment; everything else it gets is named by its connection.
var inherited = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// childEnv builds a child's environment: the inherited variables, then
// private (a confined call's private environment, which replaces the
// gateway's HOME and TMPDIR), then the connection's env with ${NAME} read
// through getenv. It returns the names of variables the connection refers
// to that are unset.
func childEnv(env map[string]string, getenv func(string) string, private map[string]string) (out []string, missing []string) {
	vals := map[string]string{}
	for _, k := range inherited {
		if v := getenv(k); v != "" {
			vals[k] = v
		}
	}
	maps.Copy(vals, private)
	for k, v := range env {
		s, miss := config.Interpolate(v, getenv)
		missing = append(missing, miss...)
		vals[k] = s
	}
	for k, v := range vals {
		out = append(out, k+"="+v)
	}
	return out, missing
}

// lookPath finds command in the PATH of the child's environment (a name
// with a slash is taken as it is).
func lookPath(command string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		return command, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: command, Err: exec.ErrNotFound}
}
