package catalogue

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/store"
)

// This file serves discovery: praxec.query search and describe, and
// aura_search_capabilities, from the index of package discovery. Both
// surfaces answer the same items; they differ in the tools their links
// name (the praxec pair, or aura_* with a fresh idempotency key).

// DiscoveryItem is one entry of the catalogue as search and describe show
// it: the seeds/000 members, and for a capability its discovery metadata
// (domain and exposeDirectly, when set; aliases are searched, not shown).
type DiscoveryItem struct {
	ID             string   `json:"id"`
	Kind           string   `json:"kind"`
	Title          string   `json:"title"`
	Description    string   `json:"description,omitempty"`
	Tags           []string `json:"tags"`
	Domain         string   `json:"domain,omitempty"`
	ExposeDirectly bool     `json:"exposeDirectly,omitempty"`
	// Import is, for a connection proxy.import lists, the state of its
	// import: ok, or retrying with the attempts, the last error and the
	// next attempt (see ImportState).
	Import *ImportState `json:"import,omitempty"`
	// Quarantine is, for an imported capability its pin quarantines, why
	// it cannot be called (see package pins); its description is then the
	// reason, not the upstream's new text.
	Quarantine *pins.Quarantine `json:"quarantine,omitempty"`
	Links      []contracts.Link `json:"links"`
}

// SearchItem is one search result.
type SearchItem struct {
	Score float64       `json:"score"`
	Item  DiscoveryItem `json:"item"`
}

// SearchResult is the answer of praxec.query search and of
// aura_search_capabilities.
type SearchResult struct {
	Query string           `json:"query"`
	Kind  string           `json:"kind,omitempty"`
	Items []SearchItem     `json:"items"`
	Links []contracts.Link `json:"links"`
}

// Description is the answer of praxec.query describe.
type Description struct {
	ID    string           `json:"id"`
	Item  DiscoveryItem    `json:"item"`
	Links []contracts.Link `json:"links"`
}

// HomeLink and SearchLink are the navigation links of the praxec surface.
func HomeLink() contracts.Link {
	return contracts.Link{Rel: "home", Method: contracts.ToolPraxecQuery, Args: map[string]any{}}
}

func SearchLink(query string) contracts.Link {
	return contracts.Link{Rel: "search", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": query}}
}

// objectSchema is the input schema of what declares none.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// render turns an index item into its wire form with the links of style.
// goal is the goal an aura_create_mission link carries.
func render(it *discovery.Item, style op.LinkStyle, goal string) DiscoveryItem {
	d := DiscoveryItem{ID: it.ID, Kind: string(it.Kind), Title: it.Title, Description: it.Description,
		Tags: it.Tags, Domain: it.Domain, ExposeDirectly: it.ExposeDirectly, Links: []contracts.Link{}}
	if goal == "" {
		goal = it.Title
	}
	switch it.Kind {
	case discovery.KindWorkflow:
		l := contracts.Link{Rel: "start", InputSchema: it.InputSchema}
		if style == op.StyleAura {
			l.Title, l.Method = "Create a mission with "+it.Title, contracts.ToolCreateMission
			l.Args = map[string]any{"goal": goal, "definitionId": it.ID, "idempotencyKey": ids.New("idem")}
		} else {
			l.Method = contracts.ToolPraxecCommand
			l.Args = map[string]any{"definitionId": it.ID, "input": map[string]any{}}
		}
		d.Links = append(d.Links, l)
	case discovery.KindSkill:
		l := contracts.Link{Rel: "describe", Title: "Read the skill", Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": it.ID}}
		if style == op.StyleAura {
			l.Method, l.Args = contracts.ToolGetSkill, map[string]any{"skillId": it.ID}
		}
		d.Links = append(d.Links, l)
	case discovery.KindScript:
		// Scripts are read through praxec.query describe alone.
		if style == op.StylePraxec {
			d.Links = append(d.Links, contracts.Link{Rel: "describe", Title: "Read the script", Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": it.ID}})
		}
	case discovery.KindCapability:
		// Proxy capabilities run in the built-in proxy_default workflow:
		// starting it with input.capability fires the capability first.
		l := CapabilityStartLink(it.ID, it.InputSchema)
		if style == op.StyleAura {
			l.Title, l.Method = "Run the capability "+it.ID, contracts.ToolCreateMission
			l.Args = map[string]any{"goal": goal, "definitionId": config.ProxyDefaultWorkflow, "input": l.Args["input"], "idempotencyKey": ids.New("idem")}
		}
		d.Links = append(d.Links, l)
	}
	return d
}

// withImport adds to a connection's item the state of its import.
func (c *Catalogue) withImport(d DiscoveryItem) DiscoveryItem {
	if d.Kind == string(discovery.KindConnection) {
		d.Import = c.importState(d.ID)
	}
	return d
}

// searchQuery reads the search arguments. kind must name a kind this
// gateway searches: workflow, capability or connection, and skill or
// script when the server enables them.
func (c *Catalogue) searchQuery(e *op.Request) (discovery.Query, string, error) {
	q := discovery.Query{Text: op.StringArg(e.Args, "query"), Limit: int(op.Int64Arg(e.Args, "limit"))}
	raw, present := e.Args["kind"]
	if !present {
		if !c.skillsSearch || !c.scriptsSearch {
			// The flag-gated kinds stay out of a search of every kind too.
			for _, k := range discovery.Kinds {
				if (k != discovery.KindSkill || c.skillsSearch) && (k != discovery.KindScript || c.scriptsSearch) {
					q.Kinds = append(q.Kinds, k)
				}
			}
		}
		return q, "", nil
	}
	name, _ := raw.(string)
	kind, ok := discovery.ParseKind(name)
	searchable := []string{"workflow", "capability", "connection"}
	if c.skillsSearch {
		searchable = append(searchable, "skill")
	}
	if c.scriptsSearch {
		searchable = append(searchable, "script")
	}
	if e.Tool.Name == contracts.ToolPraxecQuery {
		searchable = append(searchable, contracts.LexiconKind)
	}
	switch {
	case name == contracts.LexiconKind:
		// Only aura_search_capabilities gets here: praxec.query routes a
		// lexicon search elsewhere.
		return q, "", &contracts.Error{Code: contracts.CodeInvalidParams, Message: "aura_search_capabilities does not search the lexicon",
			Hint:   "Search lexicon terms with praxec.query (query, kind lexicon).",
			Fields: []contracts.FieldError{{Pointer: "/kind", Detail: "must be one of " + strings.Join(searchable, ", ")}}}
	case kind == discovery.KindSkill && !c.skillsSearch, kind == discovery.KindScript && !c.scriptsSearch:
		return q, "", &contracts.Error{Code: contracts.CodeInvalidParams,
			Message: fmt.Sprintf("searching kind %s is not enabled on this gateway", name),
			Hint:    fmt.Sprintf("%s search is an authoring-time feature the operator enables with --enable-%ss-search; search workflow, capability or connection instead.", name, name),
			Fields:  []contracts.FieldError{{Pointer: "/kind", Detail: "must be one of " + strings.Join(searchable, ", ")}}}
	case !ok:
		return q, "", &contracts.Error{Code: contracts.CodeInvalidParams, Message: fmt.Sprintf("%q is not a kind this gateway searches", name),
			Hint:   "Leave kind out to search everything, or use one of " + strings.Join(searchable, ", ") + ".",
			Fields: []contracts.FieldError{{Pointer: "/kind", Detail: "must be one of " + strings.Join(searchable, ", ")}}}
	}
	q.Kinds = []discovery.Kind{kind}
	return q, name, nil
}

// search runs a search and renders it in style.
func (c *Catalogue) search(ctx context.Context, e *op.Request, style op.LinkStyle) (SearchResult, error) {
	q, kind, err := c.searchQuery(e)
	if err != nil {
		return SearchResult{}, err
	}
	hits := c.Index().Search(q)
	res := SearchResult{Query: q.Text, Kind: kind, Items: make([]SearchItem, 0, len(hits))}
	goal := strings.TrimSpace(q.Text)
	for _, h := range hits {
		res.Items = append(res.Items, SearchItem{Score: h.Score, Item: c.withQuarantine(ctx, c.withImport(render(h.Item, style, goal)))})
	}
	if style == op.StyleAura {
		res.Links = []contracts.Link{{Rel: "search", Title: "Search again", Method: contracts.ToolSearchCapabilities, Args: map[string]any{"query": ""}}}
	} else {
		res.Links = []contracts.Link{HomeLink()}
	}
	return res, nil
}

// praxecSearch serves praxec.query search. A search without kind covers
// the lexicon too (seeds/000: search covers "capabilities, workflows,
// skills, scripts, and lexicon entries"): its terms are ranked among the
// catalogue's items by the same weights (package discovery), as items of
// kind lexicon whose id is the lexicon:TERM subject a describe looks up.
// Only such a search reads the store (the overlay); a search of one kind
// answers from memory.
func (c *Catalogue) praxecSearch(ctx context.Context, _ store.ReadTx, e *op.Request) (any, error) {
	res, err := c.search(ctx, e, op.StylePraxec)
	if err != nil || res.Kind != "" {
		return res, err
	}
	limit := discovery.ClampLimit(int(op.Int64Arg(e.Args, "limit")))
	var ranked []discovery.RankedTerm
	err = c.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		lex, err := c.Lexicon(ctx, tx)
		if err != nil {
			return err
		}
		ranked = lex.Rank(res.Query, limit)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range ranked {
		res.Items = append(res.Items, SearchItem{Score: r.Score, Item: lexiconItem(r.Term)})
	}
	// Best first, then by id, as the index orders its own.
	slices.SortStableFunc(res.Items, func(a, b SearchItem) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Item.ID, b.Item.ID))
	})
	res.Items = res.Items[:min(len(res.Items), limit)]
	return res, nil
}

// lexiconItem renders a lexicon term as a search item: id the lexicon:TERM
// subject, title the term, description its short definition, and the
// lookup link.
func lexiconItem(t discovery.Term) DiscoveryItem {
	return DiscoveryItem{ID: lexiconSubject(t.Term), Kind: contracts.LexiconKind, Title: t.Term, Description: t.Entry.DefinitionShort,
		Tags: []string{}, Links: []contracts.Link{lookupLink(t.Term)}}
}

// searchCapabilities serves aura_search_capabilities.
func (c *Catalogue) searchCapabilities(ctx context.Context, _ store.ReadTx, e *op.Request) (any, error) {
	return c.search(ctx, e, op.StyleAura)
}

// describe serves praxec.query describe: the item whose id is the subject,
// with navigation links. Every describe is audited as
// guidance.describe_requested, with the workflowId the call names (null
// for a browse-time describe).
func (c *Catalogue) describe(ctx context.Context, _ store.ReadTx, e *op.Request) (any, error) {
	subject := op.StringArg(e.Args, "subject")
	it, ok := c.Index().Lookup(subject)
	if !ok {
		return nil, &contracts.Error{Code: contracts.CodeNotFound,
			Message: fmt.Sprintf("there is no workflow, capability or connection with the id %q", subject),
			Hint:    "Describe an id that a search answered; the linked search looks for this one.",
			Links:   []contracts.Link{SearchLink(subject)}}
	}
	switch it.Kind {
	case discovery.KindSkill:
		return c.describeSkill(ctx, e, it)
	case discovery.KindScript:
		return c.describeScript(ctx, e, it)
	}
	c.describeEvent(e, subject, string(it.Kind))
	return Description{ID: it.ID, Item: c.withQuarantine(ctx, c.withImport(render(it, op.StylePraxec, ""))), Links: []contracts.Link{HomeLink(), SearchLink("")}}, nil
}

// describeEvent records guidance.describe_requested for the call.
func (c *Catalogue) describeEvent(e *op.Request, subject, kind string) {
	wf, given := e.Args["workflowId"].(string)
	attrs := map[string]any{"subject": subject, "kind": kind, "workflowId": nil}
	if given {
		attrs["workflowId"] = wf
	}
	e.Event("guidance.describe_requested", attrs)
	if given {
		e.Events[len(e.Events)-1].WorkflowID = wf
	}
}

// withQuarantine adds to a quarantined capability's item its quarantine,
// and replaces its description (the upstream's new text, not reviewed)
// with the reason.
func (c *Catalogue) withQuarantine(ctx context.Context, d DiscoveryItem) DiscoveryItem {
	if d.Kind != "capability" || c.pins == nil || !c.pins.Any() {
		return d
	}
	q, ok := c.pins.Current(ctx, d.ID)
	if !ok {
		return d
	}
	qq := q.Quarantine
	d.Quarantine = &qq
	d.Description = "Quarantined: " + q.Reason + "."
	d.Links = append(d.Links[:0:0], contracts.Link{Rel: "operator_path", Method: "cli", Args: map[string]any{"command": "praxa capabilities accept " + d.ID}})
	return d
}

// CapabilityStartLink is the link that starts a run of proxy_default whose
// first move is the capability id (schema: its input schema, nil for any
// object): the describe link of seeds/000.
func CapabilityStartLink(id string, schema json.RawMessage) contracts.Link {
	if schema == nil {
		schema = objectSchema
	}
	return contracts.Link{Rel: "start", InputSchemaSnake: schema, Method: contracts.ToolPraxecCommand,
		Args: map[string]any{"definitionId": config.ProxyDefaultWorkflow, "input": map[string]any{"capability": id}}}
}
