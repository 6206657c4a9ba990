package engine

import (
	"bytes"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

// The indexes searches keep in memory (the vector sets, vectors.go; the
// full-text indexes, textindex.go) take in the writes since they were
// read from the latest-version index, which names each item written
// by LSN. A removal (a delete, a purge of an expired item, a partition
// delete) leaves no entry there, so a container with a vector or
// full-text policy also logs each removal by its LSN (the Gone
// keyspace), in the removal's transaction, and the catch-ups read both
// in LSN order. Without it a full-text index, whose statistics must not
// count a removed item, was read whole again after every removal.
//
// The log keeps the removals of the last goneWindow LSNs: an index
// further behind than that is read whole anyway (each catches up only
// over a tenth of its items), and one that misses a removal finds that
// the container's item count does not add up, and is read whole.
const (
	goneWindow = 1 << 17
	// goneTrimEvery is how often, in LSNs, a removal trims the log: one
	// range deletion per so many removals.
	goneTrimBits  = 12
	goneTrimEvery = 1 << goneTrimBits
)

// recordGone logs the removal at lsn of the item at key, in the
// removal's transaction.
func recordGone(w storage.Writer, c *container, lsn uint64, key []byte) error {
	if c.vectors == nil && c.text == nil {
		return nil
	}
	if err := w.Set(keyspace.GoneKey(c.rid, lsn), key[docPrefixLen:]); err != nil {
		return err
	}
	// Each partition's removals are trimmed in its own transactions, by
	// about one removal in goneTrimEvery: one whose LSN count is a
	// multiple of it, or whose count hashes (Fibonacci hashing) to zero,
	// so that no periodic pattern of writes and removals (a queue's
	// create, delete, create, …) keeps every removal off the multiples.
	if n := keyspace.LSNCount(lsn); (n%goneTrimEvery == 0 || n*0x9E3779B97F4A7C15>>(64-goneTrimBits) == 0) && n > goneWindow {
		p := keyspace.LSNPartition(lsn)
		return w.DeleteRange(keyspace.GoneKey(c.rid, keyspace.PartitionLSN(p, 0)), keyspace.GoneKey(c.rid, lsn-goneWindow))
	}
	return nil
}

// changesSince calls f, in LSN order, for each item of c written
// (gone false; the latest-version index names it) or removed (gone
// true) at an LSN from from to to, stepping m once for each.
func changesSince(r storage.Reader, c *container, from, to uint64, m *workMeter, f func(docKey []byte, gone bool) error) error {
	docPrefix := keyspace.CollPrefix(keyspace.Doc, c.rid)
	written := r.Scan(keyspace.LatestKey(c.rid, from), keyspace.LatestKey(c.rid, to+1), false)
	defer written.Close()
	removed := r.Scan(keyspace.GoneKey(c.rid, from), keyspace.GoneKey(c.rid, to+1), false)
	defer removed.Close()
	w, g := written.Next(), removed.Next()
	for w || g {
		if err := m.step(); err != nil {
			return err
		}
		// Both keyspaces' keys end in the LSN, after a prefix of one
		// length: compare what follows it.
		gone := g && (!w || bytes.Compare(removed.Key()[len(docPrefix):], written.Key()[len(docPrefix):]) < 0)
		it := written
		if gone {
			it = removed
		}
		if err := f(append(slices.Clip(docPrefix), it.Value()...), gone); err != nil {
			return err
		}
		if gone {
			g = removed.Next()
		} else {
			w = written.Next()
		}
	}
	if err := written.Err(); err != nil {
		return err
	}
	return removed.Err()
}
