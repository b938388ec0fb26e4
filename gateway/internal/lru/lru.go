// Package lru is a bounded map that drops its least recently used entry
// beyond its bound: the gateway's caches of verified tokens (package
// auth) and of upstream tokens (package connect). A Cache is not safe for
// concurrent use: its owner holds its own lock around it, with whatever
// else that lock guards (counters, flights).
package lru

import "container/list"

// Cache is a bounded LRU map from K to V.
type Cache[K comparable, V any] struct {
	max     int
	entries map[K]*list.Element
	order   *list.List // of *entry[K, V], front: most recently used
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New returns an empty Cache of at most max entries.
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, entries: make(map[K]*list.Element, min(max, 1024)), order: list.New()}
}

// Get returns the value of k and makes it the most recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	el, ok := c.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[K, V]).val, true
}

// Peek returns the value of k, leaving the order as it is.
func (c *Cache[K, V]) Peek(k K) (V, bool) {
	el, ok := c.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	return el.Value.(*entry[K, V]).val, true
}

// Put makes v the value of k, the most recently used, and drops the least
// recently used entries beyond the bound.
func (c *Cache[K, V]) Put(k K, v V) {
	if el, ok := c.entries[k]; ok {
		el.Value.(*entry[K, V]).val = v
		c.order.MoveToFront(el)
		return
	}
	c.entries[k] = c.order.PushFront(&entry[K, V]{key: k, val: v})
	for c.order.Len() > c.max {
		c.remove(c.order.Back())
	}
}

// Delete drops k.
func (c *Cache[K, V]) Delete(k K) {
	if el, ok := c.entries[k]; ok {
		c.remove(el)
	}
}

// DeleteFunc drops every entry whose value del reports, and returns how
// many it dropped.
func (c *Cache[K, V]) DeleteFunc(del func(V) bool) int {
	n := 0
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if del(el.Value.(*entry[K, V]).val) {
			c.remove(el)
			n++
		}
		el = next
	}
	return n
}

// Len returns how many entries there are.
func (c *Cache[K, V]) Len() int { return c.order.Len() }

func (c *Cache[K, V]) remove(el *list.Element) {
	delete(c.entries, el.Value.(*entry[K, V]).key)
	c.order.Remove(el)
}
