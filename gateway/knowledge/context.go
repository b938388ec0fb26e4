package knowledge

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// This file serves the purpose-filtered context: aura_query_memory and
// aura_list_goals.
//
// Memory records and goals are tenant data (imported by the operator with
// praxa memory import and praxa goals import). Each record lives in one
// compartment and names the purposes it may serve. A read names exactly
// one compartment and one purpose, and the token bounds both: its
// compartments and purposes claims list what it allows, matched exactly
// (no wildcard, no prefix). A compartment the token does not allow is
// refused 403 compartment-forbidden, a purpose it does not allow 403
// purpose-forbidden; neither is ever widened or replaced. A token without
// the claims allows nothing. The store is then asked for the tenant's
// records of that compartment allowed for that purpose only, so a record
// outside them is never read, let alone returned.
//
// Ranking (aura_query_memory). The query is split into tokens as discovery
// search splits it (lower case, cut at anything that is not a letter or a
// digit, one-letter words and stop words dropped). A record scores, for
// each distinct query token, MemoryTagWeight when one of its tags holds the
// token, plus the number of times its content holds the token, at most
// MemoryContentCap. Records scoring 0 are left out. Results come best
// first: by score, then newest (createdAt), then by id. A query without
// tokens (empty, or stop words only) lists the records newest first, each
// with score 0. tags, when given, keeps only the records that carry all of
// them.

// The ranking weights of aura_query_memory.
const (
	MemoryTagWeight  = 3
	MemoryContentCap = 3
)

// contextScope checks a context read of tool, with args, against the
// principal's compartments and purposes claims. A refusal links the same
// read in a compartment and for a purpose the token allows, when it allows
// any, and where to ask for a token that allows more.
func contextScope(p *auth.Principal, tool string, args map[string]any) *contracts.Error {
	ce := contextRefusal(p, op.StringArg(args, "compartment"), op.StringArg(args, "purpose"))
	if ce == nil {
		return nil
	}
	if len(p.Compartments) > 0 && len(p.Purposes) > 0 {
		allowed := maps.Clone(args)
		allowed["compartment"], allowed["purpose"] = p.Compartments[0], p.Purposes[0]
		ce.Links = append(ce.Links, contracts.Link{Rel: "retry", Title: "Read a compartment, for a purpose, the token allows",
			Method: tool, Args: allowed})
	}
	ce.Links = append(ce.Links, authorizationLink("a token whose compartments and purposes claims allow this read"))
	return ce
}

// contextRefusal is the refusal of a read of compartment for purpose,
// nil when the principal's claims allow it.
func contextRefusal(p *auth.Principal, compartment, purpose string) *contracts.Error {
	okC := slices.Contains(p.Compartments, compartment)
	okP := slices.Contains(p.Purposes, purpose)
	if okC && okP {
		return nil
	}
	var fields []contracts.FieldError
	if !okC {
		fields = append(fields, contracts.FieldError{Pointer: "/compartment", Keyword: "compartments",
			Detail: "is not among the compartments the access token allows"})
	}
	if !okP {
		fields = append(fields, contracts.FieldError{Pointer: "/purpose", Keyword: "purposes",
			Detail: "is not among the purposes the access token allows"})
	}
	hint := "The compartments and purposes a call may name come from its access token (claims compartments and purposes) and are set by the application, " +
		"not by the model: the gateway never widens them. Use a compartment and a purpose the token allows, or ask for a token that allows this one."
	if !okC {
		return &contracts.Error{Code: contracts.CodeCompartmentForbidden, Fields: fields, Hint: hint,
			Message: fmt.Sprintf("the access token does not allow the compartment %q", compartment)}
	}
	return &contracts.Error{Code: contracts.CodePurposeForbidden, Fields: fields, Hint: hint,
		Message: fmt.Sprintf("the access token does not allow the purpose %q", purpose)}
}

// memoryDoc is what a memory record's Doc holds.
type memoryDoc struct {
	Content string `json:"content"`
}

// goalDoc is what a goal's Doc holds.
type goalDoc struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
}

// MemoryRecord is one record of a memory answer.
type MemoryRecord struct {
	ID        string   `json:"id"`
	Content   string   `json:"content"`
	Tags      []string `json:"tags"`
	Score     float64  `json:"score"`
	CreatedAt string   `json:"createdAt"`
}

// MemoryResult is the answer of aura_query_memory.
type MemoryResult struct {
	Compartment string         `json:"compartment"`
	Purpose     string         `json:"purpose"`
	Query       string         `json:"query"`
	Records     []MemoryRecord `json:"records"`
}

// Goal is one goal of a goals answer.
type Goal struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Status      string   `json:"status"`
	Tags        []string `json:"tags"`
	CreatedAt   string   `json:"createdAt"`
}

// GoalList is the answer of aura_list_goals.
type GoalList struct {
	Compartment string `json:"compartment"`
	Purpose     string `json:"purpose"`
	Goals       []Goal `json:"goals"`
}

// wordCounts counts the words of text under the tokenization of
// discovery.Tokens (without its stop-word and length filters, which the
// query side applies).
func wordCounts(text string) map[string]int {
	out := map[string]int{}
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[strings.ToLower(f)]++
	}
	return out
}

// scoreMemory scores one record for the query tokens.
func scoreMemory(tokens []string, content string, tags []string) float64 {
	counts := wordCounts(content)
	tagWords := map[string]bool{}
	for _, t := range tags {
		for w := range wordCounts(t) {
			tagWords[w] = true
		}
	}
	score := 0
	for _, t := range tokens {
		if tagWords[t] {
			score += MemoryTagWeight
		}
		score += min(counts[t], MemoryContentCap)
	}
	return float64(score)
}

func limitArg(args map[string]any) int {
	n := int(op.Int64Arg(args, "limit"))
	if n <= 0 {
		return discovery.DefaultLimit
	}
	return min(n, discovery.MaxLimit)
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// contextRecords returns the compartment and purpose of the context read
// e, once contextScope allows them to its principal, and the records of
// kind there. The store filters them by tenant, compartment and purpose;
// so does this, the belt to its braces.
func contextRecords(ctx context.Context, tx store.ReadTx, e *op.Request, kind string) (compartment, purpose string, _ []store.ContextRecord, _ error) {
	compartment, purpose = op.StringArg(e.Args, "compartment"), op.StringArg(e.Args, "purpose")
	if ce := contextScope(e.Principal, e.Tool.Name, e.Args); ce != nil {
		return "", "", nil, ce
	}
	records, err := tx.ListContextRecords(ctx, kind, e.Principal.Tenant, compartment, purpose)
	if err != nil {
		return "", "", nil, err
	}
	var out []store.ContextRecord
	for _, r := range records {
		if r.Tenant == e.Principal.Tenant && r.Compartment == compartment && slices.Contains(r.Purposes, purpose) {
			out = append(out, r)
		}
	}
	return compartment, purpose, out, nil
}

// queryMemory serves aura_query_memory.
func (k *Knowledge) queryMemory(ctx context.Context, tx store.ReadTx, e *op.Request) (any, error) {
	compartment, purpose, records, err := contextRecords(ctx, tx, e, store.KindMemory)
	if err != nil {
		return nil, err
	}
	query, want := op.StringArg(e.Args, "query"), op.StringsArg(e.Args, "tags")
	tokens := discovery.Tokens(query)
	type scored struct {
		MemoryRecord
		created time.Time
	}
	var hits []scored
	for _, r := range records {
		if slices.ContainsFunc(want, func(t string) bool { return !slices.Contains(r.Tags, t) }) {
			continue
		}
		var doc memoryDoc
		if err := json.Unmarshal(r.Doc, &doc); err != nil {
			return nil, fmt.Errorf("memory record %s: %w", r.ID, err)
		}
		score := 0.0
		if len(tokens) > 0 {
			if score = scoreMemory(tokens, doc.Content, r.Tags); score == 0 {
				continue
			}
		}
		tags := r.Tags
		if tags == nil {
			tags = []string{}
		}
		hits = append(hits, scored{MemoryRecord{ID: r.ID, Content: doc.Content, Tags: tags, Score: score, CreatedAt: formatTime(r.CreatedAt)}, r.CreatedAt})
	}
	slices.SortFunc(hits, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), b.created.Compare(a.created), strings.Compare(a.ID, b.ID))
	})
	out := MemoryResult{Compartment: compartment, Purpose: purpose, Query: query, Records: []MemoryRecord{}}
	for _, h := range hits[:min(len(hits), limitArg(e.Args))] {
		out.Records = append(out.Records, h.MemoryRecord)
	}
	e.Event("memory.queried", map[string]any{"compartment": compartment, "purpose": purpose, "returned": len(out.Records)})
	return out, nil
}

// listGoals serves aura_list_goals: the goals of the compartment allowed
// for the purpose, by id, optionally of one status.
func (k *Knowledge) listGoals(ctx context.Context, tx store.ReadTx, e *op.Request) (any, error) {
	compartment, purpose, records, err := contextRecords(ctx, tx, e, store.KindGoal)
	if err != nil {
		return nil, err
	}
	status, limit := op.StringArg(e.Args, "status"), limitArg(e.Args)
	out := GoalList{Compartment: compartment, Purpose: purpose, Goals: []Goal{}}
	for _, r := range records {
		if len(out.Goals) == limit {
			break
		}
		var doc goalDoc
		if err := json.Unmarshal(r.Doc, &doc); err != nil {
			return nil, fmt.Errorf("goal %s: %w", r.ID, err)
		}
		if status != "" && doc.Status != status {
			continue
		}
		tags := r.Tags
		if tags == nil {
			tags = []string{}
		}
		out.Goals = append(out.Goals, Goal{ID: r.ID, Title: doc.Title, Description: doc.Description, Status: doc.Status,
			Tags: tags, CreatedAt: formatTime(r.CreatedAt)})
	}
	e.Event("goals.listed", map[string]any{"compartment": compartment, "purpose": purpose, "returned": len(out.Goals)})
	return out, nil
}
