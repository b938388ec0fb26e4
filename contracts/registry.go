package contracts

import "iter"

// The tool catalogue and the operator endpoints are both fixed tables handed
// out only as detached copies; the helpers below serve both.

// cloner is a table entry that copies itself deeply.
type cloner[T any] interface{ Clone() T }

// indexBy maps the key of every entry of items to its position, and panics,
// naming the key as what, when two entries share one.
func indexBy[T any](items []T, key func(T) string, what string) map[string]int {
	idx := make(map[string]int, len(items))
	for i, it := range items {
		k := key(it)
		if _, dup := idx[k]; dup {
			panic("contracts: duplicate " + what + " " + k)
		}
		idx[k] = i
	}
	return idx
}

// clones returns a copy of every entry of items, in order.
func clones[T cloner[T]](items []T) []T {
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = it.Clone()
	}
	return out
}

// cloneSeq iterates over copies of the entries of items, in order.
func cloneSeq[T cloner[T]](items []T) iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, it := range items {
			if !yield(it.Clone()) {
				return
			}
		}
	}
}

// cloneAt returns a copy of the entry of items that idx files under key.
func cloneAt[T cloner[T]](items []T, idx map[string]int, key string) (T, bool) {
	i, ok := idx[key]
	if !ok {
		var zero T
		return zero, false
	}
	return items[i].Clone(), true
}
