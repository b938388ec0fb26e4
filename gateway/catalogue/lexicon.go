package catalogue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// This file serves the lexicon: lookup (praxec.query subject lexicon:TERM),
// search (praxec.query query with kind lexicon) and define (praxec.command
// subject lexicon:TERM with a definition).
//
// The configuration's lexicon section is the operator's source. Defines
// land in an overlay kept in the store, so that every replica answers the
// same terms and a restart keeps them; an overlay term replaces the
// configuration's term of the same key until an operator folds it into
// praxec.yaml. The lexicon is gateway-wide configuration, not tenant data:
// the overlay is shared by every tenant, and each term records the tenant,
// subject and client that wrote it last. Define needs the lexicon:write
// scope and a server started with lexicon writes enabled.

// persistedToOverlay is the persisted_to of a define answer.
const persistedToOverlay = "overlay"

// lexiconSnapshot is a merged lexicon and the overlay it was built from.
type lexiconSnapshot struct {
	overlay    string // fingerprint of the overlay rows
	generation uint64 // of the catalogue whose terms it merged
	lex        *discovery.Lexicon
}

// Lexicon returns the merged lexicon as of tx: the configuration's terms
// under the overlay's. The merge is rebuilt only when the overlay changed
// since the last call.
func (c *Catalogue) Lexicon(ctx context.Context, tx store.ReadTx) (*discovery.Lexicon, error) {
	rows, err := tx.ListLexiconTerms(ctx)
	if err != nil {
		return nil, err
	}
	var fp strings.Builder
	for _, r := range rows {
		fp.WriteString(r.Key)
		fp.WriteByte(0)
		fp.WriteString(strconv.FormatInt(r.Version, 10))
		fp.WriteByte(0)
		fp.Write(r.Entry)
		fp.WriteByte(0)
	}
	cat := c.cat.Load()
	if snap := c.snapshot.Load(); snap != nil && snap.overlay == fp.String() && snap.generation == cat.generation {
		return snap.lex, nil
	}
	overlay := make([]discovery.Term, 0, len(rows))
	for _, r := range rows {
		var e discovery.Entry
		if err := json.Unmarshal(r.Entry, &e); err != nil {
			return nil, fmt.Errorf("lexicon overlay term %q: %w", r.Key, err)
		}
		overlay = append(overlay, discovery.Term{Term: r.Term, Entry: e})
	}
	lex := discovery.NewLexicon(cat.lexiconBase, overlay)
	c.snapshot.Store(&lexiconSnapshot{overlay: fp.String(), generation: cat.generation, lex: lex})
	return lex, nil
}

// LexiconLookup is the answer of a lexicon lookup. Entry is null when the
// term has no definition; State is PendingDefinition when commands of the
// caller's tenant wait on it (a placeholder term, seeds/000), and Pending
// says how many and since when.
type LexiconLookup struct {
	Term    string           `json:"term"`
	Entry   *discovery.Entry `json:"entry"`
	State   string           `json:"state,omitempty"`
	Pending *PendingTerm     `json:"pending,omitempty"`
	Links   []contracts.Link `json:"links"`
}

// LexiconSearch is the answer of a lexicon search: the terms that match,
// then the placeholder terms of the caller's tenant that do (Pending,
// absent when none).
type LexiconSearch struct {
	Hits    []discovery.LexiconHit `json:"hits"`
	Pending []PendingTerm          `json:"pending,omitempty"`
	Links   []contracts.Link       `json:"links"`
}

// LexiconDefined is the answer of a define.
type LexiconDefined struct {
	Term        string           `json:"term"`
	Entry       discovery.Entry  `json:"entry"`
	PersistedTo string           `json:"persisted_to"`
	Links       []contracts.Link `json:"links"`
}

func lexiconSubject(term string) string { return contracts.LexiconPrefix + term }

func lookupLink(term string) contracts.Link {
	return contracts.Link{Rel: "lookup", Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": lexiconSubject(term)}}
}

// subjectTerm returns the term of a lexicon:TERM subject.
func subjectTerm(e *op.Request) (string, *contracts.Error) {
	subject := op.StringArg(e.Args, "subject")
	term, ok := strings.CutPrefix(subject, contracts.LexiconPrefix)
	term = strings.TrimSpace(term)
	switch {
	case !ok:
		return "", &contracts.Error{Code: contracts.CodeInvalidParams, Message: "a define names its term as lexicon:TERM",
			Hint:   "Send subject lexicon:TERM with the definition.",
			Fields: []contracts.FieldError{{Pointer: "/subject", Detail: "must start with " + contracts.LexiconPrefix}}}
	case term == "":
		return "", &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the subject names no term",
			Fields: []contracts.FieldError{{Pointer: "/subject", Detail: "must name a term after " + contracts.LexiconPrefix}}}
	}
	return term, nil
}

// lexiconLookup serves praxec.query describe of a lexicon:TERM subject: the
// term's entry, or null; a ref or an alias answers its term.
func (c *Catalogue) lexiconLookup(ctx context.Context, tx store.ReadTx, e *op.Request) (any, error) {
	term, cerr := subjectTerm(e)
	if cerr != nil {
		return nil, cerr
	}
	lex, err := c.Lexicon(ctx, tx)
	if err != nil {
		return nil, err
	}
	out := LexiconLookup{Term: term, Links: []contracts.Link{
		{Rel: "search", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": term, "kind": contracts.LexiconKind}},
	}}
	if t, ok := lex.Lookup(term); ok {
		entry := t.Entry
		out.Term, out.Entry = t.Term, &entry
	} else if key := config.TermKey(term); key != "" {
		pending, err := c.pendingTerms(ctx, tx, lex, e.Principal.Tenant, key)
		if err != nil {
			return nil, err
		}
		switch {
		case len(pending) > 0:
			p := pending[0]
			out.Term, out.State, out.Pending = p.Term, p.State, &p
			out.Links = append(out.Links, p.Links...)
		case c.lexiconWrites:
			out.Links = append(out.Links, contracts.Link{Rel: "define_new", Method: contracts.ToolPraxecCommand,
				Args: map[string]any{"subject": lexiconSubject(term), "definition": map[string]any{"definition_short": "<fill in>"}},
				Hint: fmt.Sprintf("Use this if '%s' is a concept worth defining.", term)})
		}
	}
	c.describeEvent(e, op.StringArg(e.Args, "subject"), contracts.LexiconKind)
	return out, nil
}

// lexiconSearch serves praxec.query search with kind lexicon.
func (c *Catalogue) lexiconSearch(ctx context.Context, tx store.ReadTx, e *op.Request) (any, error) {
	lex, err := c.Lexicon(ctx, tx)
	if err != nil {
		return nil, err
	}
	query := op.StringArg(e.Args, "query")
	hits := lex.Search(query, int(op.Int64Arg(e.Args, "limit")))
	if hits == nil {
		hits = []discovery.LexiconHit{}
	}
	pending, err := c.pendingTerms(ctx, tx, lex, e.Principal.Tenant, "")
	if err != nil {
		return nil, err
	}
	want := config.TermKey(query)
	pending = slices.DeleteFunc(pending, func(p PendingTerm) bool { return !strings.Contains(config.TermKey(p.Term), want) })
	return LexiconSearch{Hits: hits, Pending: pending, Links: []contracts.Link{HomeLink()}}, nil
}

// OperatorDefineCommand is the command line with which an operator
// defines a term on a gateway that refuses callers' defines (cmd/praxa's
// praxa lexicon define). The seed's refusal names praxec lexicon define,
// which this binary does not have: its answer keeps the seed's text and
// names this one in operatorCommand.
const OperatorDefineCommand = "praxa lexicon define <term> <definition> --tenant T"

// lexiconWritesDisabled is the seeds/000 refusal of a define, links
// included, word for word, with the real command beside them.
func lexiconWritesDisabled() *contracts.Error {
	return &contracts.Error{Code: contracts.CodeLexiconWritesDisabled,
		Message:         "This runtime does not accept lexicon define commands.",
		Hint:            "Operators add lexicon terms via the `praxec lexicon define` CLI subcommand.",
		OperatorCommand: OperatorDefineCommand,
		Links: []contracts.Link{
			{Rel: "operator_path", Method: "cli", Args: map[string]any{"command": "praxec lexicon define <term> <definition>"}},
			{Rel: "lookup", Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": "lexicon:<term>"}},
		}}
}

// definition is a parsed define body.
type definition struct {
	short, context, governance string
	hasShort                   bool
	refs, aliasesAdd           []string
}

// Bounds of a definition, as the configuration's lexicon section has them.
const (
	maxDefinitionShort = 2000
	maxBoundedContext  = 128
	maxGovernance      = 64
	maxTermRefs        = 64
)

// parseDefinition reads the four members the seed's define reads
// (definition_short, boundedContext in camel case, refs, governance) and
// aliases_add; every other member is ignored.
func parseDefinition(raw map[string]any) (definition, *contracts.Error) {
	var d definition
	var fields []contracts.FieldError
	bad := func(member, detail string) {
		fields = append(fields, contracts.FieldError{Pointer: "/definition/" + member, Detail: detail})
	}
	text := func(member string, maxLen int) (string, bool) {
		v, present := raw[member]
		if !present {
			return "", false
		}
		s, ok := v.(string)
		switch {
		case !ok:
			bad(member, "must be a string")
		case strings.TrimSpace(s) == "":
			bad(member, "must not be empty")
		case len([]rune(s)) > maxLen:
			bad(member, fmt.Sprintf("must be at most %d characters long", maxLen))
		default:
			return strings.TrimSpace(s), true
		}
		return "", false
	}
	terms := func(member string) []string {
		v, present := raw[member]
		if !present {
			return nil
		}
		list, ok := v.([]any)
		if !ok {
			bad(member, "must be an array of terms")
			return nil
		}
		if len(list) > maxTermRefs {
			bad(member, fmt.Sprintf("must have at most %d items", maxTermRefs))
			return nil
		}
		var out []string
		for i, item := range list {
			s, ok := item.(string)
			switch {
			case !ok || !config.ValidTerm(s):
				bad(member+"/"+strconv.Itoa(i), "must be a term: a letter or a digit, then up to 127 letters, digits, spaces and . _ ' / + -")
			case !slices.ContainsFunc(out, func(o string) bool { return config.TermKey(o) == config.TermKey(s) }):
				out = append(out, s)
			}
		}
		return out
	}
	_, d.hasShort = raw["definition_short"]
	d.short, _ = text("definition_short", maxDefinitionShort)
	d.context, _ = text("boundedContext", maxBoundedContext)
	d.governance, _ = text("governance", maxGovernance)
	d.refs = terms("refs")
	d.aliasesAdd = terms("aliases_add")
	if !d.hasShort && raw["aliases_add"] == nil && len(fields) == 0 {
		bad("definition_short", "is required, unless the definition only adds aliases (aliases_add)")
	}
	if len(fields) > 0 {
		return d, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the definition is not valid",
			Hint: "Send definition_short (with optional boundedContext, refs and governance) to define a term, or aliases_add to add aliases to a defined one.", Fields: fields}
	}
	return d, nil
}

// defineTerm serves praxec.command define: it writes a term, or adds
// aliases to one, in the overlay.
func (c *Catalogue) defineTerm(ctx context.Context, tx store.Tx, e *op.Request) (any, error) {
	if !c.lexiconWrites {
		return nil, lexiconWritesDisabled()
	}
	return c.writeTerm(ctx, tx, e)
}

// DefineTerm is the operator's define (praxa lexicon define and alias):
// the write praxec.command define makes, with the same arguments (subject
// lexicon:TERM, definition), the same checks and the same lexicon.defined
// audit event, naming p, whether or not the gateway accepts defines from
// callers. p needs the lexicon:write scope; traceID names the event's
// trace.
func (c *Catalogue) DefineTerm(ctx context.Context, p *auth.Principal, subject string, definition map[string]any, traceID string) (LexiconDefined, error) {
	if err := op.RequireScope(p, contracts.ScopeLexiconWrite); err != nil {
		return LexiconDefined{}, err
	}
	e := new(op.Actor{Principal: p, Tool: "praxa lexicon", Operation: string(contracts.OpDefine)}.Request(c.now()))
	e.Args, e.TraceID = map[string]any{"subject": subject, "definition": definition}, traceID
	var out LexiconDefined
	err := c.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		e.Events = e.Events[:0]
		res, err := c.writeTerm(ctx, tx, e)
		if err != nil {
			return err
		}
		out = res.(LexiconDefined)
		return tx.AppendEvents(ctx, e.Events)
	})
	if err != nil {
		return LexiconDefined{}, op.AsError(err)
	}
	return out, nil
}

// LexiconTerms lists the merged lexicon in key order: the configuration's
// terms, and the overlay's, which replace the configuration's term of the
// same key (Term.Overlay says which).
func (c *Catalogue) LexiconTerms(ctx context.Context) ([]discovery.Term, error) {
	var out []discovery.Term
	err := c.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		lex, err := c.Lexicon(ctx, tx)
		if err != nil {
			return err
		}
		out = lex.Terms()
		return nil
	})
	if err != nil {
		return nil, op.AsError(err)
	}
	return out, nil
}

// writeTerm writes a term, or adds aliases to one, in the overlay, and
// records the lexicon.defined event in e.
func (c *Catalogue) writeTerm(ctx context.Context, tx store.Tx, e *op.Request) (any, error) {
	term, cerr := subjectTerm(e)
	if cerr != nil {
		return nil, cerr
	}
	if !config.ValidTerm(term) {
		return nil, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the subject is not a valid term",
			Fields: []contracts.FieldError{{Pointer: "/subject", Detail: "must be lexicon: and a letter or a digit, then up to 127 letters, digits, spaces and . _ ' / + -"}}}
	}
	raw, _ := e.Args["definition"].(map[string]any)
	d, cerr := parseDefinition(raw)
	if cerr != nil {
		return nil, cerr
	}
	lex, err := c.Lexicon(ctx, tx)
	if err != nil {
		return nil, err
	}
	if owner, ok := lex.AliasOf(term); ok {
		return nil, &contracts.Error{Code: contracts.CodeInvalidParams,
			Message: fmt.Sprintf("%q is a ref or alias of the term %q", term, owner.Term),
			Hint:    "Define or extend the term itself; its lookup is linked.",
			Fields:  []contracts.FieldError{{Pointer: "/subject", Detail: "names a ref or alias of another term"}},
			Links:   []contracts.Link{lookupLink(owner.Term)}}
	}
	existing, exists := lex.Lookup(term)
	var entry discovery.Entry
	action := "define"
	switch {
	case d.hasShort:
		entry = discovery.Entry{DefinitionShort: d.short, BoundedContext: d.context, Refs: d.refs, Governance: d.governance}
		if exists {
			// A new definition keeps the aliases the term gathered.
			entry.Aliases = slices.Clone(existing.Entry.Aliases)
			term = existing.Term
		}
	case !exists:
		return nil, &contracts.Error{Code: contracts.CodeNotFound, Message: fmt.Sprintf("there is no term %q to add aliases to", term),
			Hint: "Define the term first (definition_short), or add the aliases to the term they stand for.",
			Links: []contracts.Link{{Rel: "define_new", Method: contracts.ToolPraxecCommand,
				Args: map[string]any{"subject": lexiconSubject(term), "definition": map[string]any{"definition_short": "<fill in>"}}}}}
	default:
		action = "aliases_add"
		term = existing.Term
		entry = existing.Entry
		entry.Refs = slices.Clone(entry.Refs)
		entry.Aliases = slices.Clone(entry.Aliases)
	}
	key := config.TermKey(term)
	have := func(a string) bool {
		return slices.ContainsFunc(append(slices.Clone(entry.Refs), entry.Aliases...), func(x string) bool { return config.TermKey(x) == config.TermKey(a) })
	}
	var added []string
	for _, a := range d.aliasesAdd {
		if !have(a) {
			entry.Aliases = append(entry.Aliases, a)
			added = append(added, a)
		}
	}
	if err := aliasConflicts(lex, key, d); err != nil {
		return nil, err
	}
	body, err := json.Marshal(entry)
	if err != nil {
		return nil, err
	}
	row := store.LexiconTerm{Key: key, Term: term, Entry: body, Version: 1, Tenant: e.Principal.Tenant,
		Subject: e.Principal.Subject, ClientID: e.Principal.ClientID, UpdatedAt: e.Now}
	prev, err := tx.GetLexiconTerm(ctx, key)
	switch {
	case err == nil:
		row.Version = prev.Version + 1
		err = tx.PutLexiconTerm(ctx, row, prev.Version)
	case errors.Is(err, store.ErrNotFound):
		err = tx.PutLexiconTerm(ctx, row, 0)
	}
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrExists) {
		return nil, &contracts.Error{Code: contracts.CodeVersionConflict, Message: fmt.Sprintf("the term %q changed while it was being defined", term),
			Hint: "Look the term up again, then send the define again.", Links: []contracts.Link{lookupLink(term)}}
	}
	if err != nil {
		return nil, err
	}
	attrs := map[string]any{"term": term, "action": action, "version": row.Version}
	if len(added) > 0 {
		attrs["aliasesAdded"] = added
	}
	e.Event("lexicon.defined", attrs)
	return LexiconDefined{Term: term, Entry: entry, PersistedTo: persistedToOverlay, Links: []contracts.Link{lookupLink(term)}}, nil
}

// aliasConflicts refuses refs and aliases that would make a lookup
// ambiguous: one naming the term itself, another term, or another term's
// ref or alias.
func aliasConflicts(lex *discovery.Lexicon, key string, d definition) *contracts.Error {
	var fields []contracts.FieldError
	check := func(member string, list []string) {
		for i, a := range list {
			ptr := "/definition/" + member + "/" + strconv.Itoa(i)
			ak := config.TermKey(a)
			if ak == key {
				fields = append(fields, contracts.FieldError{Pointer: ptr, Detail: "names the term itself"})
				continue
			}
			t, ok := lex.Lookup(a)
			if ok && config.TermKey(t.Term) != key {
				if config.TermKey(t.Term) == ak {
					fields = append(fields, contracts.FieldError{Pointer: ptr, Detail: "is another term: " + t.Term})
				} else {
					fields = append(fields, contracts.FieldError{Pointer: ptr, Detail: "is already a ref or alias of " + t.Term})
				}
			}
		}
	}
	check("refs", d.refs)
	check("aliases_add", d.aliasesAdd)
	if len(fields) == 0 {
		return nil
	}
	return &contracts.Error{Code: contracts.CodeInvalidParams, Message: "a ref or alias would make a lookup ambiguous",
		Hint: "Every term, ref and alias leads a lookup to one term: leave out the ones named in errors.", Fields: fields}
}
