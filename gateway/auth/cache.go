package auth

import (
	"sync"
	"time"

	"github.com/praxa/praxa/gateway/internal/lru"
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
	entries *lru.Cache[[32]byte, *cacheEntry]
	hits    uint64
	misses  uint64
}

func newTokenCache(size int) *tokenCache {
	return &tokenCache{entries: lru.New[[32]byte, *cacheEntry](size)}
}

// get returns the live entry for hash, dropping it if it has expired or its
// key is no longer trusted. The caller refreshes stale keys first.
func (c *tokenCache) get(hash [32]byte, now time.Time) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Get(hash)
	if ok && (!now.Before(e.expiry) || !e.keys.trusts(e.key)) {
		c.entries.Delete(hash)
		ok = false
	}
	if !ok {
		c.misses++
		return nil
	}
	c.hits++
	return e
}

// peekKeys returns the key set of the entry for hash, if any, without
// counting a lookup.
func (c *tokenCache) peekKeys(hash [32]byte) *keySet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries.Peek(hash); ok {
		return e.keys
	}
	return nil
}

// put stores e, evicting the least recently used entry beyond the bound.
func (c *tokenCache) put(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Put(e.hash, e)
}

// forget drops every entry of token id jti.
func (c *tokenCache) forget(jti string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.DeleteFunc(func(e *cacheEntry) bool { return e.principal.TokenID == jti })
}

// stats returns the entry count, hits and misses.
func (c *tokenCache) stats() (size int, hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len(), c.hits, c.misses
}
