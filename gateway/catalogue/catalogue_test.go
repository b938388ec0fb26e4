package catalogue_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
	"github.com/praxa/praxa/gateway/workflow"
)

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// newCatalogue builds the Catalogue of the example configuration on a
// fresh memstore.
func newCatalogue(t testing.TB, o catalogue.Options) (*catalogue.Catalogue, store.Store, *config.Config) {
	t.Helper()
	cfg, err := config.Parse(examples.PraxecYAMLName, examples.PraxecYAML)
	if err != nil {
		t.Fatal(err)
	}
	workflows, index := compile(t, cfg)
	cat, err := skills.FromConfig(cfg, examples.FS, examples.Root)
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	o.Now, o.Index, o.Workflows, o.Lexicon, o.Skills = func() time.Time { return now }, index, workflows, cfg.Lexicon, cat
	return catalogue.New(st, &o), st, cfg
}

// compile compiles cfg's workflows and builds their discovery index.
func compile(t testing.TB, cfg *config.Config) (*workflow.Registry, *discovery.Index) {
	t.Helper()
	workflows, err := workflow.Compile(cfg.Workflows)
	if err != nil {
		t.Fatal(err)
	}
	index, err := discovery.Build(workflows, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return workflows, index
}

// call runs the operation dispatch names for a call of tool with args, as
// the service would: a read in a read transaction (none when storeless), a
// mutation in a write transaction that commits its events.
func call(t testing.TB, c *catalogue.Catalogue, st store.Store, tool string, dispatch contracts.Operation, p *auth.Principal, args map[string]any) (any, *op.Request, error) {
	t.Helper()
	ct, ok := contracts.Lookup(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	name := ct.OperationID
	if dispatch != "" {
		name = string(dispatch)
	}
	i := slices.IndexFunc(c.Operations(), func(o op.Operation) bool { return o.Name == name })
	if i < 0 {
		t.Fatalf("the catalogue serves no %s", name)
	}
	o := c.Operations()[i]
	r := &op.Request{Principal: p, Tool: ct, Args: args, RequestID: "req", TraceID: "trace", Now: now}
	var out any
	var err error
	switch {
	case o.Storeless:
		out, err = o.Read(context.Background(), nil, r)
	case o.Read != nil:
		err = st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
			var err error
			out, err = o.Read(ctx, tx, r)
			return err
		})
	default:
		err = st.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			var err error
			if out, err = o.Mutate(ctx, tx, r); err != nil {
				return err
			}
			return tx.AppendEvents(ctx, r.Events)
		})
	}
	return out, r, err
}

var caller = &auth.Principal{Tenant: "acme", Subject: "alice"}

// TestSearchAndDescribe: search answers the index's items with the links
// of its surface, the flag-gated kinds only when enabled; describe answers
// an item (audited), a skill in the guidance shape, and an unknown id
// not-found with a search link.
func TestSearchAndDescribe(t *testing.T) {
	c, st, _ := newCatalogue(t, catalogue.Options{})
	out, _, err := call(t, c, st, contracts.ToolPraxecQuery, contracts.OpSearch, caller, map[string]any{"query": "deploy", "kind": "workflow"})
	if err != nil {
		t.Fatal(err)
	}
	res := out.(catalogue.SearchResult)
	if len(res.Items) == 0 || res.Items[0].Item.Kind != "workflow" || res.Items[0].Item.Links[0].Method != contracts.ToolPraxecCommand {
		t.Fatalf("search = %+v", res)
	}
	aura, _, err := call(t, c, st, contracts.ToolSearchCapabilities, "", caller, map[string]any{"query": "deploy", "kind": "workflow"})
	if err != nil || aura.(catalogue.SearchResult).Items[0].Item.Links[0].Method != contracts.ToolCreateMission {
		t.Errorf("aura search = %+v, %v", aura, err)
	}
	if _, _, err := call(t, c, st, contracts.ToolPraxecQuery, contracts.OpSearch, caller, map[string]any{"query": "", "kind": "skill"}); contracts.AsError(err).Code != contracts.CodeInvalidParams {
		t.Errorf("a skill search while disabled: %v", err)
	}
	enabled, st2, _ := newCatalogue(t, catalogue.Options{SkillsSearch: true})
	if out, _, err := call(t, enabled, st2, contracts.ToolPraxecQuery, contracts.OpSearch, caller, map[string]any{"query": "deploy", "kind": "skill"}); err != nil ||
		len(out.(catalogue.SearchResult).Items) == 0 {
		t.Errorf("a skill search while enabled: %+v, %v", out, err)
	}

	id := res.Items[0].Item.ID
	out, r, err := call(t, c, st, contracts.ToolPraxecQuery, contracts.OpDescribe, caller, map[string]any{"subject": id})
	if err != nil || out.(catalogue.Description).ID != id {
		t.Fatalf("describe %s = %+v, %v", id, out, err)
	}
	if len(r.Events) != 1 || r.Events[0].Type != "guidance.describe_requested" || r.Events[0].Attributes["subject"] != id {
		t.Errorf("events = %+v", r.Events)
	}
	out, _, err = call(t, c, st, contracts.ToolPraxecQuery, contracts.OpDescribe, caller, map[string]any{"subject": "deploy-checklist"})
	if g, ok := out.(catalogue.GuidanceDescription); err != nil || !ok || g.Kind != "skill" || g.Body == "" {
		t.Errorf("describe a skill = %+v, %v", out, err)
	}
	_, _, err = call(t, c, st, contracts.ToolPraxecQuery, contracts.OpDescribe, caller, map[string]any{"subject": "nothing"})
	if ce := contracts.AsError(err); ce.Code != contracts.CodeNotFound || len(ce.Links) != 1 || ce.Links[0].Rel != "search" {
		t.Errorf("describe an unknown id = %+v", ce)
	}
}

// TestLexicon: a ref looks up its term; a caller's define is refused
// unless writes are enabled; the operator's define lands in the overlay
// (audited), which lookups, searches and the term list see at once, and
// which a reload of the configuration keeps.
func TestLexicon(t *testing.T) {
	c, st, cfg := newCatalogue(t, catalogue.Options{})
	out, _, err := call(t, c, st, contracts.ToolPraxecQuery, contracts.OpLexiconLookup, caller, map[string]any{"subject": "lexicon:missions"})
	if err != nil || out.(catalogue.LexiconLookup).Term != "mission" || out.(catalogue.LexiconLookup).Entry == nil {
		t.Fatalf("lookup of a ref = %+v, %v", out, err)
	}
	define := map[string]any{"subject": "lexicon:runbook", "definition": map[string]any{"definition_short": "The steps an operator follows."}}
	if _, _, err := call(t, c, st, contracts.ToolPraxecCommand, contracts.OpDefine, caller, define); contracts.AsError(err).Code != contracts.CodeLexiconWritesDisabled {
		t.Fatalf("a define while writes are disabled: %v", err)
	}
	if _, err := c.DefineTerm(context.Background(), caller, "lexicon:runbook", define["definition"].(map[string]any), "tr"); contracts.AsError(err).Code != contracts.CodeInsufficientScope {
		t.Errorf("DefineTerm without lexicon:write: %v", err)
	}
	writer := &auth.Principal{Tenant: "acme", Subject: "op", Scopes: auth.NewScopeSet(contracts.ScopeLexiconWrite)}
	def, err := c.DefineTerm(context.Background(), writer, "lexicon:runbook", define["definition"].(map[string]any), "tr")
	if err != nil || def.Term != "runbook" || def.PersistedTo != "overlay" {
		t.Fatalf("DefineTerm = %+v, %v", def, err)
	}
	out, _, err = call(t, c, st, contracts.ToolPraxecQuery, contracts.OpLexiconLookup, caller, map[string]any{"subject": "lexicon:runbook"})
	if err != nil || out.(catalogue.LexiconLookup).Entry == nil || out.(catalogue.LexiconLookup).Entry.DefinitionShort != "The steps an operator follows." {
		t.Errorf("lookup after the define = %+v, %v", out, err)
	}
	out, _, err = call(t, c, st, contracts.ToolPraxecQuery, contracts.OpLexiconSearch, caller, map[string]any{"query": "runbook", "kind": "lexicon"})
	if err != nil || len(out.(catalogue.LexiconSearch).Hits) == 0 || out.(catalogue.LexiconSearch).Hits[0].Term != "runbook" {
		t.Errorf("search after the define = %+v, %v", out, err)
	}
	var events []store.Event
	_ = st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		events, err = tx.TraceEvents(ctx, "acme", "tr", 10)
		return err
	})
	if len(events) != 1 || events[0].Type != "lexicon.defined" || events[0].Subject != "op" {
		t.Errorf("events of the define = %+v, %v", events, err)
	}

	// A reload keeps the overlay and drops the configuration's terms it no
	// longer has.
	c.Install(nil, nil, map[string]config.LexiconEntry{}, nil, nil)
	terms, err := c.LexiconTerms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, term := range terms {
		names = append(names, term.Term)
	}
	if !slices.Equal(names, []string{"runbook"}) {
		t.Errorf("terms after a reload without lexicon = %v, want [runbook] (the configuration had %d)", names, len(cfg.Lexicon))
	}
}

// TestItemStates: a quarantined capability is described with its
// quarantine and the operator's move instead of its upstream text (the
// pin unread fails closed), and a connection's item shows the import
// state a Reloader published.
func TestItemStates(t *testing.T) {
	pinStore := memstore.New() // holds no pin: the quarantine, unread, holds
	defer pinStore.Close()
	q := pins.QuarantinedCapability{Capability: "github.list_issues", Connection: "github", Tool: "list_issues",
		Quarantine: pins.Quarantine{Reason: "the upstream changed", PinnedSHA256: "aa", OfferedSHA256: "bb", Since: now}}
	c, st, _ := newCatalogue(t, catalogue.Options{Pins: pins.New(pinStore, &pins.Options{Quarantines: pins.Quarantines{q.Capability: q}})})
	out, _, err := call(t, c, st, contracts.ToolPraxecQuery, contracts.OpDescribe, caller, map[string]any{"subject": "github.list_issues"})
	if err != nil {
		t.Fatal(err)
	}
	item := out.(catalogue.Description).Item
	if item.Quarantine == nil || item.Quarantine.OfferedSHA256 != "bb" || item.Description != "Quarantined: the upstream changed." ||
		len(item.Links) != 1 || item.Links[0].Rel != "operator_path" {
		t.Errorf("a quarantined capability = %+v", item)
	}

	// A configuration with a connection, whose item shows its import.
	cfg, err := config.Parse("praxec.yaml", []byte("connections:\n  api:\n    kind: rest\n    baseUrl: http://127.0.0.1:1\n"))
	if err != nil {
		t.Fatal(err)
	}
	workflows, index := compile(t, cfg)
	c.Install(index, workflows, nil, nil, nil)
	conn := "api"
	if c.ImportStates() != nil {
		t.Errorf("import states before any was published: %v", c.ImportStates())
	}
	c.SetImportStates([]catalogue.ImportState{{Connection: conn, State: catalogue.ImportRetrying, Attempts: 2, LastError: "refused"}})
	out, _, err = call(t, c, st, contracts.ToolPraxecQuery, contracts.OpDescribe, caller, map[string]any{"subject": conn})
	if err != nil {
		t.Fatal(err)
	}
	if imp := out.(catalogue.Description).Item.Import; imp == nil || imp.State != catalogue.ImportRetrying || imp.Attempts != 2 {
		t.Errorf("the connection's import state = %+v", imp)
	}
}

// TestPendingTerms: the commands paused on an unknown subject show as one
// placeholder term per subject, with the moves that resolve it, in a
// lookup, a lexicon search and the operator's list; a term defined since
// is no longer pending.
func TestPendingTerms(t *testing.T) {
	c, st, _ := newCatalogue(t, catalogue.Options{LexiconWrites: true})
	ctx := context.Background()
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		for i, cmd := range []string{"c1", "c2"} {
			if err := tx.PutPendingSubject(ctx, store.PendingSubject{Tenant: "acme", SubjectKey: "hotfix", CommandKey: cmd, Subject: "hotfix",
				Doc: []byte(`{}`), CreatedBy: "alice", CreatedAt: now.Add(time.Duration(i) * time.Minute)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := c.PendingTerms(ctx, "acme")
	if err != nil || len(pending) != 1 || pending[0].Term != "hotfix" || pending[0].QueuedCommands != 2 || pending[0].State != catalogue.PendingDefinition {
		t.Fatalf("PendingTerms = %+v, %v", pending, err)
	}
	var rels []string
	for _, l := range pending[0].Links {
		rels = append(rels, l.Rel)
	}
	if !slices.Contains(rels, "define_new") || !slices.Contains(rels, "cancel") {
		t.Errorf("resolution links = %v", rels)
	}
	if others, _ := c.PendingTerms(ctx, "globex"); len(others) != 0 {
		t.Errorf("another tenant's pending terms: %+v", others)
	}
	out, _, err := call(t, c, st, contracts.ToolPraxecQuery, contracts.OpLexiconLookup, caller, map[string]any{"subject": "lexicon:hotfix"})
	if l := out.(catalogue.LexiconLookup); err != nil || l.State != catalogue.PendingDefinition || l.Pending == nil || l.Entry != nil {
		t.Errorf("lookup of a pending term = %+v, %v", out, err)
	}
	out, _, err = call(t, c, st, contracts.ToolPraxecQuery, contracts.OpLexiconSearch, caller, map[string]any{"query": "hot", "kind": "lexicon"})
	if err != nil || len(out.(catalogue.LexiconSearch).Pending) != 1 {
		t.Errorf("search of a pending term = %+v, %v", out, err)
	}
	define := map[string]any{"subject": "lexicon:hotfix", "definition": map[string]any{"definition_short": "A change shipped outside the release train."}}
	if _, _, err := call(t, c, st, contracts.ToolPraxecCommand, contracts.OpDefine, caller, define); err != nil {
		t.Fatal(err)
	}
	if pending, err := c.PendingTerms(ctx, "acme"); err != nil || len(pending) != 0 {
		t.Errorf("after the define: %+v, %v", pending, err)
	}
}
