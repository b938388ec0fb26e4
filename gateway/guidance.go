package gateway

import (
	"context"
	"sync/atomic"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
)

// This file holds the skills and scripts the catalogue describes and the
// script executors run, and describe's guidance answer for a skill. The
// skills' own read (aura_get_skill) is package knowledge's, which a reload
// hands the same catalogue (op.Staged).

// contextState holds the skills and scripts of the configuration in force:
// the catalogue describes both, the script executors run the scripts. A
// reload replaces both at once (Service.Reload), so a call reads the
// skills and scripts of one configuration.
type contextState struct {
	cur atomic.Pointer[contextParts]
}

// contextParts are one configuration's skills and scripts.
type contextParts struct {
	skills  *skills.Catalog
	scripts *scripts.Catalog
}

func newContextState(o *Options) *contextState {
	c := &contextState{}
	c.install(o.Skills, o.Scripts)
	return c
}

// install makes cat and scr (nil: none) the skills and scripts in force.
func (c *contextState) install(cat *skills.Catalog, scr *scripts.Catalog) {
	if cat == nil {
		cat = &skills.Catalog{}
	}
	if scr == nil {
		scr = &scripts.Catalog{}
	}
	c.cur.Store(&contextParts{skills: cat, scripts: scr})
}

// scripts returns the scripts in force.
func (c *contextState) scripts() *scripts.Catalog { return c.cur.Load().scripts }

// skills returns the skills in force.
func (c *contextState) skills() *skills.Catalog { return c.cur.Load().skills }

// GuidanceDescription is the answer of praxec.query describe for a skill
// (and, with the script's source as body, for a script):
// the flatter guidance shape of seeds/000, {kind, subject, verb, body,
// links, lexicon?}, since a skill carries a guidance body rather than a
// DiscoveryItem. verb names the operation answered ("describe"); body is
// the newest version's markdown; lexicon, present only when some of the
// skill's tags name lexicon terms (a ref or alias counts), holds those
// terms' entries.
type GuidanceDescription struct {
	Kind    string                 `json:"kind"`
	Subject string                 `json:"subject"`
	Verb    string                 `json:"verb"`
	Body    string                 `json:"body"`
	Links   []contracts.Link       `json:"links"`
	Lexicon []discovery.LexiconHit `json:"lexicon,omitempty"`
}

// describeSkill answers describe for a skill of the index. It reads the
// lexicon in a transaction of its own: describe otherwise answers from
// memory.
func (s *Service) describeSkill(ctx context.Context, e *env, it *discovery.Item) (any, error) {
	sk, ok := s.ctxState.skills().Lookup(it.ID)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeNotFound, "there is no skill %q", it.ID)
	}
	v := sk.Latest()
	out := GuidanceDescription{Kind: string(discovery.KindSkill), Subject: sk.ID, Verb: "describe", Body: v.Body,
		// Links on the praxec surface name praxec tools only (seeds/000): a
		// host registered with the praxec set cannot call aura_get_skill.
		Links: []contracts.Link{homeLink(), searchLink("")}}
	var err error
	if out.Lexicon, err = s.guidanceLexicon(ctx, v.Tags); err != nil {
		return nil, err
	}
	s.describeEvent(e, sk.ID, string(discovery.KindSkill))
	return out, nil
}

// guidanceLexicon returns the entries of the lexicon terms that tags name
// (a ref or alias counts), once each, for the lexicon member of the
// guidance shape; none without tags. It reads the lexicon in a
// transaction of its own: describe otherwise answers from memory.
func (s *Service) guidanceLexicon(ctx context.Context, tags []string) ([]discovery.LexiconHit, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	var hits []discovery.LexiconHit
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		lex, err := s.lexicon(ctx, tx)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, tag := range tags {
			if t, ok := lex.Lookup(tag); ok && !seen[t.Term] {
				seen[t.Term] = true
				hits = append(hits, discovery.LexiconHit{Term: t.Term, Entry: t.Entry})
			}
		}
		return nil
	})
	return hits, err
}
