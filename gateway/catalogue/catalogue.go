// Package catalogue serves what a caller discovers before it acts: the
// catalogue of workflows, capabilities, connections, skills and scripts
// (praxec.query search and describe, aura_search_capabilities), and the
// lexicon (lookup, search, define, with the placeholder terms that paused
// commands wait on). Its state is one configuration's discovery index,
// lexicon terms, skills and scripts, which a reload replaces as a whole
// (Install), and the lexicon overlay kept in the store.
//
// It is a part of the service (package gateway) that also serves
// operations through the seam of package op: the service builds it,
// registers its Operations, and reads it where missions need it (the
// lexicon subjects that pause a start or submit, the workflows a goal
// names, the scripts a script executor runs). It imports neither the
// service nor a feature.
package catalogue

import (
	"cmp"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// Catalogue is the catalogue and lexicon in force. Its methods are safe
// for use by multiple goroutines.
type Catalogue struct {
	store store.Store
	now   func() time.Time
	log   *slog.Logger
	pins  *pins.Pins
	// imports are the import states of the proxy.import connections a
	// Reloader publishes (SetImportStates); nil before the first.
	imports atomic.Pointer[[]ImportState]
	// cat is the catalogue in force; a configuration reload replaces it
	// as a whole (Install).
	cat atomic.Pointer[catalog]
	// snapshot caches the merged lexicon of the last overlay read, for
	// the catalogue generation it was merged from.
	snapshot                                   atomic.Pointer[lexiconSnapshot]
	lexiconWrites, skillsSearch, scriptsSearch bool
}

// catalog is one configuration's discovery: the index, the configuration's
// lexicon terms, its skills and scripts, and a generation that changes with
// every reload so that a lexicon merged from an older one is not served.
type catalog struct {
	index *discovery.Index
	// lexiconBase holds the configuration's lexicon terms.
	lexiconBase map[string]config.LexiconEntry
	skills      *skills.Catalog
	scripts     *scripts.Catalog
	generation  uint64
	// subjects says whether any workflow declares lexicon subjects; without
	// one, starts and submits skip the check.
	subjects bool
}

// Options configure a Catalogue. The zero value is usable.
type Options struct {
	// Now is the clock (default time.Now); Logger receives operational
	// logs (default slog.Default()).
	Now    func() time.Time
	Logger *slog.Logger
	// Index is the catalogue search and describe answer from; nil indexes
	// Workflows alone.
	Index     *discovery.Index
	Workflows *workflow.Registry
	// Lexicon holds the configuration's lexicon terms, keyed by term.
	Lexicon map[string]config.LexiconEntry
	// Skills and Scripts are the configuration's (none when nil); the
	// index lists them under kinds skill and script.
	Skills  *skills.Catalog
	Scripts *scripts.Catalog
	// LexiconWrites accepts praxec.command define (off by default: a
	// define answers LEXICON_WRITES_DISABLED).
	LexiconWrites bool
	// SkillsSearch and ScriptsSearch accept the skill and script kinds in
	// a search (INVALID_PARAMS otherwise).
	SkillsSearch, ScriptsSearch bool
	// Pins, when set, quarantines imported capabilities: search and
	// describe show their quarantine.
	Pins *pins.Pins
}

// New returns the Catalogue of st.
func New(st store.Store, opts *Options) *Catalogue {
	o := *cmp.Or(opts, &Options{})
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Logger = cmp.Or(o.Logger, slog.Default())
	c := &Catalogue{store: st, now: o.Now, log: o.Logger, pins: o.Pins,
		lexiconWrites: o.LexiconWrites, skillsSearch: o.SkillsSearch, scriptsSearch: o.ScriptsSearch}
	c.Install(o.Index, o.Workflows, o.Lexicon, o.Skills, o.Scripts)
	return c
}

// Operations are the operations the Catalogue serves, for
// gateway.Service.Register.
func (c *Catalogue) Operations() []op.Operation {
	return []op.Operation{
		{Name: "searchCapabilities", Read: c.searchCapabilities, Storeless: true},
		{Name: string(contracts.OpSearch), Read: c.praxecSearch, Storeless: true},
		{Name: string(contracts.OpDescribe), Read: c.describe, Storeless: true},
		{Name: string(contracts.OpLexiconSearch), Read: c.lexiconSearch},
		{Name: string(contracts.OpLexiconLookup), Read: c.lexiconLookup},
		{Name: string(contracts.OpDefine), Mutate: c.defineTerm},
	}
}

// Install makes index (nil: one of workflows alone), with the items of
// cat and scr (nil: none) added, lexicon, cat and scr the catalogue in
// force, as a whole.
func (c *Catalogue) Install(index *discovery.Index, workflows *workflow.Registry, lexicon map[string]config.LexiconEntry, cat *skills.Catalog, scr *scripts.Catalog) {
	if cat == nil {
		cat = &skills.Catalog{}
	}
	if scr == nil {
		scr = &scripts.Catalog{}
	}
	if index == nil {
		index, _ = discovery.Build(workflows, nil) // workflows alone: their ids are unique
	}
	// Skills and scripts are indexed under kinds skill and script; search
	// offers them only when the server enables their search
	// (searchQuery), describe answers them in the flatter guidance shape
	// (describeSkill, describeScript).
	if items := append(discovery.SkillItems(cat), discovery.ScriptItems(scr)...); len(items) > 0 {
		with, skipped, err := index.With(items)
		switch {
		case err != nil:
			c.log.Error("skills and scripts left out of the discovery index", "err", err)
		default:
			index = with
			if len(skipped) > 0 {
				c.log.Warn("skills or scripts left out of the discovery index: their ids name other entries", "ids", skipped)
			}
		}
	}
	next := &catalog{index: index, lexiconBase: lexicon, skills: cat, scripts: scr, subjects: anySubjects(workflows)}
	if prev := c.cat.Load(); prev != nil {
		next.generation = prev.generation + 1
	}
	c.cat.Store(next)
}

// anySubjects says whether a workflow of reg declares lexicon subjects.
func anySubjects(reg *workflow.Registry) bool {
	if reg == nil {
		return false
	}
	for _, id := range reg.IDs() {
		if d, ok := reg.Lookup(id); ok && len(d.Subjects) > 0 {
			return true
		}
	}
	return false
}

// Index returns the discovery index in force.
func (c *Catalogue) Index() *discovery.Index { return c.cat.Load().index }

// Skills returns the skills in force.
func (c *Catalogue) Skills() *skills.Catalog { return c.cat.Load().skills }

// Scripts returns the scripts in force.
func (c *Catalogue) Scripts() *scripts.Catalog { return c.cat.Load().scripts }

// SubjectsDeclared says whether a workflow in force declares lexicon
// subjects (the start and submit check for unknown subjects).
func (c *Catalogue) SubjectsDeclared() bool { return c.cat.Load().subjects }

// Subject is the lexicon:TERM subject of term.
func Subject(term string) string { return lexiconSubject(term) }
