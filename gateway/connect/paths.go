package connect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// Path authority (seeds/002's read and write authority) for cli
// connections that declare roots. Before the command runs:
//
//   - the working directory (the connection's, else the gateway's) must
//     resolve under a read or a write root;
//   - every value the executor lists under paths.read must resolve under a
//     read or a write root, and every value under paths.write under a
//     write root (read roots never grant writes).
//
// A relative path resolves against the working directory. Resolution
// follows symlinks: the longest prefix of the path that exists is
// canonicalized with filepath.EvalSymlinks and the rest appended, so a
// link inside a root pointing outside it does not widen the grant. A path
// with a ".." element is refused outright: lexical cleaning before the
// links are followed would not mean what the kernel does; so is one that
// starts with '-', which the command could read as an option. The roots
// are canonicalized the same way at each check. A refusal answers
// path-forbidden (403) and nothing runs.
//
// The command receives each path argument as the absolute path that was
// checked, never as the caller spelled it.
//
// The check covers the paths the configuration declares; a command that
// opens other files is bounded by confine (bubblewrap), not by this.

// checkPaths applies the connection's roots to one call. It returns, for
// each path argument of x ($. paths and literals alike), the checked
// absolute paths the command receives in its place; an argument that
// resolved to nothing (an optional argument left out) has none.
func (c *cliConn) checkPaths(x config.Executor, scope workflow.Scope) (map[string][]string, *contracts.Error) {
	roots := c.cfg.Roots
	if roots == nil {
		if x.Paths != nil && len(x.Paths.Read)+len(x.Paths.Write) > 0 {
			// The configuration refuses this when it is loaded: fail closed.
			return nil, c.forbidden("the executor declares path arguments, and the connection grants no roots to check them against")
		}
		return nil, nil
	}
	wd := c.cfg.WorkingDirectory
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return nil, c.forbidden("the working directory cannot be determined: %v", err)
		}
	}
	readRoots := canonicalRoots(append(slices.Clone(roots.Read), roots.Write...))
	writeRoots := canonicalRoots(roots.Write)
	cwd, err := resolvePath(wd, "/")
	if err != nil {
		return nil, c.forbidden("the working directory %s: %v", wd, err)
	}
	if !under(cwd, readRoots) {
		return nil, c.forbidden("the working directory %s resolves to %s, outside the roots granted to the connection", wd, cwd)
	}
	if x.Paths == nil {
		return nil, nil
	}
	checked := map[string][]string{}
	check := func(values []string, allowed []string, access string) *contracts.Error {
		for _, v := range values {
			var reals []string
			for _, p := range pathValues(v, scope) {
				if p == "" {
					return c.forbidden("the %s path %s is empty", access, v)
				}
				if strings.HasPrefix(p, "-") {
					return c.forbidden("the %s path %q starts with '-', which the command would read as an option", access, p)
				}
				real, err := resolvePath(p, cwd)
				if err != nil {
					return c.forbidden("the %s path %q: %v", access, p, err)
				}
				if !under(real, allowed) {
					return c.forbidden("the %s path %q resolves to %s, outside the %s roots granted to the connection", access, p, real, access)
				}
				reals = append(reals, real)
			}
			checked[v] = reals
		}
		return nil
	}
	if err := check(x.Paths.Read, readRoots, "read"); err != nil {
		return nil, err
	}
	if err := check(x.Paths.Write, writeRoots, "write"); err != nil {
		return nil, err
	}
	return checked, nil
}

func (c *cliConn) forbidden(format string, args ...any) *contracts.Error {
	return &contracts.Error{Code: contracts.CodePathForbidden,
		Message: fmt.Sprintf("cli connection %s: ", c.name) + fmt.Sprintf(format, args...) + "; the command was not run",
		Hint:    "Give a path under the directories the configuration grants this connection (roots)."}
}

// pathValues resolves one paths entry: a $. path gives the string or the
// strings it leads to (anything else counts as empty and is refused); a
// literal is itself.
func pathValues(v string, scope workflow.Scope) []string {
	if !strings.HasPrefix(v, "$.") {
		return []string{v}
	}
	switch r := workflow.Resolve(v, scope).(type) {
	case nil:
		return nil // an optional argument left out: no path to check
	case string:
		return []string{r}
	case []any:
		var out []string
		for _, x := range r {
			s, _ := x.(string)
			out = append(out, s)
		}
		return out
	default:
		return []string{""}
	}
}

// canonicalRoots resolves each root; a root that does not exist grants
// nothing.
func canonicalRoots(roots []string) []string {
	var out []string
	for _, r := range roots {
		if real, err := filepath.EvalSymlinks(r); err == nil {
			if abs, err := filepath.Abs(real); err == nil {
				out = append(out, abs)
			}
		}
	}
	return out
}

// resolvePath makes p absolute against base and follows the symlinks of
// its longest existing prefix.
func resolvePath(p, base string) (string, error) {
	for _, el := range strings.Split(filepath.ToSlash(p), "/") {
		if el == ".." {
			return "", errors.New(`".." is not accepted in a path`)
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	p = filepath.Clean(p)
	rest := ""
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(cur); lerr == nil {
			// cur exists but cannot be followed: a symlink to nowhere,
			// which writing through would create wherever it points.
			return "", fmt.Errorf("%s is a symlink whose target does not exist", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// under reports whether p lies in (or is) one of roots.
func under(p string, roots []string) bool {
	for _, r := range roots {
		rel, err := filepath.Rel(r, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
