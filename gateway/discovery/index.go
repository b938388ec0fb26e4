package discovery

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// Kind is the kind of an entry of the index.
type Kind string

// The kinds. Skills (SkillItems, added to an index with With) and scripts
// (ScriptItems, likewise) are searchable kinds of the praxec surface that the service
// layer offers only when the server enables them.
const (
	KindWorkflow   Kind = "workflow"
	KindCapability Kind = "capability"
	KindConnection Kind = "connection"
	KindSkill      Kind = "skill"
	KindScript     Kind = "script"
)

// Kinds lists every kind, in the order search results list them when their
// scores and ids tie (they never do: ids are unique).
var Kinds = []Kind{KindWorkflow, KindCapability, KindConnection, KindSkill, KindScript}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, bool) {
	k := Kind(s)
	return k, slices.Contains(Kinds, k)
}

// Item is one entry of the index. Items are shared by every search: treat
// them as read-only.
type Item struct {
	ID          string
	Kind        Kind
	Title       string
	Description string
	Tags        []string
	Aliases     []string
	// Domain and ExposeDirectly are the discovery metadata of a
	// capability.
	Domain         string
	ExposeDirectly bool
	// InputSchema is the JSON Schema of what starting the item takes (a
	// workflow's input, a capability's arguments); nil when it declares
	// none.
	InputSchema json.RawMessage
	// Capability is the resolved capability of a capability item.
	Capability *config.ExposedCapability
}

// Hit is one search result.
type Hit struct {
	Item  *Item
	Score float64
}

// Index is the catalogue of workflows, capabilities and connections. It is
// immutable once built and safe for concurrent use.
type Index struct {
	items  []Item // sorted by id
	byID   map[string]int32
	byKind map[Kind][]int32 // each sorted by id
	text   *textIndex
}

// New builds an index of items. Ids must be unique across kinds.
func New(items []Item) (*Index, error) {
	x := &Index{items: slices.Clone(items), byID: make(map[string]int32, len(items)), byKind: map[Kind][]int32{},
		text: newTextIndex(ExactIDWeight)}
	slices.SortFunc(x.items, func(a, b Item) int { return strings.Compare(a.ID, b.ID) })
	for i := range x.items {
		it := &x.items[i]
		if it.ID == "" {
			return nil, fmt.Errorf("discovery: an item of kind %s has no id", it.Kind)
		}
		if _, ok := ParseKind(string(it.Kind)); !ok {
			return nil, fmt.Errorf("discovery: item %s has the unknown kind %q", it.ID, it.Kind)
		}
		if j, dup := x.byID[it.ID]; dup {
			return nil, fmt.Errorf("discovery: the id %s names both a %s and a %s", it.ID, x.items[j].Kind, it.Kind)
		}
		if it.Title == "" {
			it.Title = it.ID
		}
		if it.Tags == nil {
			it.Tags = []string{}
		}
		d := int32(i)
		x.byID[it.ID] = d
		x.byKind[it.Kind] = append(x.byKind[it.Kind], d)
		x.text.add(d, []field{
			{IDTokenWeight, []string{it.ID}},
			{TitleTokenWeight, []string{it.Title}},
			{AliasTokenWeight, it.Aliases},
			{TagTokenWeight, it.Tags},
			{DescriptionTokenWeight, []string{it.Description}},
		}, []string{it.ID})
	}
	return x, nil
}

// Build indexes the compiled workflows, and from cfg (which may be nil) the
// capabilities the proxy surface offers and the declared connections.
func Build(workflows *workflow.Registry, cfg *config.Config) (*Index, error) {
	var items []Item
	if workflows != nil {
		for _, id := range workflows.IDs() {
			d, _ := workflows.Lookup(id)
			if d.Proxy() {
				// proxy_default is reached through its capabilities.
				continue
			}
			it := Item{ID: id, Kind: KindWorkflow, Title: d.Title, Description: d.Description, Tags: slices.Clone(d.Tags)}
			if d.InputSchema != nil {
				b, err := json.Marshal(d.InputSchema)
				if err != nil {
					return nil, fmt.Errorf("discovery: workflow %s: input schema: %w", id, err)
				}
				it.InputSchema = b
			}
			items = append(items, it)
		}
	}
	if cfg != nil {
		for _, c := range cfg.Exposed() {
			it := Item{ID: c.ID, Kind: KindCapability, Title: c.Title, Description: c.Description,
				Tags: slices.Clone(c.Tags), Aliases: slices.Clone(c.Aliases), Domain: c.Domain, ExposeDirectly: c.ExposeDirectly,
				Capability: &c}
			if c.InputSchema != nil {
				b, err := json.Marshal(c.InputSchema)
				if err != nil {
					return nil, fmt.Errorf("discovery: capability %s: input schema: %w", c.ID, err)
				}
				it.InputSchema = b
			}
			items = append(items, it)
		}
		for _, name := range cfg.ConnectionNames() {
			items = append(items, Item{ID: name, Kind: KindConnection, Title: name})
		}
	}
	return New(items)
}

// Len returns the number of items.
func (x *Index) Len() int { return len(x.items) }

// Lookup returns the item whose id is exactly id.
func (x *Index) Lookup(id string) (*Item, bool) {
	i, ok := x.byID[id]
	if !ok {
		return nil, false
	}
	return &x.items[i], true
}

// Query is one search.
type Query struct {
	// Text is the query; blank lists every item of Kinds.
	Text string
	// Kinds restricts the results; empty means every kind.
	Kinds []Kind
	// Limit caps the results: DefaultLimit when 0, at most MaxLimit.
	Limit int
}

// Search answers q, best first (see the package documentation for the
// scoring).
func (x *Index) Search(q Query) []Hit {
	limit := clampLimit(q.Limit)
	var keep func(int32) bool
	if len(q.Kinds) > 0 {
		keep = func(d int32) bool { return slices.Contains(q.Kinds, x.items[d].Kind) }
	}
	if strings.TrimSpace(q.Text) == "" {
		return x.list(q.Kinds, keep, limit)
	}
	res := x.text.search(q.Text, keep, limit)
	out := make([]Hit, len(res))
	for i, r := range res {
		out[i] = Hit{Item: &x.items[r.doc], Score: float64(r.score)}
	}
	return out
}

// list returns the first limit items of the kinds, in id order.
func (x *Index) list(kinds []Kind, keep func(int32) bool, limit int) []Hit {
	var out []Hit
	if len(kinds) == 1 {
		for _, d := range x.byKind[kinds[0]] {
			if len(out) == limit {
				break
			}
			out = append(out, Hit{Item: &x.items[d]})
		}
		return out
	}
	for d := range x.items {
		if len(out) == limit {
			break
		}
		if keep == nil || keep(int32(d)) {
			out = append(out, Hit{Item: &x.items[d]})
		}
	}
	return out
}
