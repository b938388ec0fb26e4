package catalogue

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// This file is describe's guidance answer for a skill or a script. The
// skills' own read (aura_get_skill) is package knowledge's, which a reload
// hands the same skills catalogue (op.Staged).

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
func (c *Catalogue) describeSkill(ctx context.Context, e *op.Request, it *discovery.Item) (any, error) {
	sk, ok := c.Skills().Lookup(it.ID)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeNotFound, "there is no skill %q", it.ID)
	}
	v := sk.Latest()
	return c.guidance(ctx, e, discovery.KindSkill, sk.ID, v.Body, v.Tags)
}

// guidance answers describe of subject, of kind, in the guidance shape:
// body, the lexicon entries its tags name, and the describe event.
func (c *Catalogue) guidance(ctx context.Context, e *op.Request, kind discovery.Kind, subject, body string, tags []string) (any, error) {
	out := GuidanceDescription{Kind: string(kind), Subject: subject, Verb: "describe", Body: body,
		// Links on the praxec surface name praxec tools only (seeds/000): a
		// host registered with the praxec set cannot call aura_get_skill.
		Links: []contracts.Link{HomeLink(), SearchLink("")}}
	var err error
	if out.Lexicon, err = c.guidanceLexicon(ctx, tags); err != nil {
		return nil, err
	}
	c.describeEvent(e, subject, string(kind))
	return out, nil
}

// guidanceLexicon returns the entries of the lexicon terms that tags name
// (a ref or alias counts), once each, for the lexicon member of the
// guidance shape; none without tags. It reads the lexicon in a
// transaction of its own: describe otherwise answers from memory.
func (c *Catalogue) guidanceLexicon(ctx context.Context, tags []string) ([]discovery.LexiconHit, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	var hits []discovery.LexiconHit
	err := c.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		lex, err := c.Lexicon(ctx, tx)
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

// describeScript answers describe for a script of the index in the
// guidance shape of seeds/000: its body is the script's source.
func (c *Catalogue) describeScript(ctx context.Context, e *op.Request, it *discovery.Item) (any, error) {
	sc, ok := c.Scripts().Lookup(it.ID)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeNotFound, "there is no script %q", it.ID)
	}
	out, err := c.guidance(ctx, e, discovery.KindScript, sc.ID, sc.Source, sc.Tags)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", sc.ID, err)
	}
	return out, nil
}
