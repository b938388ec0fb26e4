package dirload

import "slices"

// Catalog is what a load yields: the definitions by id. The zero value and
// nil are empty catalogs. Once built, a Catalog is immutable and safe for
// concurrent use; treat what it returns as read-only.
type Catalog[T any] struct {
	byID map[string]T
	ids  []string // sorted
}

// Add adds v as id (replacing what id was) while the catalog is built.
func (c *Catalog[T]) Add(id string, v T) {
	if c.byID == nil {
		c.byID = map[string]T{}
	}
	if _, ok := c.byID[id]; !ok {
		i, _ := slices.BinarySearch(c.ids, id)
		c.ids = slices.Insert(c.ids, i, id)
	}
	c.byID[id] = v
}

// Lookup returns the definition id.
func (c *Catalog[T]) Lookup(id string) (T, bool) {
	if c == nil {
		var zero T
		return zero, false
	}
	v, ok := c.byID[id]
	return v, ok
}

// IDs returns the ids, sorted.
func (c *Catalog[T]) IDs() []string {
	if c == nil {
		return nil
	}
	return slices.Clone(c.ids)
}

// Len returns the number of definitions.
func (c *Catalog[T]) Len() int {
	if c == nil {
		return 0
	}
	return len(c.ids)
}
