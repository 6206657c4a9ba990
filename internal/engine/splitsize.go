package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Splitting a partition that grows. The service splits a physical
// partition that stores more than 50 GB into two, "distributing values
// corresponding to roughly half of the keys to each", and leaves one
// whose data all belongs to one logical partition key as it is
// (https://learn.microsoft.com/azure/cosmos-db/partitioning-overview,
// https://learn.microsoft.com/azure/cosmos-db/concepts-limits). Ebb
// does the same with the bytes of a partition's documents, which its
// write state counts (usage.go):
//
//   - A write that leaves its partition's count past the split size
//     (Options.SplitSize) wakes the index builder's goroutine
//     (committed), whose pass grows the container's partitions
//     (growPartitions), as it does for throughput.
//   - splitForSize takes the largest partition past the size, samples
//     its items to find the EPK that halves its bytes (sizeSplitPoint),
//     and splits it there. Its children's counts are then counted in the
//     background, and a child still past the size is split in turn.
//   - A partition whose sampled items all have one EPK (one logical
//     partition, or for a hierarchical key one first-level value, as
//     Ebb's boundaries are whole 32-digit hashes) is not split, and is
//     not looked at again until it has grown by a quarter.

// DefaultSplitSize is the bytes of documents past which a physical
// partition is split: the service's 50 GB.
const DefaultSplitSize = 50 << 30

// splitSamples bounds the items sizeSplitPoint keeps to place the
// boundary: a uniform sample of this many places it within a percent or
// so of the middle of a partition's bytes.
const splitSamples = 4096

// splitScanKeys is how many keys sizeSplitPoint reads in one read
// transaction: an estimate needs no snapshot, and a short transaction
// pins no old versions.
const splitScanKeys = 4096

// partitionRef names a physical partition of a container.
type partitionRef struct {
	rid [8]byte
	id  int
}

// splitSkips remembers the partitions found too concentrated to split,
// with their size then.
type splitSkips struct {
	mu   sync.Mutex
	size map[partitionRef]int64
}

// skip reports whether p, now of size bytes, was found unsplittable
// when it was less than a quarter smaller.
func (s *splitSkips) skip(p partitionRef, size int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was, ok := s.size[p]
	return ok && size < was+was/4
}

func (s *splitSkips) note(p partitionRef, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.size == nil {
		s.size = map[partitionRef]int64{}
	}
	s.size[p] = size
}

// splitForSize splits c's largest partition among those whose documents
// take more than the split size, at the EPK that halves them.
func (e *Engine) splitForSize(ctx context.Context, c *container) (bool, error) {
	if e.splitSize <= 0 || len(c.layout.live) >= keyspace.MaxPartitions {
		return false, nil
	}
	states, err := e.partitionStates(ctx, c)
	if err != nil {
		return false, ignoreDeleted(err)
	}
	p, size := -1, e.splitSize
	for i, st := range states {
		id := c.layout.live[i].id
		if !st.counting && !st.split && st.bytes > size && !e.splitSkips.skip(partitionRef{c.rid, id}, st.bytes) {
			p, size = id, st.bytes
		}
	}
	if p < 0 {
		return false, nil
	}
	at, err := e.sizeSplitPoint(ctx, c, p)
	if err != nil {
		return false, ignoreDeleted(err)
	}
	if at == "" {
		e.splitSkips.note(partitionRef{c.rid, p}, size)
		e.log.Warn("partition not split: its items all have one partition key (or, for a hierarchical key, one first level)", "container", c.label(), "range", p, "bytes", size, "split_size", e.splitSize)
		return false, nil
	}
	split, err := e.growSplit(ctx, c, p, at, "size", "bytes", size, "at", at)
	if IsKind(err, KindBadRequest) {
		// The container has made as many partitions as it may.
		e.splitSkips.note(partitionRef{c.rid, p}, size)
		e.log.Warn("partition not split", "container", c.label(), "range", p, "bytes", size, "err", err)
		return false, nil
	}
	return split, err
}

// epkSample is an item of a partition, sampled: its EPK's head as text
// (the first 32 digits of the EPK: a whole version 2 hash, or a
// hierarchical key's first level's), and its stored size.
type epkSample struct {
	epk  string
	size int
}

// sizeSplitPoint returns the EPK at which to split partition p of c so
// that each side holds about half of its items' bytes: the boundary
// between two of a uniform sample of its items, sorted by EPK, that
// comes nearest to halving the sample's bytes. It returns "" when all of
// p's items have one EPK. Items are keyed by partition key, not EPK, so
// it reads the whole container's keys. It reads them as stored, not
// through the visible-items reader: a partition's size is what it
// stores, expired items included until they are purged, as its usage
// counts it.
func (e *Engine) sizeSplitPoint(ctx context.Context, c *container, p int) (string, error) {
	prefix := keyspace.CollPrefix(keyspace.Doc, c.rid)
	start, end := prefix, keys.PrefixEnd(prefix)
	var (
		samples []epkSample
		seen    int
		lo, hi  [16]byte // the least and greatest head of all p's items
	)
	for start != nil {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		err := e.store.View(ctx, func(r storage.Reader) error {
			it := r.Scan(start, end, false)
			start = nil // unless a key is left for the next transaction
			for n := 0; it.Next(); n++ {
				if n == splitScanKeys {
					start = bytes.Clone(it.Key())
					break
				}
				head, q, err := c.placeKey(it.Key()[len(prefix):])
				if err != nil {
					it.Close()
					return err
				}
				if q != p {
					continue
				}
				if seen == 0 || bytes.Compare(head[:], lo[:]) < 0 {
					lo = head
				}
				if seen == 0 || bytes.Compare(head[:], hi[:]) > 0 {
					hi = head
				}
				seen++
				j := len(samples)
				if j == splitSamples {
					if j = rand.IntN(seen); j >= splitSamples {
						continue
					}
				}
				s := epkSample{document.HeadText(head), len(it.Value())}
				if j == len(samples) {
					samples = append(samples, s)
				} else {
					samples[j] = s
				}
			}
			return errors.Join(it.Err(), it.Close())
		})
		if err != nil {
			return "", err
		}
	}
	if seen == 0 {
		return "", nil
	}
	return halvingEPK(samples, document.HeadText(lo), document.HeadText(hi)), nil
}

// halvingEPK returns the boundary that comes nearest to halving the
// bytes of samples, items of a partition whose least and greatest EPKs
// are lo and hi: the EPK of a sampled item, with those below it on one
// side. It returns "" when lo is hi: one EPK cannot be split.
func halvingEPK(samples []epkSample, lo, hi string) string {
	if lo == hi {
		return ""
	}
	slices.SortFunc(samples, func(a, b epkSample) int { return cmp.Compare(a.epk, b.epk) })
	total := 0
	for _, s := range samples {
		total += s.size
	}
	best, bestOff := "", total
	before := 0
	for i, s := range samples {
		if i > 0 && s.epk != samples[i-1].epk {
			if off := abs(2*before - total); off < bestOff {
				best, bestOff = s.epk, off
			}
		}
		before += s.size
	}
	if best != "" {
		return best
	}
	// Every sampled item has one EPK, which not all items have: the
	// boundary goes just past it, or at it.
	if hi > samples[0].epk {
		return hi
	}
	return samples[0].epk
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// PartitionsStatus is what GET /_ebb/containers/{db}/{coll}/partitions
// reports: a container's live physical partitions in EPK order, and the
// size past which one is split (0: never).
type PartitionsStatus struct {
	SplitSize  int64             `json:"splitSize"`
	Partitions []PartitionStatus `json:"partitions"`
}

// PartitionStatus is a live physical partition of a container.
type PartitionStatus struct {
	// ID is its partition key range's id; MinInclusive and MaxExclusive
	// bound its EPKs; Parents are the ranges it was split from.
	ID           string   `json:"partitionKeyRangeId"`
	MinInclusive string   `json:"minInclusive"`
	MaxExclusive string   `json:"maxExclusive"`
	Parents      []string `json:"parents"`
	// Items and Bytes are its stored items and their documents' bytes:
	// its part of the container's usage. They are exact when Counted,
	// and a part of it while its items are being counted (after a split,
	// or on a store from before the counters).
	Items   int64 `json:"items"`
	Bytes   int64 `json:"documentBytes"`
	Counted bool  `json:"counted"`
	// LSN is the count of its log.
	LSN uint64 `json:"lsn"`
}

// Partitions returns container dbID/collID's partitions.
func (e *Engine) Partitions(ctx context.Context, dbID, collID string) (PartitionsStatus, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return PartitionsStatus{}, err
	}
	states, err := e.partitionStates(ctx, c)
	if err != nil {
		return PartitionsStatus{}, err
	}
	out := PartitionsStatus{SplitSize: max(e.splitSize, 0), Partitions: make([]PartitionStatus, 0, len(states))}
	for i, r := range c.layout.live {
		st := states[i]
		parents := make([]string, len(r.ancestors))
		for j, a := range r.ancestors {
			parents[j] = strconv.Itoa(a.id)
		}
		out.Partitions = append(out.Partitions, PartitionStatus{ID: strconv.Itoa(r.id), MinInclusive: r.min, MaxExclusive: r.max, Parents: parents,
			Items: st.items, Bytes: st.bytes, Counted: !st.counting, LSN: keyspace.LSNCount(st.lsn)})
	}
	return out, nil
}
