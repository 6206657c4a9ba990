package engine

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl"
)

// purger deletes expired items in the background. Visibility never
// depends on it: an expired item is invisible from the first request at
// or after its expiry, purged or not. Purging is garbage collection.
//
// It keeps a min-heap of each container's next deadline (the earliest
// instant any of its items expires), built from the two expiry keyspaces
// at start and kept current by writes and container changes, and sleeps
// on the clock until the earliest one: no polling and no scans while
// nothing is due.
type purger struct {
	e *Engine

	mu sync.Mutex
	// deadlines is guarded by mu. INVARIANT: holds at most one entry per
	// container; an entry's at is no later than the container's earliest
	// real deadline (it may be earlier: a purge pass then finds nothing
	// and re-plans).
	deadlines deadlineHeap
	// dirty is guarded by mu: containers whose deadline must be re-read
	// from storage (TTL settings changed, or start-up).
	dirty map[[8]byte]bool

	wake    chan struct{}
	stopped chan struct{}
	done    chan struct{}
	running bool
}

// purgeBatch caps how many items one transaction purges, so a storm of
// expiries never holds the write path for long.
const purgeBatch = 256

func newPurger(e *Engine) *purger {
	return &purger{
		e:       e,
		dirty:   map[[8]byte]bool{},
		wake:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
	}
}

func (p *purger) start(ctx context.Context) error {
	p.mu.Lock()
	for _, db := range p.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			p.dirty[c.rid] = true
		}
	}
	p.running = true
	p.mu.Unlock()
	go p.loop()
	return nil
}

func (p *purger) stop() {
	p.mu.Lock()
	running := p.running
	p.running = false
	p.mu.Unlock()
	if running {
		close(p.stopped)
		<-p.done
	}
}

func (p *purger) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// noteWrite brings the container's deadline forward if the item just
// written expires before it.
func (p *purger) noteWrite(c *container, h itemHeader) {
	at, ok := ttl.ExpireAt(h.ts, h.ttl, c.ttl)
	if !ok {
		return
	}
	p.mu.Lock()
	earlier := p.deadlines.lower(c.rid, at)
	p.mu.Unlock()
	if earlier {
		p.signal()
	}
}

// replan re-reads a container's deadline after its TTL settings changed.
func (p *purger) replan(c *container) {
	p.mu.Lock()
	p.dirty[c.rid] = true
	p.mu.Unlock()
	p.signal()
}

// forget drops a deleted container.
func (p *purger) forget(rid [8]byte) {
	p.mu.Lock()
	p.deadlines.remove(rid)
	delete(p.dirty, rid)
	p.mu.Unlock()
}

func (p *purger) loop() {
	defer close(p.done)
	for {
		p.planDirty()
		p.mu.Lock()
		next, ok := p.deadlines.peek()
		p.mu.Unlock()
		var timer <-chan struct{}
		cancel := func() {}
		if ok {
			wait := time.Unix(next.at, 0).Sub(p.e.clock.Now())
			timer, cancel = p.e.clock.After(wait)
		}
		select {
		case <-p.stopped:
			cancel()
			return
		case <-p.wake:
		case <-timer:
		}
		cancel()
		p.purgeDue()
	}
}

// planDirty reads the next deadline of every dirty container.
func (p *purger) planDirty() {
	p.mu.Lock()
	dirty := p.dirty
	p.dirty = map[[8]byte]bool{}
	p.mu.Unlock()
	for rid := range dirty {
		p.plan(rid)
	}
}

// plan sets a container's deadline from the heads of its expiry
// keyspaces: two seeks, only when a container changes or a purge pass
// ends.
func (p *purger) plan(rid [8]byte) {
	c := p.e.containerByRID(rid)
	if c == nil || !c.ttl.On() {
		p.forget(rid)
		return
	}
	at, ok, err := nextDeadline(p.e.store, c)
	if err != nil {
		p.e.log.Error("ttl: read next deadline", "container", c.id, "err", err)
		return
	}
	p.mu.Lock()
	if ok {
		p.deadlines.set(rid, at)
	} else {
		p.deadlines.remove(rid)
	}
	p.mu.Unlock()
}

func nextDeadline(store storage.Store, c *container) (at int64, ok bool, err error) {
	err = store.View(context.Background(), func(r storage.Reader) error {
		if t, found, err := firstTime(r, spaceExpOwn, c.rid); err != nil {
			return err
		} else if found {
			at, ok = t, true
		}
		if c.ttl > 0 {
			t, found, err := firstTime(r, spaceExpTs, c.rid)
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

// firstTime returns the time element of the first key in an expiry
// keyspace of a container.
func firstTime(r storage.Reader, space byte, rid [8]byte) (int64, bool, error) {
	prefix := collPrefix(space, rid)
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	if !it.Next() {
		return 0, false, it.Err()
	}
	t, _, err := keys.DecodeInt64(it.Key()[len(prefix):])
	return t, err == nil, err
}

// purgeDue purges every container whose deadline has come.
func (p *purger) purgeDue() {
	now := p.e.nowSec()
	for {
		p.mu.Lock()
		next, ok := p.deadlines.peek()
		if !ok || next.at > now {
			p.mu.Unlock()
			return
		}
		p.deadlines.remove(next.rid)
		p.mu.Unlock()
		c := p.e.containerByRID(next.rid)
		if c == nil || !c.ttl.On() {
			continue
		}
		if err := p.purgeContainer(c, now); err != nil {
			p.e.log.Error("ttl: purge", "container", c.id, "err", err)
		}
		p.plan(c.rid)
	}
}

// purgeContainer deletes the items of c that have expired by now, in
// batches, each one re-checked against its stored version and the
// container's current settings inside the deleting transaction.
func (p *purger) purgeContainer(c *container, now int64) error {
	for {
		due, err := dueEntries(p.e.store, c, now, purgeBatch)
		if err != nil || len(due) == 0 {
			return err
		}
		err = p.e.store.Update(context.Background(), func(w storage.Writer) error {
			st, err := readCollState(w, c.rid)
			if err != nil {
				return err
			}
			purged := 0
			for _, d := range due {
				key := docKey(c.rid, d.pk, d.id)
				old, h, exists, err := getItem(w, c, key, now)
				if err != nil {
					return err
				}
				if old == nil {
					// An entry without its item cannot happen by
					// construction; dropping it keeps a bad entry from
					// waking the purger forever.
					if err := w.Delete(d.key); err != nil {
						return err
					}
					continue
				}
				if exists {
					continue // rewritten since the scan
				}
				if err := removeItem(w, c, key, h, d.pk, d.id); err != nil {
					return err
				}
				purged++
			}
			if purged == 0 {
				return nil
			}
			st.lsn += uint64(purged)
			return w.Set(collMetaKey(c.rid), st.encode())
		})
		if err != nil || len(due) < purgeBatch {
			return err
		}
	}
}

type dueEntry struct {
	key []byte // the expiry-index entry
	pk  []byte
	id  string
}

// dueEntries returns up to limit items of c whose expiry is at or before
// now, from both expiry keyspaces.
func dueEntries(store storage.Store, c *container, now int64, limit int) ([]dueEntry, error) {
	var out []dueEntry
	err := store.View(context.Background(), func(r storage.Reader) error {
		scan := func(space byte, through int64) error {
			prefix := collPrefix(space, c.rid)
			it := r.Scan(prefix, keys.AppendInt64(append([]byte(nil), prefix...), through+1), false)
			defer it.Close()
			for len(out) < limit && it.Next() {
				rest := it.Key()[len(prefix)+8:]
				_, afterPK, err := decodePK(rest, len(c.pk.paths))
				if err != nil {
					return err
				}
				id, _, err := keys.DecodeBytes(afterPK)
				if err != nil {
					return err
				}
				pk := append([]byte(nil), rest[:len(rest)-len(afterPK)]...)
				out = append(out, dueEntry{key: append([]byte(nil), it.Key()...), pk: pk, id: string(id)})
			}
			return it.Err()
		}
		if err := scan(spaceExpOwn, now); err != nil {
			return err
		}
		if c.ttl > 0 && len(out) < limit {
			return scan(spaceExpTs, now-int64(c.ttl))
		}
		return nil
	})
	return out, err
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

// deadlineHeap is a min-heap of container deadlines with an index, so a
// container's entry can be lowered or removed in O(log n).
type deadlineHeap struct {
	items []deadline
	index map[[8]byte]int
}

type deadline struct {
	rid [8]byte
	at  int64
}

func (h *deadlineHeap) Len() int           { return len(h.items) }
func (h *deadlineHeap) Less(i, j int) bool { return h.items[i].at < h.items[j].at }
func (h *deadlineHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].rid] = i
	h.index[h.items[j].rid] = j
}
func (h *deadlineHeap) Push(x any) {
	d := x.(deadline)
	h.index[d.rid] = len(h.items)
	h.items = append(h.items, d)
}
func (h *deadlineHeap) Pop() any {
	d := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.index, d.rid)
	return d
}

func (h *deadlineHeap) peek() (deadline, bool) {
	if len(h.items) == 0 {
		return deadline{}, false
	}
	return h.items[0], true
}

// set puts rid's deadline at at.
func (h *deadlineHeap) set(rid [8]byte, at int64) {
	if h.index == nil {
		h.index = map[[8]byte]int{}
	}
	if i, ok := h.index[rid]; ok {
		h.items[i].at = at
		heap.Fix(h, i)
		return
	}
	heap.Push(h, deadline{rid: rid, at: at})
}

// lower moves rid's deadline to at if that is earlier (or new) and
// reports whether the heap's earliest deadline changed.
func (h *deadlineHeap) lower(rid [8]byte, at int64) bool {
	if h.index == nil {
		h.index = map[[8]byte]int{}
	}
	if i, ok := h.index[rid]; ok && h.items[i].at <= at {
		return false
	}
	before, had := h.peek()
	h.set(rid, at)
	return !had || at < before.at
}

func (h *deadlineHeap) remove(rid [8]byte) {
	if i, ok := h.index[rid]; ok {
		heap.Remove(h, i)
	}
}
