package lru

import (
	"slices"
	"testing"
)

// keys returns c's keys, the most recently used first.
func keys(c *Cache[string, int]) []string {
	var ks []string
	for el := c.order.Front(); el != nil; el = el.Next() {
		ks = append(ks, el.Value.(*entry[string, int]).key)
	}
	return ks
}

func TestCache(t *testing.T) {
	c := New[string, int](3)
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("c", 3)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %d %v", v, ok)
	}
	if v, ok := c.Peek("b"); !ok || v != 2 {
		t.Fatalf("Peek(b) = %d %v", v, ok)
	}
	if got := keys(c); !slices.Equal(got, []string{"a", "c", "b"}) {
		t.Fatalf("order after Get(a), Peek(b): %v", got)
	}
	c.Put("d", 4) // b, the least recently used, goes
	if _, ok := c.Get("b"); ok || c.Len() != 3 {
		t.Fatalf("b kept beyond the bound (%d entries)", c.Len())
	}
	c.Put("c", 30) // a replacement moves c to the front and drops nothing
	if v, _ := c.Get("c"); v != 30 || c.Len() != 3 || !slices.Equal(keys(c), []string{"c", "d", "a"}) {
		t.Fatalf("after Put(c): %v, %d", keys(c), v)
	}
	c.Delete("d")
	c.Delete("nope")
	if n := c.DeleteFunc(func(v int) bool { return v > 10 }); n != 1 || !slices.Equal(keys(c), []string{"a"}) {
		t.Fatalf("DeleteFunc dropped %d, left %v", n, keys(c))
	}
	if _, ok := c.Peek("c"); ok || len(c.entries) != c.Len() {
		t.Fatalf("the map (%d) and the order (%d) disagree", len(c.entries), c.Len())
	}
}
