package connect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// The sandbox of a confined cli connection (config.Confine; seeds/002's
// confinement and private_environment). Each call runs under bubblewrap:
//
//   - the whole file system read-only, fresh /dev and /proc, a PID
//     namespace, no capabilities (bubblewrap started by root keeps them
//     all unless told otherwise, and with them the command could remount
//     / read-write or unmount a protected path), killed with its parent;
//   - each writable directory bound read-write;
//   - the call's private directory bound read-write, over an empty tmpfs
//     that hides the private directories of the other calls in flight;
//   - every directory between a protected path and its writable directory
//     bound onto itself (a mount point cannot be renamed or removed, so
//     the command cannot move the protected path aside and put another in
//     its place), then every protected path bound read-only: after the
//     writable binds, so that they stay read-only inside them.
//
// The private environment is a directory of its own per call (HOME,
// TMPDIR, XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_DATA_HOME, XDG_STATE_HOME
// and XDG_RUNTIME_DIR, each a fresh directory in it), removed when the
// call ends: nothing one call leaves there (a configuration file, a
// credential helper, a cache entry) is read by the next call, which may be
// another tenant's. It lies under a directory the gateway makes (mode
// 0700) in its temporary directory while confined calls run.

// privateDirs are the variables of a private environment, each with the
// name of its directory.
var privateDirs = []struct{ env, dir string }{
	{"HOME", "home"},
	{"TMPDIR", "tmp"},
	{"XDG_CONFIG_HOME", "config"},
	{"XDG_CACHE_HOME", "cache"},
	{"XDG_DATA_HOME", "data"},
	{"XDG_STATE_HOME", "state"},
	{"XDG_RUNTIME_DIR", "runtime"},
}

// sandbox is one confined call: its private environment and bubblewrap's
// arguments before the command.
type sandbox struct {
	c   *cliConn
	dir string
	// env is the private environment, variable by variable.
	env map[string]string
	// mounts are bubblewrap's arguments up to the command's own options.
	mounts []string
}

// sandbox prepares a confined call: the protected paths are checked
// (each must exist, without a symbolic link below its writable
// directory, or the call is refused unavailable: it would run with the
// path writable) and the private environment made. The caller releases
// it when the command has ended.
func (c *cliConn) sandbox() (*sandbox, *workflow.ExecutorError) {
	pins, protected, refusal := protectedMounts(c.cfg.Confine)
	if refusal != "" {
		return nil, unavailable(config.ExecutorCLI, c.name, "%s; the command was not run", refusal)
	}
	base, dir, err := private.acquire()
	if err != nil {
		return nil, unavailable(config.ExecutorCLI, c.name, "the private environment of a confined call cannot be made: %v; the command was not run", err)
	}
	s := &sandbox{c: c, dir: dir, env: make(map[string]string, len(privateDirs))}
	for _, p := range privateDirs {
		d := filepath.Join(dir, p.dir)
		if err := os.Mkdir(d, 0o700); err != nil {
			s.release()
			return nil, unavailable(config.ExecutorCLI, c.name, "the private environment of a confined call cannot be made: %v; the command was not run", err)
		}
		s.env[p.env] = d
	}
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	for _, w := range c.cfg.Confine.Writable {
		args = append(args, "--bind", w, w)
	}
	args = append(args, "--tmpfs", base, "--bind", dir, dir)
	for _, p := range pins {
		args = append(args, "--bind", p, p)
	}
	for _, p := range protected {
		args = append(args, "--ro-bind", p, p)
	}
	s.mounts = append(args, "--cap-drop", "ALL", "--unshare-pid", "--die-with-parent", "--new-session")
	return s, nil
}

// environment returns the private environment (none without a sandbox).
func (s *sandbox) environment() map[string]string {
	if s == nil {
		return nil
	}
	return s.env
}

// wrap returns bubblewrap's arguments running command.
func (s *sandbox) wrap(command string) []string {
	args := slices.Clone(s.mounts)
	if wd := s.c.cfg.WorkingDirectory; wd != "" {
		args = append(args, "--chdir", wd)
	}
	return append(args, "--", command)
}

// release removes the call's private directory.
func (s *sandbox) release() {
	if err := private.release(s.dir); err != nil {
		s.c.log.Error("the private environment of a confined call could not be removed", "dir", s.dir, "err", err)
	}
}

// protectedMounts resolves the protected paths of conf for one call: the
// directories to pin (bind onto themselves) and the protected paths, both
// canonical and shallowest first, so that no bind hides one made before
// it. refusal says why a path cannot be protected now.
func protectedMounts(conf *config.Confine) (pins, protected []string, refusal string) {
	for _, p := range conf.Protected {
		p = filepath.Clean(p)
		w, ok := writableRoot(p, conf.Writable)
		if !ok {
			// The configuration refuses this when it is loaded: fail closed.
			return nil, nil, fmt.Sprintf("the protected path %s is not inside a writable directory", p)
		}
		wc, err := filepath.EvalSymlinks(w)
		if err != nil {
			return nil, nil, fmt.Sprintf("the writable directory %s of the protected path %s: %v", w, p, err)
		}
		pc, err := filepath.EvalSymlinks(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Sprintf("the protected path %s does not exist, so it cannot be mounted read-only (the command could create it); create it, or remove it from confine.protected", p)
		case err != nil:
			return nil, nil, fmt.Sprintf("the protected path %s: %v", p, err)
		}
		rel, err := filepath.Rel(w, p)
		if err != nil || pc != filepath.Join(wc, rel) {
			return nil, nil, fmt.Sprintf("the protected path %s resolves to %s through a symbolic link under %s, which the command could replace; protect a path with no link below its writable directory", p, pc, w)
		}
		for d := filepath.Dir(pc); strings.HasPrefix(d, strings.TrimSuffix(wc, "/")+"/"); d = filepath.Dir(d) {
			pins = append(pins, d)
		}
		protected = append(protected, pc)
	}
	return shallowFirst(pins), shallowFirst(protected), ""
}

// writableRoot returns the shallowest of the writable directories that
// holds p (p itself excluded).
func writableRoot(p string, writable []string) (string, bool) {
	root, found := "", false
	for _, w := range writable {
		w = filepath.Clean(w)
		if strings.HasPrefix(p, strings.TrimSuffix(w, "/")+"/") && (!found || len(w) < len(root)) {
			root, found = w, true
		}
	}
	return root, found
}

// shallowFirst sorts paths by depth, then by name, without repeats.
func shallowFirst(paths []string) []string {
	slices.SortFunc(paths, func(a, b string) int {
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(paths)
}

// private holds the directory the private environments of confined calls
// are made in: made (mode 0700, in the gateway's temporary directory) when
// a call needs it, removed when the last call in flight is done.
var private privateRoot

type privateRoot struct {
	mu    sync.Mutex
	dir   string
	calls int
}

// acquire makes a fresh directory (mode 0700) for one call under the
// root, which it returns too.
func (r *privateRoot) acquire() (base, dir string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir == "" {
		if r.dir, err = os.MkdirTemp("", "praxa-confined-"); err != nil {
			r.dir = ""
			return "", "", err
		}
	}
	if dir, err = os.MkdirTemp(r.dir, "call-"); err != nil {
		if r.calls == 0 {
			_ = os.RemoveAll(r.dir)
			r.dir = "" // the next call makes another (this one may have been removed under us)
		}
		return "", "", err
	}
	r.calls++
	return r.dir, dir, nil
}

// release removes dir, a call's directory, and the root after the last
// call in flight.
func (r *privateRoot) release(dir string) error {
	err := removeAll(dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls--
	if r.calls == 0 {
		if rerr := os.Remove(r.dir); rerr != nil && err == nil {
			err = rerr
		}
		r.dir = ""
	}
	return err
}

// removeAll removes dir, first making every directory in it the owner's
// to enter and change again when the command left one that is not (a
// chmod 0 directory would stop os.RemoveAll).
func removeAll(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() && err == nil {
			_ = os.Chmod(p, 0o700) // before WalkDir reads it
		}
		return nil
	})
	return os.RemoveAll(dir)
}
