// Package dirload reads the files of a directory of definitions (the
// scripts, the skills) the one way both loaders want: every file with
// the extension below the directory, dot files and dot directories
// skipped, in path order, each at most a size, each parsed, and the
// problems of all of them reported together.
package dirload

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/praxa/praxa/gateway/config"
)

// MaxProblems bounds the problems one load reports.
const MaxProblems = 100

// Dir is a directory to read.
type Dir struct {
	// FS and Path are where the directory is.
	FS   fs.FS
	Path string
	// Display is how problems name the directory (the path as the
	// operator wrote it, resolved).
	Display string
	// Prefix starts every error ("scripts"); Setting is the configuration
	// key that names the directory ("scripts.dir").
	Prefix, Setting string
	// Ext is the ending of the files read (".cel").
	Ext string
	// MaxFileSize bounds one file.
	MaxFileSize int
}

// File is one file read.
type File struct {
	// Rel is the file's path below the directory; Name is how problems
	// name it (Rel under Dir.Display).
	Rel, Name string
	Data      []byte
}

// Read reads every file of d and hands each to parse. It answers an error
// when the directory cannot be read; otherwise the errors of the files:
// one per file that could not be read, a *config.LoadError per file that
// parse found problems in (no more once MaxProblems problems are
// reported), none when all is well.
func Read(d Dir, parse func(File) []config.Problem) (fileErrs []error, err error) {
	dir := path.Clean(d.Path)
	info, err := fs.Stat(d.FS, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: the directory %s (%s) does not exist", d.Prefix, d.Display, d.Setting)
	case err != nil:
		// Not wrapped: the error is about the directory, not about the
		// file that names it.
		return nil, fmt.Errorf("%s: the directory %s: %v", d.Prefix, d.Display, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: %s (%s) is not a directory", d.Prefix, d.Display, d.Setting)
	}
	var files []string
	err = fs.WalkDir(d.FS, dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !e.IsDir() && strings.HasSuffix(e.Name(), d.Ext) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", d.Prefix, d.Display, err)
	}
	slices.Sort(files)
	count := 0
	for _, p := range files {
		rel := p
		if dir != "." {
			rel = strings.TrimPrefix(p, dir+"/")
		}
		name := path.Join(d.Display, rel)
		data, err := readFile(d.FS, p, d.MaxFileSize)
		if err != nil {
			fileErrs = append(fileErrs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if problems := parse(File{Rel: rel, Name: name, Data: data}); len(problems) > 0 {
			if count < MaxProblems {
				fileErrs = append(fileErrs, &config.LoadError{File: name, Problems: problems})
			}
			count += len(problems)
		}
	}
	return fileErrs, nil
}

// readFile reads a file of at most limit bytes.
func readFile(fsys fs.FS, p string, limit int) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("the file is larger than %d bytes", limit)
	}
	return data, nil
}
