package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

// Physical partitions. A container's items are spread over its physical
// partitions by the effective partition key (EPK) of their partition
// key, each partition owning a contiguous range of EPKs, as on the
// service; the SDKs read the ranges (GET …/pkranges) and address a
// partition by its range id, which is its number. Each partition has its
// own write state and log sequence (keyspace: PartitionStateKey,
// PartitionLSN), and its writes hold only its own lock
// (updatePartition), so writes to different partitions never meet.
//
// How many partitions a container starts with is decided when it is
// created. As on the service, it follows the throughput it is created
// with (partitionsFor); the create request can also name it with
// x-ebb-partition-count (Ebb's own header), for tests and benchmarks.
// The ranges divide the EPK space evenly (layout.go): version 2 EPKs are
// MurmurHash3 values with the top two bits cleared, spread evenly over
// [0, 2^126), so the boundaries are multiples of 2^126/n written as 32
// hex digits. Items of version 1 keys, whose EPKs are not spread that
// way, stay in one partition. Partitions split when the container's
// throughput is raised past what they serve, or when one's documents
// grow past the split size (growPartitions, splitsize.go), or on an
// administrative call (split.go).

// partitionCountHeader names x-ebb-partition-count in messages.
const partitionCountHeader = "x-ebb-partition-count"

// partitionsFor is how many physical partitions the service gives a
// container created with its own throughput tp (manual RU/s, or the
// autoscale maximum): one up to the 10,000 RU/s a physical partition
// serves (https://learn.microsoft.com/azure/cosmos-db/concepts-limits),
// and above that one per 6,000 RU/s, as the service lays a new container
// out (18,000 RU/s on three partitions of 6,000: https://learn.microsoft.com/answers/questions/127055).
// A container that shares its database's throughput, or whose key has
// version 1, has one.
func partitionsFor(tp *Throughput, def document.PKDef) int {
	if tp == nil || def.HashV1() {
		return 1
	}
	ru := max(tp.Manual, tp.AutoscaleMax)
	if ru <= 10_000 {
		return 1
	}
	return min((ru+5_999)/6_000, keyspace.MaxPartitions)
}

// parsePartitionCount reads a create request's x-ebb-partition-count for
// a container with partition key def and throughput tp (nil: shared).
func parsePartitionCount(h string, tp *Throughput, def document.PKDef) (int, error) {
	if h == "" {
		return partitionsFor(tp, def), nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || n < 1 || n > keyspace.MaxPartitions {
		return 0, dberr.BadRequest("The %s header %q must be a number of physical partitions from 1 to %d.", partitionCountHeader, h, keyspace.MaxPartitions)
	}
	if n > 1 && def.HashV1() {
		return 0, dberr.BadRequest("A container whose partition key has version 1 has one physical partition; %s %d needs partition key version 2.", partitionCountHeader, n)
	}
	return n, nil
}

// setPartitions makes c a container of n physical partitions laid out
// evenly.
func (c *container) setPartitions(n int) { c.setLayout(evenLayout(n)) }

// setLayout makes l c's layout, with each live partition's lock key
// made once, for the writes that take it, and its upper bound as an EPK
// head, for placing keys (partitionLayout.find).
func (c *container) setLayout(l *partitionLayout) {
	for i := range l.live {
		// Clipped: an append to a shared key must copy it.
		l.live[i].lock = [][]byte{slices.Clip(keyspace.PartitionStateKey(c.rid, l.live[i].id))}
		// Every layout's bounds are heads (evenLayout, split;
		// decodeLayout refuses others).
		l.live[i].maxHead, _ = boundHead(l.live[i].max)
	}
	c.layout = l
}

// partitionLock is the lock of c's partition p (its state key), as
// storage.Store.UpdateLocked takes it. The slice is shared: read only.
func (c *container) partitionLock(p int) [][]byte {
	if r, live := c.layout.byID(p); live && r.lock != nil {
		return r.lock
	}
	return [][]byte{keyspace.PartitionStateKey(c.rid, p)}
}

// multi reports whether c has more than one live partition.
func (c *container) multi() bool { return len(c.layout.live) > 1 }

// partitionOf returns the physical partition of the items of the
// (complete) partition key pk.
func (c *container) partitionOf(pk document.PartitionKey) int {
	if !c.multi() {
		return c.layout.live[0].id
	}
	return c.layout.find(c.pk.EPKHead(pk)).id
}

// partitionOfKey returns the physical partition of the items whose
// encoded partition key starts pkEnc (an item key after its prefix will
// do).
func (c *container) partitionOfKey(pkEnc []byte) (int, error) {
	if !c.multi() {
		return c.layout.live[0].id, nil
	}
	_, p, err := c.placeKey(pkEnc)
	return p, err
}

// placeKey returns the head of the EPK of the items whose encoded
// partition key starts pkEnc, and the physical partition it places
// them in. REQUIRES: c's key is not of version 1 (such a container has
// one partition, and its keys no head).
func (c *container) placeKey(pkEnc []byte) (head [16]byte, p int, err error) {
	head, err = c.pk.EPKHeadOfKey(pkEnc)
	if err != nil {
		return head, 0, fmt.Errorf("engine: item key: %w", err)
	}
	return head, c.layout.find(head).id, nil
}

// writtenBy reports whether an item of live partition p may carry an
// LSN of partition q: its own, or one it was split from.
func (c *container) writtenBy(p, q int) bool {
	if p == q {
		return true
	}
	r, _ := c.layout.byID(p)
	for _, a := range r.ancestors {
		if a.id == q {
			return true
		}
	}
	return false
}

// checkPartition fails a write of the item at doc key key in a
// transaction over the partition whose state is st when the item is not
// that partition's: a bug, which would put its LSN in another
// partition's sequence.
func (c *container) checkPartition(key []byte, st *collState) error {
	if !c.multi() && len(c.layout.gone) == 0 {
		return nil
	}
	p, err := c.partitionOfKey(key[docPrefixLen:])
	if err != nil {
		return err
	}
	if want := keyspace.LSNPartition(st.lsn); p != want {
		return fmt.Errorf("engine: item of partition %d written in a transaction of partition %d", p, want)
	}
	return nil
}

// inPartition reports whether the item at doc key key is in partition p.
func (c *container) inPartition(key []byte, p int) bool {
	q, err := c.partitionOfKey(key[docPrefixLen:])
	return err == nil && q == p
}

// feedPartition returns the physical partition a change feed request
// reads: a feed follows one partition's log sequence. It is the range
// the request names, or the partition of the partition key it is scoped
// to (pk, encoded), or the only one.
func (c *container) feedPartition(src *docSource, pk []byte, rangeID string) (int, error) {
	switch {
	case rangeID != "":
		return src.part, nil
	case !c.multi():
		return c.layout.live[0].id, nil
	case len(pk) > 0:
		key, rest, err := document.DecodePK(pk, len(c.pk.Paths))
		if err == nil && len(rest) == 0 {
			return c.partitionOf(key), nil
		}
	}
	return 0, dberr.BadRequest("This container has %d physical partitions, and a change feed follows one partition's log: read it one partition key range at a time (x-ms-documentdb-partitionkeyrangeid, as the SDKs' feed ranges do), or for one complete partition key.", len(c.layout.live))
}

// partitionStateKeys are the keys of the write states of every live
// partition of c: the locks of a transaction over all its data.
func (c *container) partitionStateKeys() [][]byte {
	ks := make([][]byte, len(c.layout.live))
	for i, r := range c.layout.live {
		ks[i] = c.partitionLock(r.id)[0]
	}
	return ks
}

// parsePartitionID reads a partition key range id, as the SDKs send it
// in x-ms-documentdb-partitionkeyrangeid; ok is false for an id that is
// not one of c's live ranges (one that was split, or never was).
func (c *container) parsePartitionID(id string) (p int, ok bool) {
	n, err := strconv.Atoi(id)
	if err != nil || strconv.Itoa(n) != id {
		return 0, false
	}
	_, live := c.layout.byID(n)
	return n, live
}

// errNoSuchRange is the service's answer to a request for a partition
// key range the container does not have (it was split, or never was):
// 410 with substatus 1002, on which the SDKs refresh their ranges.
func (c *container) errNoSuchRange(id string) error {
	return &Error{Kind: KindGone, SubStatus: 1002, Message: fmt.Sprintf("The partition key range '%s' is not one of this container's: it was split, or never was. Read the partition key ranges again.", id)}
}

// loadPartitionLayouts reads every container's partition layout.
func loadPartitionLayouts(r storage.Reader, cat *catalog) error {
	colls := map[[8]byte]*container{}
	for _, db := range cat.dbs {
		for _, c := range db.colls {
			c.setPartitions(1)
			colls[c.rid] = c
		}
	}
	it := r.Scan([]byte{keyspace.Parts}, []byte{keyspace.Parts + 1}, false)
	defer it.Close()
	for it.Next() {
		k := it.Key()
		if len(k) != 1+8 {
			return errCorruptLayout
		}
		if c := colls[[8]byte(k[1:])]; c != nil {
			l, err := decodeLayout(it.Value())
			if err != nil {
				return fmt.Errorf("%s: %w", c.label(), err)
			}
			c.setLayout(l)
		}
	}
	return it.Err()
}

// initPartitions writes the state of each of c's partitions, and their
// layout when there are several or their number was asked for, for a new
// container.
func initPartitions(w storage.Writer, c *container) error {
	for _, p := range c.layout.ids() {
		st := collState{lsn: keyspace.PartitionLSN(p, 0), seq: keyspace.PartitionLSN(p, 0)}
		if err := w.Set(keyspace.PartitionStateKey(c.rid, p), st.encode()); err != nil {
			return err
		}
	}
	if !c.multi() && !c.layout.pinned {
		return nil
	}
	return w.Set(keyspace.PartsKey(c.rid), c.layout.encode())
}

// version is how far a container has been written, as of one snapshot:
// each physical partition's last LSN. Versions read from snapshots are
// ordered, since every partition's LSN only grows.
type version []uint64

func (v version) equal(o version) bool { return slices.Equal(v, o) }

// behind reports whether v is older than o.
func (v version) behind(o version) bool {
	if len(v) != len(o) || v.equal(o) {
		return false
	}
	for p := range v {
		if v[p] > o[p] {
			return false
		}
	}
	return true
}

// distance is how many LSNs o is ahead of v, in all partitions.
// REQUIRES: v is o or behind it.
func (v version) distance(o version) uint64 {
	var n uint64
	for p := range v {
		n += o[p] - v[p]
	}
	return n
}

// containerState is what the in-memory search indexes (vector sets,
// full-text indexes) are read at: the container's version, and its
// partitions' usage counters together.
type containerState struct {
	lsns     version
	items    int64
	counting bool
}

// readContainerState reads the states of all of c's live partitions in
// r; the version lists their LSNs in c's layout's order.
func readContainerState(r storage.Reader, c *container) (containerState, error) {
	states, err := readPartitionStates(r, c)
	if err != nil {
		return containerState{}, err
	}
	cs := containerState{lsns: make(version, len(states))}
	for i, st := range states {
		cs.lsns[i] = st.lsn
		cs.items += st.items
		cs.counting = cs.counting || st.counting
	}
	return cs, nil
}

// partitionStates reads the write states of c's live partitions in one
// read transaction (readPartitionStates).
func (e *Engine) partitionStates(ctx context.Context, c *container) (states []collState, err error) {
	err = e.store.View(ctx, func(r storage.Reader) error {
		states, err = readPartitionStates(r, c)
		return err
	})
	return states, err
}

// readPartitionStates reads the states of c's live partitions in r, in
// its layout's order, together (one round trip on a shared store).
func readPartitionStates(r storage.Reader, c *container) ([]collState, error) {
	keys := c.partitionStateKeys()
	order := make([]int, len(keys)) // layout positions, in key order
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	sorted := make([][]byte, len(keys))
	for j, i := range order {
		sorted[j] = keys[i]
	}
	states := make([]collState, len(keys))
	found := 0
	err := r.GetMany(sorted, func(j int, v []byte) (err error) {
		found++
		states[order[j]], err = decodeCollState(v)
		return err
	})
	if err != nil {
		return nil, err
	}
	if found < len(keys) {
		return nil, dberr.NotFound("Resource Not Found. The container was deleted.")
	}
	return states, nil
}

// changesBetween calls f for each item of c written or removed after
// version from up to version to (changesSince, partition by partition).
// REQUIRES: from and to are versions of c's layout.
func changesBetween(r storage.Reader, c *container, from, to version, m *workMeter, f func(docKey []byte, gone bool) error) error {
	for p := range to {
		if err := changesSince(r, c, from[p]+1, to[p], m, f); err != nil {
			return err
		}
	}
	return nil
}
