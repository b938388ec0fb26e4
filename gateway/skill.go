package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/certs"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
)

// This file serves aura_get_skill. Skills are gateway-wide configuration
// (package skills): every tenant reads the same skills, so the answer
// depends on the skill id and version alone, and the read touches no store.

// contextState holds what the context and world-model reads answer from
// beside the store: the skills and the trusted certificate issuers of the
// configuration in force. A reload replaces both at once (Service.Reload),
// so a call reads the skills and issuers of one configuration.
type contextState struct {
	cur atomic.Pointer[contextParts]
}

// contextParts are one configuration's skills, scripts and certificate
// issuers.
type contextParts struct {
	skills  *skills.Catalog
	scripts *scripts.Catalog
	issuers certs.Issuers
}

func newContextState(o *Options) *contextState {
	c := &contextState{}
	c.install(o.Skills, o.Scripts, o.CertificateIssuers)
	return c
}

// install makes cat and scr (nil: none) and issuers the skills, scripts
// and issuers in force.
func (c *contextState) install(cat *skills.Catalog, scr *scripts.Catalog, issuers certs.Issuers) {
	if cat == nil {
		cat = &skills.Catalog{}
	}
	if scr == nil {
		scr = &scripts.Catalog{}
	}
	c.cur.Store(&contextParts{skills: cat, scripts: scr, issuers: issuers})
}

// scripts returns the scripts in force.
func (c *contextState) scripts() *scripts.Catalog { return c.cur.Load().scripts }

// skills returns the skills in force.
func (c *contextState) skills() *skills.Catalog { return c.cur.Load().skills }

// issuers returns the trusted certificate issuers in force.
func (c *contextState) issuers() certs.Issuers { return c.cur.Load().issuers }

// SkillVersionRef is one entry of a skill's version history.
type SkillVersionRef struct {
	Version       string `json:"version"`
	EvidenceState string `json:"evidenceState"`
	Title         string `json:"title"`
}

// SkillAnswer is the answer of aura_get_skill: one version of a skill, its
// evidence, and the history of every version, newest first.
type SkillAnswer struct {
	ID            string            `json:"id"`
	Version       string            `json:"version"`
	Title         string            `json:"title"`
	Description   string            `json:"description,omitempty"`
	Tags          []string          `json:"tags"`
	Body          string            `json:"body"`
	EvidenceState string            `json:"evidenceState"`
	Evidence      skills.Evidence   `json:"evidence"`
	LatestVersion string            `json:"latestVersion"`
	Versions      []SkillVersionRef `json:"versions"`
}

// getSkill serves aura_get_skill: the version named, else the newest one
// (skills.CompareVersions orders them), whatever its evidence state.
func (s *Service) getSkill(_ context.Context, _ store.ReadTx, e *env) (any, error) {
	id := stringArg(e.args, "skillId")
	sk, ok := s.ctxState.skills().Lookup(id)
	if !ok {
		return nil, &contracts.Error{Code: contracts.CodeNotFound, Message: fmt.Sprintf("there is no skill %q", id),
			Hint: "Skill ids are fixed by the gateway's configuration; ask the operator which skills it serves."}
	}
	v := sk.Latest()
	version, asked := e.args["version"].(string)
	if asked {
		var found bool
		if v, found = sk.Find(version); !found {
			known := make([]string, len(sk.Versions))
			for i, x := range sk.Versions {
				known[i] = x.Version
			}
			return nil, &contracts.Error{Code: contracts.CodeNotFound,
				Message: fmt.Sprintf("the skill %s has no version %q", id, version),
				Hint:    "Its versions, newest first: " + strings.Join(known, ", ") + ". Leave version out for the newest.",
				Links: []contracts.Link{{Rel: "latest", Title: "Read the newest version", Method: contracts.ToolGetSkill,
					Args: map[string]any{"skillId": id}}}}
		}
	}
	out := SkillAnswer{ID: sk.ID, Version: v.Version, Title: v.Title, Description: v.Description, Tags: v.Tags, Body: v.Body,
		EvidenceState: v.Evidence.State, Evidence: v.Evidence, LatestVersion: sk.Latest().Version,
		Versions: make([]SkillVersionRef, len(sk.Versions))}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	for i, x := range sk.Versions {
		out.Versions[i] = SkillVersionRef{Version: x.Version, EvidenceState: x.Evidence.State, Title: x.Title}
	}
	e.event("skill.read", map[string]any{"skillId": sk.ID, "version": v.Version, "evidenceState": v.Evidence.State})
	return out, nil
}

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
