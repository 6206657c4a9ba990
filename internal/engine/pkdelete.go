package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Delete by partition key (POST .../operations/partitionkeydelete, the JS
// SDK's container.deleteAllItemsForPartitionKey): the items of one
// logical partition become invisible at once and are deleted in the
// background.
//
// The request records a partition delete in the store (keyspace
// PKDelete: the container's LSN at the request) and in the container's
// catalog entry, in one transaction that also bumps the catalog counter,
// so nodes sharing the store reload it. From then on the itemReader, the
// one place every read path gets items from, treats an item of that
// partition whose LSN is at most the recorded one as gone, exactly as it
// treats an expired one; items written afterwards have higher LSNs and
// are not touched. The deleter then removes the marked items in batches
// through removeItem (so each is a delete in every index and in the
// all-versions change feed), pacing itself to a tenth of the container's
// offer as the service does, and drops the record when none is left. The
// record survives a crash, and the deleter resumes from it.

// pkDeleteShare is the share of a container's throughput the deleter may
// spend, as the service's delete by partition key does
// (https://learn.microsoft.com/azure/cosmos-db/nosql/how-to-delete-by-partition-key).
const pkDeleteShare = 0.10

// pkDeleteBatch is how many items one deleter transaction removes.
const pkDeleteBatch = 100

// partitionDeletes are a container's partition deletes in progress: the
// encoded partition key (as a string) and the LSN through which its items
// are deleted. A container's map is never changed in place: a new one is
// published with the catalog.
type partitionDeletes map[string]pkDelete

// pkDelete is one partition delete in progress.
type pkDelete struct {
	lsn uint64 // items with LSN <= lsn are deleted
	ts  int64  // when it was asked for
}

func (d pkDelete) encode() []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, d.lsn), uint64(d.ts))
}

func decodePKDelete(v []byte) (pkDelete, bool) {
	if len(v) != 16 {
		return pkDelete{}, false
	}
	return pkDelete{lsn: binary.BigEndian.Uint64(v), ts: int64(binary.BigEndian.Uint64(v[8:]))}, true
}

// deletedByPartition reports whether the item stored at key (a doc key of
// c) with LSN lsn is deleted by a partition delete in progress.
func (c *container) deletedByPartition(key []byte, lsn uint64) bool {
	if len(c.pkDeletes) == 0 {
		return false
	}
	n, ok := document.PKLen(key[docPrefixLen:], len(c.pk.Paths))
	if !ok {
		return false
	}
	d, ok := c.pkDeletes[string(key[docPrefixLen:docPrefixLen+n])]
	return ok && lsn <= d.lsn
}

// loadPartitionDeletes attaches the partition deletes in progress to the
// containers of cat.
func loadPartitionDeletes(r storage.Reader, cat *catalog) error {
	byRID := map[[8]byte]*container{}
	for _, db := range cat.dbs {
		for _, c := range db.colls {
			byRID[c.rid] = c
		}
	}
	it := r.Scan([]byte{keyspace.PKDelete}, []byte{keyspace.PKDelete + 1}, false)
	defer it.Close()
	for it.Next() {
		k := it.Key()
		if len(k) < 9 {
			continue
		}
		c := byRID[[8]byte(k[1:9])]
		d, ok := decodePKDelete(it.Value())
		if c == nil || !ok {
			continue
		}
		if c.pkDeletes == nil {
			c.pkDeletes = partitionDeletes{}
		}
		c.pkDeletes[string(k[9:])] = d
	}
	return it.Err()
}

// DeletePartition deletes every item of the logical partition ref.PK of
// container ref.DB/ref.Coll: they are invisible when it returns and
// deleted in the background.
func (e *Engine) DeletePartition(ctx context.Context, ref ItemRef) (Resource, error) {
	return retrySplit(ctx, e, func() (Resource, error) { return e.deletePartition(ctx, ref) })
}

// deletePartition is DeletePartition, run again by retrySplit when it finds its
// partition split.
func (e *Engine) deletePartition(ctx context.Context, ref ItemRef) (Resource, error) {
	if _, err := e.resolve(ref); err != nil {
		return Resource{}, err
	}
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat := e.catalogSnapshot()
	c, err := cat.container(ref.DB, ref.Coll)
	if err != nil {
		return Resource{}, err
	}
	pk, err := c.pkFromRequest(ref)
	if err != nil {
		return Resource{}, err
	}
	pkEnc := pk.Encode(nil)
	d := pkDelete{ts: e.now().Unix()}
	err = e.store.Update(ctx, func(w storage.Writer) error {
		// The delete hides the items written before it in the
		// partition's log: those with an LSN up to its current one.
		sts, err := touchPartitions(w, c, c.partitionOf(pk))
		if err != nil {
			return err
		}
		d.lsn = sts[0].lsn
		if _, err := nextNumber(w); err != nil { // other nodes reload the catalog
			return err
		}
		return w.Set(keyspace.PKDeleteKey(c.rid, pkEnc), d.encode())
	})
	if err != nil {
		return Resource{}, err
	}
	e.publishPartitionDeletes(cat, c, func(m partitionDeletes) { m[string(pkEnc)] = d })
	e.pkDeleter.kick()
	return Resource{Charge: throughput.CatalogWrite}, nil
}

// publishPartitionDeletes publishes the catalog cat with container c's
// partition deletes changed by edit. REQUIRES: e.catMu held.
func (e *Engine) publishPartitionDeletes(cat *catalog, c *container, edit func(partitionDeletes)) {
	m := make(partitionDeletes, len(c.pkDeletes)+1)
	for k, v := range c.pkDeletes {
		m[k] = v
	}
	edit(m)
	next := cat.clone()
	nc := *c
	nc.pkDeletes = m
	next.dbs[c.dbID].colls[c.id] = &nc
	e.publish(next)
}

// PartitionDeleteStatus is one partition delete in progress, for the
// status endpoint.
type PartitionDeleteStatus struct {
	// PartitionKey is the logical partition's key as JSON.
	PartitionKey []byte
	// RequestedAt is when the delete was asked for (epoch seconds).
	RequestedAt int64
	// Remaining is how many of its items are still stored, up to
	// statusCountCap (Capped then).
	Remaining int
	Capped    bool
}

// statusCountCap bounds the items a status request counts.
const statusCountCap = 1_000_000

// PartitionDeletes returns container dbID/collID's partition deletes in
// progress, in key order.
func (e *Engine) PartitionDeletes(ctx context.Context, dbID, collID string) ([]PartitionDeleteStatus, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return nil, err
	}
	pks := make([]string, 0, len(c.pkDeletes))
	for pk := range c.pkDeletes {
		pks = append(pks, pk)
	}
	sort.Strings(pks)
	out := make([]PartitionDeleteStatus, 0, len(pks))
	err = e.store.View(ctx, func(r storage.Reader) error {
		for _, pkEnc := range pks {
			d := c.pkDeletes[pkEnc]
			pk, _, err := document.DecodePK([]byte(pkEnc), len(c.pk.Paths))
			if err != nil {
				return err
			}
			s := PartitionDeleteStatus{PartitionKey: pk.AppendJSON(nil), RequestedAt: d.ts}
			prefix := keyspace.DocPartitionPrefix(c.rid, []byte(pkEnc))
			it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
			for s.Remaining < statusCountCap && it.Next() {
				if h, _, err := document.DecodeItem(it.Value()); err == nil && h.LSN <= d.lsn {
					s.Remaining++
				}
			}
			s.Capped = s.Remaining == statusCountCap
			err = errors.Join(it.Err(), it.Close())
			if err != nil {
				return err
			}
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// pkDeleter removes the items of partition deletes in the background.
type pkDeleter struct {
	e       *Engine
	wake    chan struct{}
	stopped chan struct{}
	done    chan struct{}
	stop    sync.Once
}

func startPKDeleter(e *Engine) *pkDeleter {
	d := &pkDeleter{e: e, wake: make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{})}
	go d.loop()
	d.kick()
	return d
}

// kick makes the deleter look for work.
func (d *pkDeleter) kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *pkDeleter) stopAndWait() {
	d.stop.Do(func() { close(d.stopped) })
	<-d.done
}

// pkDeleterPoll is how often a node on a shared store looks for partition
// deletes that other nodes recorded (its catalog reload shows them, but
// does not wake this loop).
const pkDeleterPoll = time.Second

func (d *pkDeleter) loop() {
	defer close(d.done)
	for {
		var poll <-chan struct{}
		cancel := func() {}
		if d.e.shared || d.pending() {
			poll, cancel = d.e.real.After(pkDeleterPoll)
		}
		select {
		case <-d.stopped:
			cancel()
			return
		case <-d.wake:
		case <-poll:
		}
		cancel()
		d.runOnce()
	}
}

// pending reports whether any container has a partition delete.
func (d *pkDeleter) pending() bool {
	for _, db := range d.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			if len(c.pkDeletes) > 0 {
				return true
			}
		}
	}
	return false
}

// runOnce works through every partition delete until each is done or
// the deleter is stopped. Errors are logged and retried on the next poll.
func (d *pkDeleter) runOnce() {
	for _, db := range d.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			for pkEnc, del := range c.pkDeletes {
				if err := d.drain(c, []byte(pkEnc), del); err != nil {
					switch {
					case errors.Is(err, errPartitionSplit):
						// Go on in the partition's children, on the
						// reloaded catalog.
						if _, err := d.e.refreshCatalog(context.Background(), nil); err == nil {
							d.kick()
						}
					case !errors.Is(err, errDeleterStopped):
						d.e.log.Error("delete by partition key", "container", c.label(), "err", err)
					}
					return
				}
			}
		}
	}
}

var errDeleterStopped = errors.New("engine: partition deleter stopped")

// drain deletes the items of c's partition pkEnc that del marks, in
// paced batches, then drops the record.
func (d *pkDeleter) drain(c *container, pkEnc []byte, del pkDelete) error {
	e := d.e
	ctx := context.Background()
	prefix := keyspace.DocPartitionPrefix(c.rid, pkEnc)
	end := keys.PrefixEnd(prefix)
	part, err := c.partitionOfKey(pkEnc)
	if err != nil {
		return err
	}
	// from is where the next batch scans: past the items already deleted,
	// whose tombstones a scan from the start would walk again and again.
	from := prefix
	for {
		if e.shared {
			held, _, err := e.holdLeases(c)
			if err != nil || !slices.Contains(held, part) {
				return err // another node is deleting; try again on the next poll
			}
		}
		var removed int
		var units float64
		var next []byte
		err := e.updateItems(ctx, c, part, func(t *itemTx) error {
			removed, units, next = 0, 0, nil
			it := t.w.Scan(from, end, false)
			var victims []itemVersion
			for len(victims) < pkDeleteBatch && it.Next() {
				h, doc, err := document.DecodeItem(it.Value())
				if err != nil {
					it.Close()
					return err
				}
				if h.LSN > del.lsn {
					continue
				}
				key := bytes.Clone(it.Key())
				id, _, err := keys.DecodeBytes(key[len(prefix):])
				if err != nil {
					it.Close()
					return err
				}
				victims = append(victims, itemVersion{key: key, pkEnc: pkEnc, id: string(id), storedItem: storedItem{doc: bytes.Clone(doc), h: h}})
			}
			if err := errors.Join(it.Err(), it.Close()); err != nil {
				return err
			}
			for _, v := range victims {
				if err := removeItem(t.w, c, &t.st, t.now, t.logged, v, false); err != nil {
					return err
				}
				removed++
				units += throughput.Write(len(v.doc))
			}
			if len(victims) > 0 {
				next = append(bytes.Clone(victims[len(victims)-1].key), 0)
			}
			return nil
		})
		if next != nil {
			from = next
		}
		if err != nil {
			return err
		}
		e.metrics.PKDeletedItems.WithLabelValues(c.label()).Add(float64(removed))
		if removed == 0 {
			return d.finish(c, pkEnc, del)
		}
		if err := d.pace(c, units); err != nil {
			return err
		}
	}
}

// pace waits, on the real clock, as long as units take at the deleter's
// share of c's offer; a container that no offer pays for is not paced.
func (d *pkDeleter) pace(c *container, units float64) error {
	var wait time.Duration
	if o := d.e.catalogSnapshot().offerFor(c); o != nil {
		wait = time.Duration(units / (pkDeleteShare * o.ru) * float64(time.Second))
	}
	ch, cancel := d.e.real.After(wait)
	defer cancel()
	select {
	case <-d.stopped:
		return errDeleterStopped
	case <-ch:
		return nil
	}
}

// finish drops c's record of the delete of pkEnc, unless a later delete
// of the same partition replaced it.
func (d *pkDeleter) finish(c *container, pkEnc []byte, del pkDelete) error {
	e := d.e
	e.catMu.Lock()
	defer e.catMu.Unlock()
	key := keyspace.PKDeleteKey(c.rid, pkEnc)
	dropped := false
	part, err := c.partitionOfKey(pkEnc)
	if err != nil {
		return err
	}
	err = e.store.Update(context.Background(), func(w storage.Writer) error {
		dropped = false
		v, err := w.Get(key)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if cur, ok := decodePKDelete(v); ok && cur != del {
			return nil
		}
		if _, err := touchPartitions(w, c, part); err != nil {
			return ignoreDeleted(err)
		}
		if _, err := nextNumber(w); err != nil {
			return err
		}
		dropped = true
		return w.Delete(key)
	})
	if err != nil || !dropped {
		return err
	}
	cat := e.catalogSnapshot()
	cur, err := cat.container(c.dbID, c.id)
	if err != nil || cur.rid != c.rid {
		return nil // the container is gone
	}
	e.publishPartitionDeletes(cat, cur, func(m partitionDeletes) {
		if m[string(pkEnc)] == del {
			delete(m, string(pkEnc))
		}
	})
	return nil
}
