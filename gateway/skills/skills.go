// Package skills loads the gateway's governed skills: versioned markdown
// documents with YAML front matter that tell an agent how to do something,
// each version carrying its evidence state (draft, reviewed, validated or
// deprecated). aura_get_skill serves them.
//
// Skills are gateway-wide configuration, like workflows and the lexicon:
// they are read from the directory the configuration's skills.dir names,
// once, at start; every tenant reads the same skills, and no call changes
// them. They are not tenant data and are never stored.
//
// # Files
//
// Every *.md file under the directory (hidden files and directories
// excluded) is one version of one skill:
//
//	---
//	id: deploy-checklist
//	version: 1.2.0
//	title: Deploy checklist
//	description: What to check before and after a deploy.   # optional
//	tags: [deploy, release]                                # optional
//	evidence:
//	  state: validated          # draft, reviewed, validated or deprecated
//	  reviewedBy: [sre-team]    # optional
//	  reviewedAt: 2025-05-02    # optional: a date or an RFC 3339 time
//	  summary: Used in 40 deploys without a miss.   # optional
//	  refs: [https://wiki.example.com/deploys]      # optional
//	---
//	The markdown body ...
//
// A file whose front matter is missing or invalid, or whose body is empty,
// is refused: Load reports every problem as FILE:LINE:COLUMN: FIELD:
// MESSAGE and loads nothing. Two files of one skill with the same version
// (see CompareVersions for the order) are refused too. The versions of a
// skill are ordered newest first; the default answer is the newest
// release (a pre-release such as 2.0.0-rc.1 only when the skill has
// nothing else; see Skill.Latest), whatever its evidence state (the
// answer always states it).
package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/internal/dirload"
)

// Evidence states.
const (
	StateDraft      = "draft"
	StateReviewed   = "reviewed"
	StateValidated  = "validated"
	StateDeprecated = "deprecated"
)

// states lists the evidence states, as the contract declares them.
var states = contracts.SkillEvidenceStates()

// Evidence is the governance record of one skill version.
type Evidence struct {
	State      string   `json:"state"`
	ReviewedBy []string `json:"reviewedBy,omitempty"`
	ReviewedAt string   `json:"reviewedAt,omitempty"`
	Summary    string   `json:"summary,omitempty"`
	Refs       []string `json:"refs,omitempty"`
}

// Version is one version of a skill: one file.
type Version struct {
	ID          string
	Version     string
	Title       string
	Description string
	Tags        []string
	Evidence    Evidence
	// Body is the markdown after the front matter, without leading blank
	// lines and trailing white space.
	Body string
	// File is where the version was loaded from, as problems name it.
	File string

	parsed                     semver
	versionLine, versionColumn int
}

// Skill is every version of one skill, newest first.
type Skill struct {
	ID       string
	Versions []*Version
}

// Latest returns the version a read without a version answers (the
// skill's latestVersion): the newest release, that is the newest version
// without a pre-release, as Semantic Versioning's npm-style "latest" has
// it, so that 2.0.0-rc.1 does not displace 1.1.0; a skill with only
// pre-releases answers its newest one. The evidence state plays no part:
// the answer states it.
func (s *Skill) Latest() *Version {
	for _, v := range s.Versions {
		if len(v.parsed.pre) == 0 {
			return v
		}
	}
	return s.Versions[0]
}

// Find returns the version named v: the one written exactly so, else the
// one that is the same version in the skill order (1.2 finds 1.2.0).
func (s *Skill) Find(v string) (*Version, bool) {
	for _, x := range s.Versions {
		if x.Version == v {
			return x, true
		}
	}
	p, ok := parseVersion(v)
	if !ok {
		return nil, false
	}
	for _, x := range s.Versions {
		if x.parsed.compare(p) == 0 {
			return x, true
		}
	}
	return nil, false
}

// Catalog is the loaded skills, by id. The zero value and nil are empty
// catalogs. A Catalog is immutable and safe for concurrent use; treat what
// it returns as read-only.
type Catalog = dirload.Catalog[*Skill]

// MaxFileSize bounds one skill file.
const MaxFileSize = 1 << 20

// Load reads every skill under dir in fsys. display is how problems name
// dir (the path as the operator wrote it, resolved). A load that finds any
// problem returns an error listing them all (each file's as a
// *config.LoadError, joined) and no catalog.
func Load(fsys fs.FS, dir, display string) (*Catalog, error) {
	var versions []*Version
	errs, err := dirload.Read(dirload.Dir{FS: fsys, Path: dir, Display: display,
		Prefix: "skills", Setting: "skills.dir", Ext: ".md", MaxFileSize: MaxFileSize},
		func(f dirload.File) []config.Problem {
			v, problems := parseFile(f.Name, f.Data)
			if len(problems) == 0 {
				versions = append(versions, v)
			}
			return problems
		})
	if err != nil {
		return nil, err
	}
	c := &Catalog{}
	for _, v := range versions {
		s, ok := c.Lookup(v.ID)
		if !ok {
			s = &Skill{ID: v.ID}
			c.Add(v.ID, s)
		}
		if i := slices.IndexFunc(s.Versions, func(x *Version) bool { return x.parsed.compare(v.parsed) == 0 }); i >= 0 {
			prev := s.Versions[i]
			errs = append(errs, &config.LoadError{File: v.File, Problems: []config.Problem{{Line: v.versionLine, Column: v.versionColumn, Field: "version",
				Message: fmt.Sprintf("skill %s version %s is already defined by %s (version %s): each version of a skill is one file", v.ID, v.Version, prev.File, prev.Version)}}})
			continue
		}
		s.Versions = append(s.Versions, v)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, id := range c.IDs() {
		s, _ := c.Lookup(id)
		slices.SortFunc(s.Versions, func(a, b *Version) int { return b.parsed.compare(a.parsed) })
	}
	return c, nil
}

// FromConfig loads the skills of cfg.Skills.Dir; with none configured it
// returns an empty catalog. A configuration read from a file (cfg.Source
// set) resolves a relative directory against the file's directory. One
// without a Source was parsed from memory: its directory is read from
// embedded when given (displayed under embeddedRoot, as praxa serve --dev
// reads the embedded examples), else from the working directory.
func FromConfig(cfg *config.Config, embedded fs.FS, embeddedRoot string) (*Catalog, error) {
	dir := cfg.Skills.Dir
	if dir == "" {
		return &Catalog{}, nil
	}
	if cfg.Source == "" && embedded != nil {
		return Load(embedded, dir, path.Join(embeddedRoot, dir))
	}
	if !filepath.IsAbs(dir) && cfg.Source != "" {
		dir = filepath.Join(filepath.Dir(cfg.Source), dir)
	}
	return Load(os.DirFS(dir), ".", filepath.ToSlash(filepath.Clean(dir)))
}
