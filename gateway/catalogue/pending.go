package catalogue

import (
	"context"
	"fmt"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// PendingDefinition is the state of a placeholder term (seeds/000): an
// unknown subject that paused a command (SUBJECT_NEEDS_DEFINITION) and
// waits for link_as_alias or define_new to resolve it, or for cancel to
// drop it.
const PendingDefinition = "PENDING_DEFINITION"

// PendingTerm is a placeholder term as lexicon reads show it: the unknown
// subject, its state, how many of the tenant's commands wait on it and
// since when, and the moves that resolve it.
type PendingTerm struct {
	Term           string           `json:"term"`
	State          string           `json:"state"`
	QueuedCommands int              `json:"queuedCommands"`
	Since          string           `json:"since"`
	Links          []contracts.Link `json:"links"`
}

// pendingTerms groups the tenant's paused commands into placeholder terms,
// one a subject, in subject order; subjectKey "" for every subject.
func (c *Catalogue) pendingTerms(ctx context.Context, tx store.ReadTx, lex *discovery.Lexicon, tenant, subjectKey string) ([]PendingTerm, error) {
	rows, err := tx.ListPendingSubjects(ctx, tenant, subjectKey)
	if err != nil {
		return nil, err
	}
	var out []PendingTerm
	var since []time.Time
	for _, r := range rows {
		if n := len(out); n > 0 && config.TermKey(out[n-1].Term) == r.SubjectKey {
			out[n-1].QueuedCommands++
			if r.CreatedAt.Before(since[n-1]) {
				since[n-1] = r.CreatedAt
			}
			continue
		}
		if _, known := lex.Lookup(r.Subject); known {
			continue // resolved since; its rows go with the command's retry
		}
		out = append(out, PendingTerm{Term: r.Subject, State: PendingDefinition, QueuedCommands: 1,
			Links: c.ResolutionLinks(r.Subject, lex.Candidates(r.Subject))})
		since = append(since, r.CreatedAt)
	}
	for i := range out {
		out[i].Since = since[i].UTC().Format(time.RFC3339Nano)
	}
	return out, nil
}

// PendingTerms lists the placeholder terms of tenant (praxa lexicon list).
func (c *Catalogue) PendingTerms(ctx context.Context, tenant string) ([]PendingTerm, error) {
	var out []PendingTerm
	err := c.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		lex, err := c.Lexicon(ctx, tx)
		if err != nil {
			return err
		}
		out, err = c.pendingTerms(ctx, tx, lex, tenant, "")
		return err
	})
	if err != nil {
		return nil, op.AsError(err)
	}
	return out, nil
}

// ResolutionLinks are the moves that resolve an unknown subject (seeds/000):
// link it as an alias of the closest candidate, or define it, when the
// gateway accepts lexicon writes; cancel the commands waiting on it.
func (c *Catalogue) ResolutionLinks(subject string, cands []discovery.Candidate) []contracts.Link {
	links := []contracts.Link{}
	if c.lexiconWrites && config.ValidTerm(subject) {
		var bounded string
		if len(cands) > 0 {
			best := cands[0].Term
			bounded = cands[0].BoundedContext
			links = append(links, contracts.Link{Rel: "link_as_alias", Method: contracts.ToolPraxecCommand,
				Args: map[string]any{"subject": lexiconSubject(best), "definition": map[string]any{"aliases_add": []string{subject}}},
				Hint: fmt.Sprintf("Use this if '%s' is a synonym for '%s'.", subject, best)})
		}
		def := map[string]any{"definition_short": "<fill in>"}
		if bounded != "" {
			def["boundedContext"] = bounded
		}
		links = append(links, contracts.Link{Rel: "define_new", Method: contracts.ToolPraxecCommand,
			Args: map[string]any{"subject": lexiconSubject(subject), "definition": def},
			Hint: fmt.Sprintf("Use this if '%s' is a genuinely new concept.", subject)})
	}
	return append(links, contracts.Link{Rel: "cancel", Method: contracts.ToolPraxecCommand,
		Args: map[string]any{"intent": string(contracts.OpCancelPendingSubject), "unknown_subject": subject},
		Hint: "Abandon the original command — the subject was a mistake."})
}
