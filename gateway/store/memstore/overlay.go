package memstore

import (
	"cmp"
	"maps"
	"slices"

	"github.com/praxa/praxa/gateway/store"
)

// A transaction stages its writes to a table in a map of its own over the
// DB's committed map. Tables that only put stage values (get, put, merge);
// tables that also delete stage pointers, a nil one a deletion (lookup,
// stage, applyStaged, view). These helpers are that overlay, once for every
// table.

// get returns k's row as a transaction sees it: staged, else committed.
func get[K comparable, V any](staged, committed map[K]V, k K) (V, bool) {
	if v, ok := staged[k]; ok {
		return v, true
	}
	v, ok := committed[k]
	return v, ok
}

// put stages v for k, making the staged map on first use.
func put[K comparable, V any](staged *map[K]V, k K, v V) {
	if *staged == nil {
		*staged = map[K]V{}
	}
	(*staged)[k] = v
}

// merge moves the staged rows into the committed map, making it on first
// use.
func merge[K comparable, V any](committed *map[K]V, staged map[K]V) {
	if len(staged) == 0 {
		return
	}
	if *committed == nil {
		*committed = map[K]V{}
	}
	maps.Copy(*committed, staged)
}

// rows returns the rows as a transaction sees them: committed, overlaid by
// staged.
func rows[K comparable, V any](staged, committed map[K]V) map[K]V {
	out := maps.Clone(committed)
	if out == nil {
		out = map[K]V{}
	}
	maps.Copy(out, staged)
	return out
}

// sortedKeys returns the keys of both maps, once each, in order.
func sortedKeys[K cmp.Ordered, V any](staged, committed map[K]V) []K {
	keys := slices.Collect(maps.Keys(committed))
	for k := range staged {
		if _, ok := committed[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// lookup returns k's row as a transaction sees it where a staged nil is a
// deletion.
func lookup[K comparable, V any](staged map[K]*V, committed map[K]V, k K) (V, bool) {
	if v, ok := staged[k]; ok {
		if v == nil {
			var zero V
			return zero, false
		}
		return *v, true
	}
	v, ok := committed[k]
	return v, ok
}

// stage stages v for k (nil: a deletion), making the staged map on first
// use.
func stage[K comparable, V any](staged *map[K]*V, k K, v *V) {
	if *staged == nil {
		*staged = map[K]*V{}
	}
	(*staged)[k] = v
}

// insert stages v for k unless k has a row (store.ErrExists).
func insert[K comparable, V any](staged *map[K]*V, committed map[K]V, k K, v *V) error {
	if _, ok := lookup(*staged, committed, k); ok {
		return store.ErrExists
	}
	stage(staged, k, v)
	return nil
}

// applyStaged moves the staged writes and deletions into the committed map,
// making it on first use.
func applyStaged[K comparable, V any](committed *map[K]V, staged map[K]*V) {
	if len(staged) == 0 {
		return
	}
	if *committed == nil {
		*committed = map[K]V{}
	}
	for k, v := range staged {
		if v == nil {
			delete(*committed, k)
		} else {
			(*committed)[k] = *v
		}
	}
}

// view returns the rows as a transaction sees them where a staged nil is a
// deletion.
func view[K comparable, V any](staged map[K]*V, committed map[K]V) map[K]V {
	out := maps.Clone(committed)
	if out == nil {
		out = map[K]V{}
	}
	applyStaged(&out, staged)
	return out
}

// putVersioned stages v for k after the compare of a versioned put
// (checkVersion) against k's row, whose version is version's.
func putVersioned[V any](staged *map[string]V, committed map[string]V, k string, v V, expected int64, version func(V) int64) error {
	old, exists := get(*staged, committed, k)
	if err := checkVersion(exists, version(old), expected); err != nil {
		return err
	}
	put(staged, k, v)
	return nil
}

// checkVersion is the compare of a versioned put: expected 0 creates a row,
// any other replaces the row stored at that version.
func checkVersion(exists bool, stored, expected int64) error {
	switch {
	case expected == 0 && exists:
		return store.ErrExists
	case expected != 0 && !exists:
		return store.ErrNotFound
	case expected != 0 && stored != expected:
		return store.ErrConflict
	}
	return nil
}

// checkTenantCAS is the compare of a compare-and-set on a tenant's row:
// store.ErrNotFound when there is no row (!exists) or it is another
// tenant's than want, store.ErrConflict when it holds another value than
// expected (its version, status or owner).
func checkTenantCAS[V comparable](exists bool, tenant, want string, stored, expected V) error {
	switch {
	case !exists || tenant != want:
		return store.ErrNotFound
	case stored != expected:
		return store.ErrConflict
	}
	return nil
}

// getCopy returns a copy of k's row, or store.ErrNotFound.
func getCopy[K comparable, V any](staged, committed map[K]V, k K, copyOf func(V) V) (V, error) {
	v, ok := get(staged, committed, k)
	if !ok {
		var zero V
		return zero, store.ErrNotFound
	}
	return copyOf(v), nil
}

// listCopies returns copies of the rows a transaction sees, by key.
func listCopies[V any](staged, committed map[string]V, copyOf func(V) V) []V {
	var out []V
	for _, k := range sortedKeys(staged, committed) {
		v, _ := get(staged, committed, k)
		out = append(out, copyOf(v))
	}
	return out
}

// firstOf returns the rows of rows that keep selects, sorted by compare,
// the first limit of them (all where limit is not above 0).
func firstOf[K comparable, V any](rows map[K]V, keep func(V) bool, compare func(a, b V) int, limit int) []V {
	var out []V
	for _, v := range rows {
		if keep(v) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, compare)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
