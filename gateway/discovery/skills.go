package discovery

import (
	"slices"

	"github.com/praxa/praxa/gateway/skills"
)

// SkillItems returns an item of kind skill for each skill of the catalogue
// (nil gives none), described by its newest version: title, description
// and tags, so search finds a skill by what its current version says.
func SkillItems(c *skills.Catalog) []Item {
	if c == nil {
		return nil
	}
	var out []Item
	for _, id := range c.IDs() {
		sk, _ := c.Lookup(id)
		v := sk.Latest()
		out = append(out, Item{ID: sk.ID, Kind: KindSkill, Title: v.Title, Description: v.Description, Tags: slices.Clone(v.Tags)})
	}
	return out
}

// With returns an index of x's items and extra. An extra item whose id is
// already taken is left out (the first claim of an id wins) and its id
// returned in skipped.
func (x *Index) With(extra []Item) (_ *Index, skipped []string, _ error) {
	if len(extra) == 0 {
		return x, nil, nil
	}
	items := slices.Clone(x.items)
	for _, it := range extra {
		if _, taken := x.byID[it.ID]; taken || slices.ContainsFunc(items[len(x.items):], func(o Item) bool { return o.ID == it.ID }) {
			skipped = append(skipped, it.ID)
			continue
		}
		items = append(items, it)
	}
	y, err := New(items)
	return y, skipped, err
}
