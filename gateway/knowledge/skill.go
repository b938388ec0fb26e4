package knowledge

import (
	"context"
	"fmt"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
)

// This file serves aura_get_skill. Skills are gateway-wide configuration
// (package skills): every tenant reads the same skills, so the answer
// depends on the skill id and version alone, and the read touches no store.

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
func (k *Knowledge) getSkill(_ context.Context, _ store.ReadTx, e *op.Request) (any, error) {
	id := op.StringArg(e.Args, "skillId")
	sk, ok := k.cur.Load().skills.Lookup(id)
	if !ok {
		return nil, &contracts.Error{Code: contracts.CodeNotFound, Message: fmt.Sprintf("there is no skill %q", id),
			Hint: "Skill ids are fixed by the gateway's configuration; ask the operator which skills it serves."}
	}
	v := sk.Latest()
	version, asked := e.Args["version"].(string)
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
	e.Event("skill.read", map[string]any{"skillId": sk.ID, "version": v.Version, "evidenceState": v.Evidence.State})
	return out, nil
}
