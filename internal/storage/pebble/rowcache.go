package pebble

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/ebbdb/ebb/internal/sizedmap"
)

// rowCache keeps the values of keys recently read from the live store
// (Store.Get and Store.Lend: a point read of an item), so that reading
// one again costs a map lookup instead of a Pebble Get, which walks the
// memtables and the levels' iterators. Reads in a View (a snapshot) or
// an Update (a batch) never use it: a cached value is the latest
// committed one, not a snapshot's.
//
// It stays exact by the writers' protocol: an update marks the shards
// of the keys it writes before it applies its batch (removing the keys'
// entries and counting itself in the shard's writers) and unmarks them
// after. A read may add what it read only if no update of that shard
// began or was in flight between its look-up and its add (gen and
// writing), so a value read before an apply can never be added after
// it, and while an update is in flight nothing it writes is served from
// the cache: a read then goes to Pebble, as it would without the cache.
type rowCache struct {
	seed   maphash.Seed
	shards [rowCacheShards]rowShard
}

const rowCacheShards = 16

type rowShard struct {
	mu      sync.Mutex
	entries *sizedmap.Map[string, []byte]
	// writing counts the updates in flight that write a key of this
	// shard; gen moves when one begins.
	writing int
	gen     uint64
	// hits and misses count look-ups, for RowCacheStats.
	hits, misses uint64
}

func newRowCache(maxBytes int) *rowCache {
	if maxBytes <= 0 {
		return nil
	}
	c := &rowCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].entries = sizedmap.New(maxBytes/rowCacheShards, entrySize)
	}
	return c
}

func (c *rowCache) shardOf(key []byte) int {
	return int(maphash.Bytes(c.seed, key) % rowCacheShards)
}

// lookup returns key's cached value, or, on a miss, a ticket for add.
func (c *rowCache) lookup(key []byte) (value []byte, hit bool, t rowTicket) {
	i := c.shardOf(key)
	sh := &c.shards[i]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if v, ok := sh.entries.Entries[string(key)]; ok {
		sh.hits++
		return v, true, rowTicket{}
	}
	sh.misses++
	return nil, false, rowTicket{shard: i, gen: sh.gen, ok: sh.writing == 0}
}

// rowTicket is what a miss saw of its shard.
type rowTicket struct {
	shard int
	gen   uint64
	ok    bool // no update of the shard was in flight
}

// add keeps a copy of value under key if no update of its shard began
// since the look-up that gave t, nor was in flight then.
func (c *rowCache) add(t rowTicket, key, value []byte) {
	if !t.ok {
		return
	}
	sh := &c.shards[t.shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gen != t.gen || sh.writing != 0 {
		return
	}
	sh.entries.Put(string(key), bytes.Clone(value))
}

// entrySize is what an entry counts against the cache's size: its key
// and value.
func entrySize(k string, v []byte) int { return len(k) + len(v) }

// writeBegin marks the shards of the keys b writes, then drops their
// entries (in that order: once a shard is marked, no read adds to it),
// and returns the marked shards for writeEnd. A range deletion marks
// every shard.
func (c *rowCache) writeBegin(b *pebble.Batch) (marked uint32) {
	const all = 1<<rowCacheShards - 1
	var ranges [][2][]byte
	for r := b.Reader(); ; {
		kind, key, value, ok, err := r.Next()
		if err != nil {
			// Which keys the batch writes cannot be told: drop them all.
			marked, ranges = all, [][2][]byte{{nil, nil}}
			break
		}
		if !ok {
			break
		}
		if kind == pebble.InternalKeyKindRangeDelete {
			ranges = append(ranges, [2][]byte{key, value})
			marked = all
			continue
		}
		marked |= 1 << c.shardOf(key)
	}
	for i := range c.shards {
		if marked&(1<<i) == 0 {
			continue
		}
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.writing++
		sh.gen++
		for _, rg := range ranges {
			sh.entries.DeleteFunc(func(k string, _ []byte) bool {
				return rg[1] == nil || k >= string(rg[0]) && k < string(rg[1])
			})
		}
		sh.mu.Unlock()
	}
	for r := b.Reader(); ; {
		_, key, _, ok, err := r.Next()
		if err != nil || !ok {
			break
		}
		sh := &c.shards[c.shardOf(key)]
		sh.mu.Lock()
		if _, ok := sh.entries.Entries[string(key)]; ok {
			sh.entries.Delete(string(key))
		}
		sh.mu.Unlock()
	}
	return marked
}

// writeEnd unmarks the shards writeBegin marked, once the batch is
// applied (or failed to be).
func (c *rowCache) writeEnd(marked uint32) {
	for i := range c.shards {
		if marked&(1<<i) == 0 {
			continue
		}
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.writing--
		sh.mu.Unlock()
	}
}

// RowCacheStats are the row cache's counts since the store opened.
type RowCacheStats struct {
	Hits, Misses uint64
	// Bytes is what it holds now, keys and values.
	Bytes int
}

// RowCacheStats counts the row cache's look-ups; all zero when it is
// off.
func (s *Store) RowCacheStats() RowCacheStats {
	var st RowCacheStats
	if s.rows == nil {
		return st
	}
	for i := range s.rows.shards {
		sh := &s.rows.shards[i]
		sh.mu.Lock()
		st.Hits += sh.hits
		st.Misses += sh.misses
		st.Bytes += sh.entries.Size()
		sh.mu.Unlock()
	}
	return st
}
