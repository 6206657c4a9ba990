package engine

import (
	"bytes"
	"context"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl"
	"github.com/ebbdb/ebb/internal/ttl/purger"
)

// The engine's side of the TTL purger (package ttl/purger, which decides
// when to purge and how much): finding a container's next deadline and its
// due items in the two expiry keyspaces, and purging a batch of them as
// one item transaction (updateItemsAt), each re-checked by the itemReader
// at the purge instant and deleted by removeItem, so a purge is a delete
// in every index and in the feed.

func newPurger(e *Engine) *purger.Purger {
	return purger.New(purgeHost{e}, purger.Config{
		Clock:     e.clock,
		Real:      e.real,
		PurgeNow:  e.guard.PurgeNowAt,
		ItemUnits: purgeItemEstimate,
		Metrics:   e.metrics,
		Log:       e.log,
		OnPurge:   e.onPurge,
	})
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

// BeginPass observes the wall clock for the visibility high-water mark,
// which every write's _ts is at least.
func (h purgeHost) BeginPass() { h.e.guard.Now() }

func (h purgeHost) NextDeadline(id purger.ContainerID, from purger.Cursor) (int64, bool, error) {
	c := h.expiring(id)
	if c == nil {
		return 0, false, nil
	}
	return nextDeadline(h.e.store, c, from)
}

func (h purgeHost) HoldLease(id purger.ContainerID) (bool, time.Duration, error) {
	c := h.expiring(id)
	if c == nil {
		return false, 0, nil // gone: the purger forgets it when it re-plans
	}
	return h.e.holdLease(c)
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
	return countDue(h.e.store, c, now)
}

// PurgeBatch reads up to limit due entries and purges their items in one
// item transaction at the purge instant now.
func (h purgeHost) PurgeBatch(id purger.ContainerID, from purger.Cursor, now int64, limit int) (purger.PurgeResult, error) {
	var r purger.PurgeResult
	c := h.expiring(id)
	if c == nil {
		return r, nil
	}
	due, next, err := dueEntries(h.e.store, c, from, now, limit)
	if err != nil || len(due) == 0 {
		return r, err
	}
	r.Read, r.Next = len(due), next
	// The transaction reads at the purge instant, which is never ahead of
	// any request's: what its re-check finds expired, every request finds
	// expired.
	err = h.e.updateItemsAt(context.Background(), c, time.Unix(now, 0), func(t *itemTx) error {
		r.Units, r.Expiries = 0, r.Expiries[:0] // fn may run again after a conflict
		for _, d := range due {
			old, purged, err := t.purge(d)
			if err != nil {
				return err
			}
			if purged {
				r.Units += throughput.Write(len(old.doc))
				at, _ := ttl.ExpireAt(old.h.Ts, old.h.TTL, c.ttl)
				r.Expiries = append(r.Expiries, at)
			}
		}
		return nil
	})
	return r, err
}

// purge deletes the item an expiry entry names if it is still stored and
// expired at the transaction's instant, and returns it.
func (t *itemTx) purge(d dueEntry) (storedItem, bool, error) {
	key := keyspace.DocKey(t.c.rid, d.pk, d.id)
	old, exists, err := t.items.lookup(key)
	switch {
	case err != nil:
		return storedItem{}, false, err
	case old.doc == nil:
		// An entry without its item cannot happen by construction;
		// dropping it keeps a bad entry from waking the purger forever.
		return storedItem{}, false, t.w.Delete(d.key)
	case exists:
		return storedItem{}, false, nil // rewritten since the scan
	}
	v := itemVersion{key: key, pkEnc: d.pk, id: d.id, storedItem: old}
	return old, true, removeItem(t.w, t.c, &t.st, t.now, t.logged, v, true)
}

// fromStart is the cursor at the start of both expiry keyspaces.
var fromStart = purger.Cursor{}

// nextDeadline is the earliest expiry of c's items from cursor from on:
// one seek in each expiry keyspace.
func nextDeadline(store storage.Store, c *container, from purger.Cursor) (at int64, ok bool, err error) {
	err = store.View(context.Background(), func(r storage.Reader) error {
		if t, found, err := firstTime(r, keyspace.ExpOwn, c.rid, from.Own); err != nil {
			return err
		} else if found {
			at, ok = t, true
		}
		if c.ttl > 0 {
			t, found, err := firstTime(r, keyspace.ExpTs, c.rid, from.Ts)
			if err != nil {
				return err
			}
			if found && (!ok || t+int64(c.ttl) < at) {
				at, ok = t+int64(c.ttl), true
			}
		}
		return nil
	})
	return at, ok, err
}

// firstTime returns the time element of the first key at or after from
// (nil: the start) in an expiry keyspace of a container.
func firstTime(r storage.Reader, space byte, rid [8]byte, from []byte) (int64, bool, error) {
	prefix := keyspace.CollPrefix(space, rid)
	start := prefix
	if from != nil {
		start = from
	}
	it := r.Scan(start, keys.PrefixEnd(prefix), false)
	defer it.Close()
	if !it.Next() {
		return 0, false, it.Err()
	}
	e, err := keyspace.DecodeExpiry(it.Key(), 0)
	return e.Time, err == nil, err
}

// countDue counts a container's expired, unpurged items (up to a cap),
// for the backlog gauge when purging is throttled.
func countDue(store storage.Store, c *container, now int64) (int, error) {
	const limit = 1_000_000
	due, _, err := dueEntries(store, c, fromStart, now, limit)
	return len(due), err
}

type dueEntry struct {
	key []byte // the expiry-index entry
	pk  []byte
	id  string
}

// dueEntries returns up to limit items of c whose expiry is at or before
// now, from both expiry keyspaces, scanning from cursor from. next is
// the cursor once they are purged: the first key past each keyspace's
// due bound if it was read to the end, else just after the last entry
// returned.
func dueEntries(store storage.Store, c *container, from purger.Cursor, now int64, limit int) (due []dueEntry, next purger.Cursor, err error) {
	next = from
	err = store.View(context.Background(), func(r storage.Reader) error {
		scan := func(space byte, start []byte, through int64) ([]byte, error) {
			prefix := keyspace.CollPrefix(space, c.rid)
			if start == nil {
				start = prefix
			}
			bound := keyspace.ExpiryBound(space, c.rid, through)
			if bytes.Compare(start, bound) >= 0 {
				return start, nil
			}
			it := r.Scan(start, bound, false)
			defer it.Close()
			for len(due) < limit && it.Next() {
				key := it.Key()
				e, err := keyspace.DecodeExpiry(key, len(c.pk.Paths))
				if err != nil {
					return nil, err
				}
				due = append(due, dueEntry{key: append([]byte(nil), key...), pk: append([]byte(nil), e.PK...), id: string(e.ID)})
			}
			if err := it.Err(); err != nil {
				return nil, err
			}
			if len(due) == limit {
				// Stopped early: resume just after the last entry.
				return append(append([]byte(nil), due[len(due)-1].key...), 0), nil
			}
			return bound, nil
		}
		var err error
		if next.Own, err = scan(keyspace.ExpOwn, from.Own, now); err != nil {
			return err
		}
		if c.ttl > 0 && len(due) < limit {
			next.Ts, err = scan(keyspace.ExpTs, from.Ts, now-int64(c.ttl))
		}
		return err
	})
	return due, next, err
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
