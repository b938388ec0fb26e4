// Package scripts loads and runs the gateway's scripts: CEL expressions
// (github.com/google/cel-go) that a script executor evaluates as the work
// of a move, a deterministic and sandboxed computation over the move's
// $.arguments, $.context and $.input whose value, a JSON object, is the
// move's output.
//
// Scripts are gateway-wide configuration, like skills: they are read from
// the directory the configuration's scripts.dir names, once, at start (and
// at every reload); every tenant runs the same scripts, and no call
// changes them.
//
// # Files
//
// Every *.cel file under the directory (hidden files and directories
// excluded) is one script. Its id is its path below the directory without
// the extension, with / written as . (pricing/quote.cel is pricing.quote).
// The comment lines that open the file describe it: the first is its
// title, the following ones its description, and a line "tags: a, b" its
// search tags:
//
//	// Quote an order: the total of its items, with the discount applied.
//	// The discount is a percentage the order was opened with.
//	// tags: pricing, quote
//	{
//	  "total": sum(arguments.items.map(i, double(i.price) * double(i.qty)))
//	           * (100.0 - double(input.discount)) / 100.0,
//	}
//
// The expression sees three variables, arguments, context and input (each
// a map), and must evaluate to a map with string keys: the output. JSON
// numbers are ints when they are whole (within ±2^53) and doubles
// otherwise; write double(x) to mix them in arithmetic. Beside CEL's
// standard library, sum(list) adds a list of numbers.
//
// A file that does not compile, or whose id is not an identifier, is
// refused: Load reports every problem as FILE:LINE:COLUMN: MESSAGE and
// loads nothing.
//
// # Sandbox
//
// CEL has no statements, no loops but its comprehension macros (each
// bounded by the collection it walks), no recursion and no access to
// files, the network or the clock: a script sees what it is given. The
// standard library is available except the time-zone overloads (they read
// the system's time-zone database); the extensions are not. Every
// comprehension walks a map in the order of its sorted keys, so a script's
// value depends on its inputs alone. A run is bounded by Limits: a cost
// budget (CEL's runtime cost, which charges string and byte operations by
// their size, so it bounds the memory a run allocates as well as its
// steps), a time limit, and the size of the output.
package scripts

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/internal/dirload"
)

// Ext is the extension of script files.
const Ext = ".cel"

// MaxFileSize bounds one script file.
const MaxFileSize = 64 << 10

var idRE = regexp.MustCompile(contracts.IdentifierPattern)

// Script is one loaded script.
type Script struct {
	// ID is the script's id, as executors name it.
	ID          string
	Title       string
	Description string
	Tags        []string
	// Source is the file's text, as describe shows it.
	Source string
	// File is where the script was loaded from, as problems name it.
	File string

	ast *cel.Ast
	// prog is the program under DefaultLimits' cost budget.
	prog cel.Program
}

// Catalog is the loaded scripts, by id. The zero value and nil are empty
// catalogs. A Catalog is immutable and safe for concurrent use.
type Catalog struct {
	all dirload.Catalog[*Script]
}

// scripts is c's scripts; nil for a nil c.
func (c *Catalog) scripts() *dirload.Catalog[*Script] {
	if c == nil {
		return nil
	}
	return &c.all
}

// Lookup returns the script id.
func (c *Catalog) Lookup(id string) (*Script, bool) { return c.scripts().Lookup(id) }

// IDs returns the script ids, sorted.
func (c *Catalog) IDs() []string { return c.scripts().IDs() }

// Len returns the number of scripts.
func (c *Catalog) Len() int { return c.scripts().Len() }

// Load reads and compiles every script under dir in fsys. display is how
// problems name dir (the path as the operator wrote it, resolved). A load
// that finds any problem returns an error listing them all (each file's
// as a *config.LoadError, joined) and no catalog.
func Load(fsys fs.FS, dir, display string) (*Catalog, error) {
	c := &Catalog{}
	errs, err := dirload.Read(dirload.Dir{FS: fsys, Path: dir, Display: display,
		Prefix: "scripts", Setting: "scripts.dir", Ext: Ext, MaxFileSize: MaxFileSize},
		func(f dirload.File) []config.Problem {
			id := strings.ReplaceAll(strings.TrimSuffix(f.Rel, Ext), "/", ".")
			s, problems := compile(id, f.Name, string(f.Data))
			if len(problems) == 0 {
				c.all.Add(id, s)
			}
			return problems
		})
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// describe reads a script's title, description and tags from the comment
// lines that open it.
func describe(s *Script) {
	var desc []string
	first := true
	for line := range strings.Lines(s.Source) {
		line = strings.TrimSpace(line)
		text, ok := strings.CutPrefix(line, "//")
		if !ok {
			break
		}
		text = strings.TrimSpace(text)
		if tags, ok := strings.CutPrefix(text, "tags:"); ok {
			for t := range strings.SplitSeq(tags, ",") {
				if t = strings.TrimSpace(t); t != "" {
					s.Tags = append(s.Tags, t)
				}
			}
			continue
		}
		switch {
		case first:
			s.Title, first = text, false
		case text != "":
			desc = append(desc, text)
		}
	}
	s.Description = strings.Join(desc, " ")
	if s.Title == "" {
		s.Title = s.ID
	}
}

// FromConfig loads the scripts of cfg.Scripts.Dir and checks that every
// script executor of cfg names one of them; with no directory configured
// it returns an empty catalog (the configuration's own check refuses a
// script executor then). A configuration read from a file (cfg.Source
// set) resolves a relative directory against the file's directory; one
// without a Source against the working directory.
func FromConfig(cfg *config.Config) (*Catalog, error) {
	dir := cfg.Scripts.Dir
	if dir == "" {
		return &Catalog{}, nil
	}
	if !filepath.IsAbs(dir) && cfg.Source != "" {
		dir = filepath.Join(filepath.Dir(cfg.Source), dir)
	}
	display := filepath.ToSlash(filepath.Clean(dir))
	c, err := Load(os.DirFS(dir), ".", display)
	if err != nil {
		return nil, err
	}
	if problems := c.unknown(cfg, display); len(problems) > 0 {
		file := cfg.Source
		if file == "" {
			file = "the configuration"
		}
		return nil, &config.LoadError{File: file, Problems: problems}
	}
	return c, nil
}

// unknown reports the script executors of cfg that name no script of c.
func (c *Catalog) unknown(cfg *config.Config, display string) []config.Problem {
	var problems []config.Problem
	check := func(field string, x *config.Executor) {
		if x == nil || x.Script == "" {
			return // not a script executor: only one admits script, and requires it
		}
		if _, ok := c.Lookup(x.Script); ok {
			return
		}
		msg := fmt.Sprintf("names no script of %s (a file %s%s)", display, strings.ReplaceAll(x.Script, ".", "/"), Ext)
		if ids := c.IDs(); len(ids) > 0 {
			msg += "; its scripts: " + strings.Join(ids, ", ")
		}
		problems = append(problems, config.Problem{Field: field + ".script", Message: msg})
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.Workflows)) {
		w := cfg.Workflows[id]
		for _, st := range slices.Sorted(maps.Keys(w.States)) {
			check(fmt.Sprintf("workflows.%s.states.%s.onEnter", id, st), w.States[st].OnEnter)
		}
		for i, t := range w.Transitions {
			check(fmt.Sprintf("workflows.%s.transitions[%d].executor", id, i), t.Executor)
		}
	}
	for _, x := range cfg.Exposed() {
		if x.Executor == nil {
			continue
		}
		for i, ex := range x.Reliability.Executors(*x.Executor) {
			field := x.Source + ".executor"
			if i > 0 {
				field = fmt.Sprintf("%s.reliability.fallback.executors[%d]", x.Source, i-1)
			}
			check(field, &ex)
		}
	}
	return problems
}
