package engine

import (
	"context"
	"errors"
	"math/big"
	"strconv"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

// Splitting a partition. SplitPartition divides a live partition's range
// at its middle between two new partitions while clients read and
// write, as the service does when a partition grows too big or hot:
//
//   - In one transaction, the parent's state is marked split (it keeps
//     its last LSN and takes no more writes), each child gets a state
//     whose LSN and _rid sequence go on after the parent's, and the
//     container's layout (keyspace.Parts) names the children, with the
//     parent among their ancestors. The catalog's counter moves, so
//     other nodes reload it.
//   - Items do not move: their keys do not depend on the partition. Each
//     child's usage counters start unknown and are counted in the
//     background (usage.go), as a store from before the counters is.
//   - A write that finds its partition split (a node that had not yet
//     reloaded the catalog, or a write already waiting for the parent's
//     lock) fails with errPartitionSplit inside its transaction, before
//     writing anything; the request reloads the catalog and runs again
//     in the child (retrySplit), so clients never see it.
//   - A query or change feed addressed to the parent's range answers 410
//     with substatus 1002, on which the SDKs read the ranges again and
//     go on in the children, from their continuations: a query's
//     continuation is a position in the container's key order, valid in
//     either child; a change feed's is a count in the parent's log, which
//     each child reads (the entries of its own range) before its own,
//     whose counts go on from the parent's last.

// errPartitionSplit is what a write finds in a partition that was split
// after the request chose it; it never reaches a client.
var errPartitionSplit = errors.New("engine: the partition was split")

// readWritableState reads partition p's state for a write: a split
// partition takes none.
func readWritableState(r storage.Reader, rid [8]byte, p int) (collState, error) {
	st, err := readPartitionState(r, rid, p)
	if err == nil && st.split {
		return collState{}, errPartitionSplit
	}
	return st, err
}

// maxSplitRetries bounds how often a request runs again after finding
// its partition split: more than one split of it while it runs is rare.
const maxSplitRetries = 4

// retrySplit runs op, and runs it again on a refreshed catalog while it
// finds its partition split.
func retrySplit[T any](ctx context.Context, e *Engine, op func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		res, err := op()
		if !errors.Is(err, errPartitionSplit) {
			return res, err
		}
		if attempt == maxSplitRetries {
			return res, &Error{Kind: KindGone, SubStatus: 1002, Message: "The partition this request was for was split again and again while it ran; retry it."}
		}
		// The split moved the counter, so this reloads unless another
		// request already did since.
		if _, err := e.refreshCatalog(ctx, nil); err != nil {
			return res, err
		}
	}
}

// growPartitions splits one of c's partitions when c needs more: when
// its own throughput asks for more partitions than it has
// (splitForThroughput), or when a partition stores more than the split
// size (splitForSize). It reports whether it split one; the caller runs
// it again until it does not. Containers whose key has version 1 have
// one partition.
func (e *Engine) growPartitions(ctx context.Context, c *container) (bool, error) {
	if c.pk.HashV1() {
		return false, nil
	}
	if split, err := e.splitForThroughput(ctx, c); split || err != nil {
		return split, err
	}
	return e.splitForSize(ctx, c)
}

// splitForThroughput splits c's widest partition when c's own
// throughput asks for more partitions than it has, as the service splits
// a container's partitions in the background when its throughput is
// raised past what they serve (partitionsFor). A container on its
// database's throughput, or created with x-ebb-partition-count (pinned),
// is left as it is.
func (e *Engine) splitForThroughput(ctx context.Context, c *container) (bool, error) {
	if c.offerID == "" || c.layout.pinned {
		return false, nil
	}
	o := e.catalogSnapshot().offerFor(c)
	if o == nil || partitionsFor(&Throughput{Manual: int(o.ru)}, c.pk) <= len(c.layout.live) {
		return false, nil
	}
	widest, width := -1, new(big.Int)
	for _, r := range c.layout.live {
		lo, ok1 := boundValue(r.min)
		hi, ok2 := boundValue(r.max)
		if w := new(big.Int).Sub(hi, lo); ok1 && ok2 && w.Cmp(width) > 0 {
			widest, width = r.id, w
		}
	}
	return e.growSplit(ctx, c, widest, "", "throughput", "ru", o.ru)
}

// growSplit splits c's partition p at the EPK at ("": the middle) for
// the grower, and logs why (reason, and the attributes why). It reports
// whether it split p: another node splitting it first is no error, and
// the next pass looks again.
func (e *Engine) growSplit(ctx context.Context, c *container, p int, at, reason string, why ...any) (bool, error) {
	res, err := e.splitPartition(ctx, c.dbID, c.id, strconv.Itoa(p), at)
	if IsKind(err, KindGone) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	e.log.Info("partition split", append([]any{"container", c.label(), "range", res.Parent, "children", res.Children, "reason", reason}, why...)...)
	return true, nil
}

// SplitResult names the ranges a split made.
type SplitResult struct {
	Parent   string
	Children []string
}

// SplitPartition splits the live partition key range rangeID of a
// container in two at the middle of its range (see the comment at the
// top of this file).
func (e *Engine) SplitPartition(ctx context.Context, dbID, collID, rangeID string) (SplitResult, error) {
	return e.splitPartition(ctx, dbID, collID, rangeID, "")
}

// splitPartition is SplitPartition at the EPK at, or at the middle of
// the range when at is "".
func (e *Engine) splitPartition(ctx context.Context, dbID, collID, rangeID, at string) (SplitResult, error) {
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat := e.catalogSnapshot()
	c, err := cat.container(dbID, collID)
	if err != nil {
		return SplitResult{}, err
	}
	p, ok := c.parsePartitionID(rangeID)
	if !ok {
		return SplitResult{}, c.errNoSuchRange(rangeID)
	}
	if c.pk.HashV1() {
		return SplitResult{}, dberr.BadRequest("A container whose partition key has version 1 has one physical partition; it cannot be split.")
	}
	var layout *partitionLayout
	err = e.store.Update(ctx, func(w storage.Writer) error {
		st, err := readPartitionState(w, c.rid, p)
		if err != nil {
			return err
		}
		if st.split {
			return c.errNoSuchRange(rangeID) // split on another node meanwhile
		}
		stored, err := w.Get(keyspace.PartsKey(c.rid))
		current := c.layout
		switch {
		case err == nil:
			if current, err = decodeLayout(stored); err != nil {
				return err
			}
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		if layout, err = current.split(p, keyspace.LSNCount(st.lsn), at); err != nil {
			return dberr.BadRequest("%v", err)
		}
		for _, q := range []int{current.next, current.next + 1} {
			cs := collState{
				lsn:    keyspace.PartitionLSN(q, keyspace.LSNCount(st.lsn)),
				lastTs: st.lastTs,
				seq:    keyspace.PartitionLSN(q, keyspace.LSNCount(st.seq)),
				// Which of the parent's items are whose is counted in
				// the background.
				counting: true,
			}
			if err := w.Set(keyspace.PartitionStateKey(c.rid, q), cs.encode()); err != nil {
				return err
			}
		}
		st.split = true
		if err := w.Set(keyspace.PartitionStateKey(c.rid, p), st.encode()); err != nil {
			return err
		}
		// Nothing is purged in the parent any more: its lease, if a node
		// holds it, is let go (the nodes take the children's).
		if err := w.Delete(keyspace.LeaseKey(c.rid, p)); err != nil {
			return err
		}
		if err := w.Set(keyspace.PartsKey(c.rid), layout.encode()); err != nil {
			return err
		}
		_, err = nextNumber(w) // other nodes reload the catalog
		return err
	})
	if err != nil {
		return SplitResult{}, err
	}
	next := cat.clone()
	nc := *c
	nc.setLayout(layout)
	next.dbs[dbID].colls[collID] = &nc
	e.publish(next)
	e.indexer.kick() // counts the children's items
	e.trimmer.VisitAll()
	q := layout.next - 2
	return SplitResult{Parent: rangeID, Children: []string{strconv.Itoa(q), strconv.Itoa(q + 1)}}, nil
}
