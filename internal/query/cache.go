package query

import (
	"container/list"
	"sync"
)

// Cache keeps parsed and checked queries by their text, so that the
// pages of one query, its query plan request, and the same query from
// other clients are parsed once. A Query is immutable (the checker is
// the last to write its syntax tree, compiled patterns and regular
// expressions included), so one serves any number of requests at once,
// each binding its own parameters and computed properties: nothing else
// a request carries changes what Parse builds.
//
// The cache is bounded by entries and by the bytes of their texts, and
// drops the least recently used query first. Errors are not kept: a
// query that fails to parse costs a parse every time, as it would
// without the cache, and a text over an eighth of the byte bound is
// parsed every time rather than flushing the cache of many smaller ones.
// A Cache is safe for concurrent use.
type Cache struct {
	maxEntries, maxBytes int

	mu sync.Mutex
	// byText indexes lru, whose elements hold *cacheEntry, most recently
	// used at the front; bytes is the sum of their texts' lengths.
	// INVARIANT: len(byText) == lru.Len() <= maxEntries, bytes <= maxBytes.
	byText map[string]*list.Element
	lru    list.List
	bytes  int
	// hits and misses count Parse calls that found the text and that
	// parsed it.
	hits, misses int64
}

type cacheEntry struct {
	text string
	q    *Query
}

// NewCache returns a cache of at most maxEntries queries whose texts
// add up to at most maxBytes.
func NewCache(maxEntries, maxBytes int) *Cache {
	return &Cache{maxEntries: maxEntries, maxBytes: maxBytes, byText: make(map[string]*list.Element)}
}

// Parse returns the query of text as Parse does, from the cache when an
// earlier call parsed it.
func (c *Cache) Parse(text string) (*Query, error) {
	c.mu.Lock()
	if el, ok := c.byText[text]; ok {
		c.lru.MoveToFront(el)
		c.hits++
		c.mu.Unlock()
		return el.Value.(*cacheEntry).q, nil
	}
	c.misses++
	c.mu.Unlock()

	// Parse outside the lock: a long query must not hold up the others.
	// Two requests that miss the same text at once both parse it, and
	// the second finds the first's entry.
	q, err := Parse(text)
	if err != nil || len(text) > c.maxBytes/8 || c.maxEntries <= 0 {
		return q, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byText[text]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*cacheEntry).q, nil
	}
	for c.lru.Len() >= c.maxEntries || (c.lru.Len() > 0 && c.bytes+len(text) > c.maxBytes) {
		c.removeLocked(c.lru.Back())
	}
	c.byText[text] = c.lru.PushFront(&cacheEntry{text: text, q: q})
	c.bytes += len(text)
	return q, nil
}

// removeLocked drops the entry of el.
// REQUIRES: c.mu is held.
func (c *Cache) removeLocked(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.byText, e.text)
	c.bytes -= len(e.text)
}

// CacheStats describes a Cache.
type CacheStats struct {
	Entries, Bytes int
	// Hits and Misses count the Parse calls that found their text and
	// those that parsed it.
	Hits, Misses int64
}

// Stats returns the cache's size and how often it was used.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Entries: c.lru.Len(), Bytes: c.bytes, Hits: c.hits, Misses: c.misses}
}
