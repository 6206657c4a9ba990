package engine

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/expiry"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl"
	"github.com/ebbdb/ebb/internal/ttl/purger"
)

// The engine's side of the TTL purger (package ttl/purger, which decides
// when to purge and how much): finding a container's next deadline and its
// due items in its expiry index (package expiry), and purging a batch of them as
// one item transaction (updateItemsAt), each re-checked by the itemReader
// at the purge instant and deleted by removeItem, so a purge is a delete
// in every index and in the feed.

// newPurger makes e's purger; the time guard retimes it when it sees the
// wall clock jump ahead.
func newPurger(e *Engine) *purger.Purger {
	p := purger.New(purgeHost{e}, purger.Config{
		Clock:     e.clock,
		Real:      e.real,
		Now:       e.guard.Now,
		WakeAt:    e.guard.WakeAt,
		ItemUnits: purgeItemEstimate,
		Metrics:   e.metrics,
		Log:       e.log,
		OnPurge:   e.onPurge,
		Busy:      e.fg.busy,
	})
	e.guard.OnJump(p.Retime)
	return p
}

// purgeItemEstimate is what purging one small item costs, for sizing a
// batch to the throughput available before the items are read.
var purgeItemEstimate = throughput.Write(1024)

// noteWrite tells the purger of an item version just written, which may
// bring its container's deadline forward.
func (e *Engine) noteWrite(c *container, h document.ItemHeader) {
	if at, ok := ttl.ExpireAt(h.Ts, h.TTL, c.ttl); ok {
		e.purger.NoteExpiry(c.rid, at)
	}
}

// purgeHost is the engine as the purger sees it.
type purgeHost struct{ e *Engine }

var _ purger.Host = purgeHost{}

func (h purgeHost) Containers() []purger.ContainerID {
	var all []purger.ContainerID
	for _, db := range h.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			all = append(all, c.rid)
		}
	}
	return all
}

// expiring returns container id if it exists with its TTL on.
func (h purgeHost) expiring(id purger.ContainerID) *container {
	if c := h.e.containerByRID(id); c != nil && c.ttl.On() {
		return c
	}
	return nil
}

func (h purgeHost) TTLOn(id purger.ContainerID) bool { return h.expiring(id) != nil }

func (h purgeHost) Label(id purger.ContainerID) string {
	if c := h.e.containerByRID(id); c != nil {
		return c.label()
	}
	return ""
}

func (h purgeHost) NextDeadline(id purger.ContainerID, from purger.Cursor) (int64, bool, error) {
	c := h.expiring(id)
	if c == nil {
		return 0, false, nil
	}
	var at int64
	var ok bool
	err := h.e.viewExpiry(c, func(x expiry.Index, r storage.Reader) (err error) {
		at, ok, err = x.NextDeadline(r, expiry.Cursor(from))
		return err
	})
	return at, ok, err
}

// HoldLease holds this node's share of c's partitions (holdLeases).
// When it gains one, the purger scans c from the start again: its cursor
// passed over that partition's items while another node held it.
func (h purgeHost) HoldLease(id purger.ContainerID) (bool, time.Duration, error) {
	c := h.expiring(id)
	if c == nil {
		return false, 0, nil // gone: the purger forgets it when it re-plans
	}
	held, wait, err := h.e.holdLeases(c)
	if err != nil {
		return false, 0, err
	}
	e := h.e
	e.heldMu.Lock()
	before := e.held[c.rid]
	if e.held == nil {
		e.held = map[[8]byte][]int{}
	}
	e.held[c.rid] = held
	e.heldMu.Unlock()
	for _, p := range held {
		if !slices.Contains(before, p) {
			e.purger.Replan(c.rid)
			break
		}
	}
	return len(held) > 0, wait, nil
}

// heldPartitions are the partitions of c whose items this node purges.
func (e *Engine) heldPartitions(c *container) []int {
	if e.cluster == nil {
		return c.layout.ids()
	}
	e.heldMu.Lock()
	defer e.heldMu.Unlock()
	return e.held[c.rid]
}

func (h purgeHost) Budget(id purger.ContainerID) purger.Budget {
	if c := h.expiring(id); c != nil {
		if b := h.e.bucketFor(c); b != nil {
			return b
		}
	}
	return nil // not a nil *bucket: that would be a non-nil Budget
}

func (h purgeHost) CountDue(id purger.ContainerID, now int64) (int, error) {
	c := h.expiring(id)
	if c == nil {
		return 0, nil
	}
	var n int
	err := h.e.viewExpiry(c, func(x expiry.Index, r storage.Reader) (err error) {
		n, err = x.CountDue(r, now)
		return err
	})
	return n, err
}

// PurgeBatch reads up to limit due entries and purges their items in one
// item transaction at the purge instant now.
func (h purgeHost) PurgeBatch(id purger.ContainerID, from purger.Cursor, now int64, limit int) (purger.PurgeResult, error) {
	var r purger.PurgeResult
	c := h.expiring(id)
	if c == nil {
		return r, nil
	}
	var due []expiry.Due
	var next expiry.Cursor
	err := h.e.viewExpiry(c, func(x expiry.Index, rd storage.Reader) (err error) {
		due, next, err = x.DueBy(rd, expiry.Cursor(from), now, limit)
		return err
	})
	if err != nil || len(due) == 0 {
		return r, err
	}
	r.Read, r.Next = len(due), purger.Cursor(next)
	// The transaction reads at the purge instant, which is never ahead of
	// any request's: what its re-check finds expired, every request finds
	// expired.
	// The batch is one transaction over the partitions its items are in,
	// each partition's items purged under that partition's state; after
	// a split of one of them, on the reloaded catalog's.
	return retrySplit(context.Background(), h.e, func() (purger.PurgeResult, error) {
		if c = h.expiring(id); c == nil {
			return r, nil
		}
		return r, h.purgeDue(c, due, now, &r)
	})
}

// purgeDue purges due, in one transaction, into r: the items of the
// partitions this node holds; another node purges the others.
func (h purgeHost) purgeDue(c *container, due []expiry.Due, now int64, r *purger.PurgeResult) error {
	held := h.e.heldPartitions(c)
	if slices.ContainsFunc(held, func(p int) bool { _, live := c.layout.byID(p); return !live }) {
		// A partition this node held was split since the pass took its
		// leases: take the children's now, or their items would wait
		// for the next pass, passed over by the cursor meanwhile.
		if _, _, err := h.HoldLease(c.rid); err != nil {
			return err
		}
		held = h.e.heldPartitions(c)
	}
	byPartition := map[int][]expiry.Due{}
	var parts []int
	for _, d := range due {
		p, err := c.partitionOfKey(d.PK)
		if err != nil {
			return err
		}
		if !slices.Contains(held, p) {
			continue
		}
		if byPartition[p] == nil {
			parts = append(parts, p)
		}
		byPartition[p] = append(byPartition[p], d)
	}
	if len(parts) == 0 {
		return nil
	}
	return h.e.updateItemsIn(context.Background(), c, time.Unix(now, 0), parts, func(txFor func(p int) (*itemTx, error)) error {
		r.Units, r.Expiries = 0, r.Expiries[:0] // fn may run again after a conflict
		for _, p := range parts {
			t, err := txFor(p)
			if err != nil {
				return err
			}
			err = t.purge(byPartition[p], func(old storedItem) {
				r.Units += throughput.Write(len(old.doc))
				at, _ := ttl.ExpireAt(old.h.Ts, old.h.TTL, c.ttl)
				r.Expiries = append(r.Expiries, at)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// purge deletes the items that the expiry entries due name if they are
// still stored and expired at the transaction's instant, and calls purged
// with each. It reads the items together, in key order: in a storm of
// expiries a read per item cost more than the deletes.
func (t *itemTx) purge(due []expiry.Due, purged func(old storedItem)) error {
	order := make([]int, len(due))
	keys := make([][]byte, len(due))
	for i, d := range due {
		order[i] = i
		keys[i] = keyspace.DocKey(t.c.rid, d.PK, d.ID)
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	sorted := make([][]byte, len(due))
	for j, i := range order {
		sorted[j] = keys[i]
	}
	olds := make([]storedItem, len(due))
	expired := make([]bool, len(due))
	err := t.items.lookupMany(sorted, func(j int, old storedItem, visible bool) {
		olds[order[j]], expired[order[j]] = old, !visible
	})
	if err != nil {
		return err
	}
	for i, d := range due {
		old := olds[i]
		switch {
		case old.doc == nil:
			// An entry without its item cannot happen by construction;
			// dropping it keeps a bad entry from waking the purger forever.
			if err := t.w.Delete(d.Key); err != nil {
				return err
			}
			continue
		case !expired[i]:
			continue // rewritten since the scan
		}
		v := itemVersion{key: keys[i], pkEnc: d.PK, id: d.ID, storedItem: old}
		if err := removeItem(t.w, t.c, &t.st, t.now, t.logged, v, true); err != nil {
			return err
		}
		purged(old)
	}
	return nil
}

// expiryIndex is c's expiry index (package expiry).
func (c *container) expiryIndex() expiry.Index {
	return expiry.Index{RID: c.rid, PKLen: len(c.pk.Paths), Default: c.ttl}
}

// viewExpiry runs fn on c's expiry index in a snapshot.
func (e *Engine) viewExpiry(c *container, fn func(x expiry.Index, r storage.Reader) error) error {
	return e.store.View(context.Background(), func(r storage.Reader) error { return fn(c.expiryIndex(), r) })
}

// containerByRID finds a container in the current catalog.
func (e *Engine) containerByRID(rid [8]byte) *container {
	for _, db := range e.catalogSnapshot().dbs {
		if db.rid != [4]byte(rid[:4]) {
			continue
		}
		for _, c := range db.colls {
			if c.rid == rid {
				return c
			}
		}
	}
	return nil
}
