package engine

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// A container's usage (how many items it stores and the bytes of their
// documents) lives in its write state (collState), kept by every write in
// the write's transaction, so a container read with
// x-ms-documentdb-populatequotainfo reads it with one Get instead of
// scanning the container.
//
// A store written before Ebb kept the counters has states without them
// (collState's legacy encoding). Such a container is counted once, in
// the background, by the index builder's goroutine (indexbuild.go), as
// are the children of a split partition (split.go): each
// batch is one transaction that reads the state, counts the next items
// after the state's cursor and advances it, as an index rebuild walks
// its cursor. Writes meanwhile keep the counters for the items at or
// before the cursor and leave the rest to the count, so the figures are
// exact when the cursor passes the last item; a restart resumes from the
// stored cursor. Until then the container's usage is unknown and a read
// reports none (see Usage.Known). Counting at Open instead would hold
// the start for as long as the largest container takes to read.

// countBatchBytes bounds the documents one counting transaction reads,
// with its item count max (the builder's batch).
const countBatchBytes = 8 << 20

// countBatch counts up to max of the next items of each of c's
// partitions whose state is still counting. more reports that items
// remain.
func (e *Engine) countBatch(ctx context.Context, c *container, max int) (more bool, err error) {
	// Most containers were counted long ago: look before taking a write
	// transaction.
	var counting []int
	err = e.store.View(ctx, func(r storage.Reader) error {
		states, err := readPartitionStates(r, c)
		for i, st := range states {
			if st.counting {
				counting = append(counting, c.layout.live[i].id)
			}
		}
		return err
	})
	if err != nil || len(counting) == 0 {
		return false, ignoreDeleted(err)
	}
	for _, p := range counting {
		m, err := e.countPartitionBatch(ctx, c, p, max)
		if errors.Is(err, errPartitionSplit) {
			return true, nil // split meanwhile: its children are counted next
		}
		if err != nil {
			return false, ignoreDeleted(err)
		}
		more = more || m
	}
	return more, nil
}

// countPartitionBatch is countBatch for partition p: it walks the next
// items of the container after p's cursor, and counts those of p.
func (e *Engine) countPartitionBatch(ctx context.Context, c *container, p int, max int) (more bool, err error) {
	err = e.updatePartition(ctx, c, p, func(w storage.Writer) error {
		more = false
		st, err := readWritableState(w, c.rid, p)
		if err != nil || !st.counting {
			return err
		}
		prefix := keyspace.CollPrefix(keyspace.Doc, c.rid)
		start := prefix
		if st.cursor != nil {
			start = append(append(slices.Clip(prefix), st.cursor...), 0)
		}
		it := w.Scan(start, keys.PrefixEnd(prefix), false)
		walked, n, size := 0, 0, 0
		var last []byte
		for it.Next() {
			if walked == max || size >= countBatchBytes {
				more = true
				break
			}
			walked++
			last = append(last[:0], it.Key()...) // the iterator reuses its key
			if q, err := c.partitionOfKey(last[len(prefix):]); err != nil || q != p {
				if err != nil {
					it.Close()
					return err
				}
				continue
			}
			_, doc, err := document.DecodeItem(it.Value())
			if err != nil {
				it.Close()
				return err
			}
			n++
			size += len(doc)
		}
		if err := errors.Join(it.Err(), it.Close()); err != nil {
			return err
		}
		st.items += int64(n)
		st.bytes += int64(size)
		if more {
			st.cursor = bytes.Clone(last[len(prefix):])
		} else {
			st.counting, st.cursor = false, nil
		}
		return w.Set(keyspace.PartitionStateKey(c.rid, p), st.encode())
	})
	return more, err
}

// ignoreDeleted drops the error of a container deleted under a
// background job: there is nothing left to do for it.
func ignoreDeleted(err error) error {
	if IsKind(err, KindNotFound) {
		return nil
	}
	return err
}

// Usage is what a container read reports with
// x-ms-documentdb-populatequotainfo.
type Usage struct {
	// Items and Bytes are the container's stored items and the bytes of
	// their documents; they mean something only when Known (false while
	// a store from before the counters is still being counted).
	Items, Bytes int64
	Known        bool
	// IndexProgress is the percentage of the index rebuild done: 100 when
	// the index is up to date.
	IndexProgress int
	// StoredProcedures, Triggers and Functions count the container's
	// server-side scripts.
	StoredProcedures, Triggers, Functions int
}

// usage reads c's usage and index progress in r.
func usage(r storage.Reader, c *container) (Usage, error) {
	u := Usage{Known: true, IndexProgress: 100}
	states, err := readPartitionStates(r, c)
	if err != nil {
		return Usage{}, err
	}
	for _, st := range states {
		u.Items, u.Bytes, u.Known = u.Items+st.items, u.Bytes+st.bytes, u.Known && !st.counting
	}
	ist, found, err := index.ReadState(r, c.rid)
	if err != nil {
		return Usage{}, err
	}
	if found && ist.Building() {
		u.IndexProgress = rebuildProgress(ist.Indexed(), u)
	}
	for kind, n := range map[ScriptKind]*int{StoredProcedure: &u.StoredProcedures, Trigger: &u.Triggers, UserDefinedFunction: &u.Functions} {
		if *n, err = countScripts(r, c, kind); err != nil {
			return Usage{}, err
		}
	}
	return u, nil
}

// rebuildProgress estimates how far a rebuild that has indexed indexed
// items is, in percent: never 100, which means done, and 0 while the
// container's item count is unknown.
func rebuildProgress(indexed uint64, u Usage) int {
	if !u.Known || u.Items <= 0 {
		return 0
	}
	p := indexed * 100 / uint64(u.Items)
	return int(min(p, 99))
}
