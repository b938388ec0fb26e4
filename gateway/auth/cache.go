package auth

import (
	"container/list"
	"sync"
	"time"
)

// cacheEntry is one verified token.
type cacheEntry struct {
	hash      [32]byte
	principal *Principal // read-only; callers get clones
	expiry    time.Time  // the token's exp: the entry is never served at or after it
	keys      *keySet
	key       *verKey // the key that verified the token
}

// tokenCache is a bounded LRU of verified tokens keyed by the SHA-256 of the
// raw token. It never serves an entry at or after the token's exp (leeway
// does not extend it: a token within leeway is verified afresh), nor one
// whose signing key has left its issuer's key set.
type tokenCache struct {
	mu      sync.Mutex
	max     int
	entries map[[32]byte]*list.Element
	lru     *list.List // front: most recently used
	hits    uint64
	misses  uint64
}

func newTokenCache(size int) *tokenCache {
	return &tokenCache{max: size, entries: make(map[[32]byte]*list.Element, min(size, 1024)), lru: list.New()}
}

// get returns the live entry for hash, dropping it if it has expired or its
// key is no longer trusted. The caller refreshes stale keys first.
func (c *tokenCache) get(hash [32]byte, now time.Time) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[hash]
	if !ok {
		c.misses++
		return nil
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expiry) || !e.keys.trusts(e.key) {
		c.remove(el)
		c.misses++
		return nil
	}
	c.lru.MoveToFront(el)
	c.hits++
	return e
}

// peekKeys returns the key set of the entry for hash, if any, without
// counting a lookup.
func (c *tokenCache) peekKeys(hash [32]byte) *keySet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[hash]; ok {
		return el.Value.(*cacheEntry).keys
	}
	return nil
}

// put stores e, evicting the least recently used entry beyond the bound.
func (c *tokenCache) put(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.hash]; ok {
		el.Value = e
		c.lru.MoveToFront(el)
		return
	}
	c.entries[e.hash] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		c.remove(c.lru.Back())
	}
}

// forget drops every entry of token id jti.
func (c *tokenCache) forget(jti string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*cacheEntry).principal.TokenID == jti {
			c.remove(el)
			n++
		}
		el = next
	}
	return n
}

func (c *tokenCache) remove(el *list.Element) {
	delete(c.entries, el.Value.(*cacheEntry).hash)
	c.lru.Remove(el)
}

// stats returns the entry count, hits and misses.
func (c *tokenCache) stats() (size int, hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.hits, c.misses
}
