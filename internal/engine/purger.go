package engine

import (
	"bytes"
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
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
	// throttled is guarded by mu: containers with due items waiting for
	// spare throughput, and when (on the real clock) to try again. They
	// wait on real time because throughput is real time, even when the
	// engine's clock is manual.
	throttled map[[8]byte]throttledPurge
	// lastLag is guarded by mu: per container, the largest purge lag of
	// its latest purge pass, for the TTL status.
	lastLag map[[8]byte]time.Duration
	// notes is guarded by mu: how many times a write brought a deadline
	// forward. plan compares it before and after reading storage, so a
	// deadline a write noted meanwhile is never overwritten by a later
	// one read before that write.
	notes uint64
	// cursors is guarded by mu: per container, where its expiry
	// keyspaces still hold entries, so scans start past the tombstones
	// of what was purged instead of walking them again.
	cursors map[[8]byte]cursor

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
		e:         e,
		dirty:     map[[8]byte]bool{},
		throttled: map[[8]byte]throttledPurge{},
		cursors:   map[[8]byte]cursor{},
		lastLag:   map[[8]byte]time.Duration{},
		wake:      make(chan struct{}, 1),
		stopped:   make(chan struct{}),
		done:      make(chan struct{}),
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
func (p *purger) noteWrite(c *container, h document.ItemHeader) {
	at, ok := ttl.ExpireAt(h.Ts, h.TTL, c.ttl)
	if !ok {
		return
	}
	p.mu.Lock()
	p.notes++
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
	// A new defaultTtl moves the due bound of the _ts keyspace, possibly
	// backwards: scan it from the start again.
	delete(p.cursors, c.rid)
	p.mu.Unlock()
	p.signal()
}

// lastPurgeLag is the largest lag of c's latest purge pass, and false if
// this node has not purged c since it started.
func (p *purger) lastPurgeLag(rid [8]byte) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.lastLag[rid]
	return d, ok
}

// replanAll re-reads every container's deadline: after a catalog reload,
// and periodically on a shared store, where other nodes' writes do not
// wake this purger.
func (p *purger) replanAll() {
	p.mu.Lock()
	for _, db := range p.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			p.dirty[c.rid] = true
		}
	}
	p.mu.Unlock()
	p.signal()
}

// forget drops a deleted container.
func (p *purger) forget(rid [8]byte) {
	p.mu.Lock()
	p.deadlines.remove(rid)
	delete(p.dirty, rid)
	delete(p.throttled, rid)
	delete(p.cursors, rid)
	delete(p.lastLag, rid)
	p.mu.Unlock()
}

type throttledPurge struct {
	at    int64         // the container's deadline
	retry time.Duration // real-clock reading when to try again
}

func (p *purger) loop() {
	defer close(p.done)
	for {
		p.planDirty()
		p.mu.Lock()
		next, ok := p.deadlines.peek()
		retry, throttled := p.earliestRetryLocked()
		p.mu.Unlock()
		var timer, retryTimer <-chan struct{}
		cancel, cancelRetry := func() {}, func() {}
		if ok {
			// Wait on the purge clock, which a forward wall-clock jump
			// does not move (see timeGuard), with an absolute target so
			// that time passing meanwhile is not lost.
			now, el := p.e.guard.purgeNowAt()
			timer, cancel = p.e.clock.At(el + time.Unix(next.at, 0).Sub(now))
		}
		if throttled {
			retryTimer, cancelRetry = p.e.real.At(retry)
		}
		select {
		case <-p.stopped:
			cancel()
			cancelRetry()
			return
		case <-p.wake:
		case <-timer:
		case <-retryTimer:
		}
		cancel()
		cancelRetry()
		p.e.metrics.TTLPurgerWakeups.Inc()
		p.resumeThrottled()
		p.purgeDue()
	}
}

// earliestRetryLocked returns when the first throttled container may try
// again. REQUIRES: p.mu held.
func (p *purger) earliestRetryLocked() (time.Duration, bool) {
	var first time.Duration
	found := false
	for _, t := range p.throttled {
		if !found || t.retry < first {
			first, found = t.retry, true
		}
	}
	return first, found
}

// resumeThrottled puts throttled containers whose wait is over back in
// the deadline heap.
func (p *purger) resumeThrottled() {
	now := p.e.real.Elapsed()
	p.mu.Lock()
	defer p.mu.Unlock()
	for rid, t := range p.throttled {
		if t.retry <= now {
			p.deadlines.lower(rid, t.at)
			delete(p.throttled, rid)
		}
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
	p.mu.Lock()
	notes := p.notes
	p.mu.Unlock()
	at, ok, err := nextDeadline(p.e.store, c, p.cursor(rid))
	if err != nil {
		p.e.log.Error("ttl: read next deadline", "container", c.id, "err", err)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.notes != notes:
		// A write may have noted an earlier deadline than storage showed
		// this read: keep whichever is earlier.
		if ok {
			p.deadlines.lower(rid, at)
		}
	case ok:
		p.deadlines.set(rid, at)
	default:
		p.deadlines.remove(rid)
	}
}

// cursor marks where a container's expiry keyspaces still hold entries:
// every entry before the key own (in the own-ttl keyspace) or ts (in the
// _ts keyspace) is purged. A nil key means the start of its keyspace.
// Keys, not times: a storm of items expiring in the same second shares
// one time, and resuming at that time would walk every tombstone the
// storm left so far, once per batch.
type cursor struct{ own, ts []byte }

var fromStart = cursor{}

func (p *purger) cursor(rid [8]byte) cursor {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.cursors[rid]; ok {
		return cur
	}
	return fromStart
}

func nextDeadline(store storage.Store, c *container, from cursor) (at int64, ok bool, err error) {
	err = store.View(context.Background(), func(r storage.Reader) error {
		if t, found, err := firstTime(r, keyspace.ExpOwn, c.rid, from.own); err != nil {
			return err
		} else if found {
			at, ok = t, true
		}
		if c.ttl > 0 {
			t, found, err := firstTime(r, keyspace.ExpTs, c.rid, from.ts)
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

// purgeDue purges every container whose deadline has come.
func (p *purger) purgeDue() {
	// Observe the wall clock for the visibility high-water mark first, so
	// no write after this pass gets a _ts (and so an expiry) behind the
	// instant purged up to; the cursors rely on that.
	p.e.guard.now()
	now := p.e.guard.purgeNow().Unix()
	var due []deadline
	p.mu.Lock()
	for {
		next, ok := p.deadlines.peek()
		if !ok || next.at > now {
			break
		}
		p.deadlines.remove(next.rid)
		due = append(due, next)
	}
	p.mu.Unlock()
	for _, d := range due {
		c := p.e.containerByRID(d.rid)
		if c == nil || !c.ttl.On() {
			continue
		}
		retry, err := p.purgeContainer(c, now, d.at)
		if err != nil {
			p.e.log.Error("ttl: purge", "container", c.label(), "err", err)
			retry = time.Second // try again, but never spin on a failing store
		}
		if retry > 0 {
			p.mu.Lock()
			p.throttled[c.rid] = throttledPurge{at: d.at, retry: p.e.real.Elapsed() + retry}
			p.mu.Unlock()
			continue
		}
		p.plan(c.rid)
	}
}

// purgeItemEstimate is what purging one small item costs, for sizing a
// batch to the throughput available before the items are read.
var purgeItemEstimate = chargeWrite(1024)

// purgeContainer deletes the items of c that have expired by now, in
// batches, each one re-checked against its stored version and the
// container's current settings inside the deleting transaction. When the
// container's offer has no spare throughput it stops and returns how
// long to wait; since is when its earliest item expired.
func (p *purger) purgeContainer(c *container, now, since int64) (retry time.Duration, err error) {
	label := c.label()
	m := p.e.metrics
	if ok, wait, err := p.e.holdLease(c); err != nil || !ok {
		return wait, err // another node purges it; look again when its lease ends
	}
	b := p.e.bucketFor(c)
	for {
		limit := purgeBatch
		if b != nil {
			allow, wait := b.purgeAllowance(purgeItemEstimate, p.e.real.Elapsed())
			if wait > 0 {
				m.TTLPurgeThrottled.WithLabelValues(label).Add(wait.Seconds())
				m.TTLOldestUnpurged.WithLabelValues(label).Set(float64(now - since))
				if n, err := countDue(p.e.store, c, now); err == nil {
					m.TTLBacklog.WithLabelValues(label).Set(float64(n))
				}
				return wait, nil
			}
			limit = max(1, min(purgeBatch, int(allow/purgeItemEstimate)))
		}
		due, next, err := dueEntries(p.e.store, c, p.cursor(c.rid), now, limit)
		if err != nil {
			return 0, err
		}
		if len(due) == 0 {
			m.TTLBacklog.WithLabelValues(label).Set(0)
			m.TTLOldestUnpurged.WithLabelValues(label).Set(0)
			return 0, nil
		}
		var (
			ru       float64
			expiries []int64
		)
		// The transaction reads at the purge instant, which is never ahead
		// of any request's: what its re-check finds expired, every request
		// finds expired.
		err = p.e.updateItemsAt(context.Background(), c, time.Unix(now, 0), func(t *itemTx) error {
			ru, expiries = 0, expiries[:0] // fn may run again after a conflict
			for _, d := range due {
				old, purged, err := t.purge(d)
				if err != nil {
					return err
				}
				if purged {
					ru += chargeWrite(len(old.doc))
					at, _ := ttl.ExpireAt(old.h.Ts, old.h.TTL, c.ttl)
					expiries = append(expiries, at)
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		p.mu.Lock()
		p.cursors[c.rid] = next
		p.mu.Unlock()
		if b != nil {
			b.chargePurge(ru, p.e.real.Elapsed())
		}
		purgedAt := p.e.clock.Now()
		lag := m.TTLPurgeLag.WithLabelValues(label)
		var worst time.Duration
		for _, at := range expiries {
			d := purgedAt.Sub(time.Unix(at, 0))
			worst = max(worst, d)
			lag.Observe(d.Seconds())
			if p.e.onPurge != nil {
				p.e.onPurge(d)
			}
		}
		if len(expiries) > 0 {
			p.mu.Lock()
			p.lastLag[c.rid] = worst
			p.mu.Unlock()
		}
		m.TTLPurged.WithLabelValues(label).Add(float64(len(expiries)))
		m.TTLPurgeUnits.WithLabelValues(label).Add(ru)
		if len(due) < limit {
			m.TTLBacklog.WithLabelValues(label).Set(0)
			m.TTLOldestUnpurged.WithLabelValues(label).Set(0)
			return 0, nil
		}
	}
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
func dueEntries(store storage.Store, c *container, from cursor, now int64, limit int) (due []dueEntry, next cursor, err error) {
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
		if next.own, err = scan(keyspace.ExpOwn, from.own, now); err != nil {
			return err
		}
		if c.ttl > 0 && len(due) < limit {
			next.ts, err = scan(keyspace.ExpTs, from.ts, now-int64(c.ttl))
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
