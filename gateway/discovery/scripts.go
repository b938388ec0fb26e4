package discovery

import (
	"slices"

	"github.com/praxa/praxa/gateway/scripts"
)

// ScriptItems returns an item of kind script for each script of the
// catalogue (nil gives none), described by the comment lines that open
// its file: title, description and tags.
func ScriptItems(c *scripts.Catalog) []Item {
	var out []Item
	for _, id := range c.IDs() {
		s, _ := c.Lookup(id)
		out = append(out, Item{ID: s.ID, Kind: KindScript, Title: s.Title, Description: s.Description, Tags: slices.Clone(s.Tags)})
	}
	return out
}
