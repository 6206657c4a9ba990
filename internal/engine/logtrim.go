package engine

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/engine/feed"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// logTrimmer removes change-log records older than their container's
// changeFeedPolicy.retentionDuration, and the whole log of a container
// whose policy was removed. It runs beside the writers: it finds what is
// due in a snapshot and deletes it with one range deletion per container,
// so a writer waits at most for that one small transaction.
//
// It sleeps on the engine clock until the oldest record it knows of
// falls out of its window, and at most a minute: retention has minute
// granularity, so a record written after a pass cannot be due sooner.
// It visits only containers that keep a log, plus those whose policy was
// just removed (their whole log goes); with none it sleeps until a
// container change wakes it, so it costs nothing when unused. The first
// pass after start visits every container once, to finish a removal a
// restart interrupted.
type logTrimmer struct {
	e        *Engine
	stopOnce sync.Once
	stopped  chan struct{}
	done     chan struct{}
	wake     chan struct{}

	mu sync.Mutex
	// dropped is guarded by mu: containers whose policy was removed and
	// whose log is still to be deleted.
	dropped map[[8]byte]bool
	// everything is guarded by mu: the next pass visits every container.
	everything bool
}

// trimInterval is the longest the trimmer sleeps: the shortest retention.
const trimInterval = time.Minute

// trimScanLimit caps the records one pass reads per container; a pass
// that stops there runs again at once.
const trimScanLimit = 100_000

func startLogTrimmer(e *Engine) *logTrimmer {
	t := &logTrimmer{e: e, stopped: make(chan struct{}), done: make(chan struct{}),
		wake: make(chan struct{}, 1), dropped: map[[8]byte]bool{}, everything: true}
	go t.loop()
	return t
}

// visitAll makes the next pass visit every container: after a catalog
// reload, when another node may have changed any policy.
func (t *logTrimmer) visitAll() {
	t.mu.Lock()
	t.everything = true
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// notice is told of a container whose changeFeedPolicy changed.
func (t *logTrimmer) notice(c *container) {
	t.mu.Lock()
	if c.retention == 0 {
		t.dropped[c.rid] = true
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// stop ends the loop; Close may call it more than once.
func (t *logTrimmer) stop() {
	t.stopOnce.Do(func() { close(t.stopped) })
	<-t.done
}

func (t *logTrimmer) loop() {
	defer close(t.done)
	for {
		var timer <-chan struct{}
		cancel := func() {}
		// The timer's target is taken before the pass, on the clock's
		// monotonic axis, so time that passes during the pass (or a
		// manual clock advanced meanwhile) is not lost.
		start := t.e.clock.Elapsed()
		if wait, ok := t.pass(); ok {
			timer, cancel = t.e.clock.At(start + wait)
		}
		select {
		case <-t.stopped:
			cancel()
			return
		case <-timer:
		case <-t.wake:
		}
		cancel()
	}
}

// pass trims the logs that need it and returns how long to sleep, or
// false when no container keeps a log.
func (t *logTrimmer) pass() (time.Duration, bool) {
	t.mu.Lock()
	dropped, everything := t.dropped, t.everything
	t.dropped, t.everything = map[[8]byte]bool{}, false
	t.mu.Unlock()
	wait, any := trimInterval, false
	for _, db := range t.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			if c.retention == 0 && !dropped[c.rid] && !everything {
				continue
			}
			any = any || c.retention > 0
			next, err := trimLog(t.e.store, c, t.e.now().Unix())
			if err != nil {
				t.e.log.Error("change feed: trim log", "container", c.label(), "err", err)
				continue
			}
			wait = min(wait, next)
		}
	}
	return max(wait, 0), any
}

// trimLog deletes the records of c's log that are older than its
// retention at now (all of them when c keeps no log) and returns how long
// until the oldest remaining one is due.
func trimLog(store storage.Store, c *container, now int64) (time.Duration, error) {
	retention := c.logRetention() * 60
	cutoff := now - retention // records with crts <= cutoff are due
	prefix := keyspace.CollPrefix(keyspace.Log, c.rid)
	var (
		first, end uint64 // the records to delete: LSNs [first, end)
		next       = trimInterval
	)
	err := store.View(context.Background(), func(r storage.Reader) error {
		it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
		defer it.Close()
		for n := 0; it.Next(); n++ {
			lsn, _, err := keys.DecodeUint64(it.Key()[len(prefix):])
			if err != nil {
				return err
			}
			if n == 0 {
				first = lsn
			}
			crts, _, _, err := feed.DecodeRecord(it.Value())
			if err != nil {
				return err
			}
			if retention > 0 && crts > cutoff {
				next = time.Duration(crts-cutoff) * time.Second
				break
			}
			end = lsn + 1
			if n == trimScanLimit {
				next = 0
				break
			}
		}
		return it.Err()
	})
	if err != nil || end == 0 {
		return next, err
	}
	return next, store.Update(context.Background(), func(w storage.Writer) error {
		st, err := readCollState(w, c.rid)
		if IsKind(err, KindNotFound) {
			return nil // the container was deleted, log and all
		}
		if err != nil {
			return err
		}
		if err := w.DeleteRange(keyspace.LogKey(c.rid, first), keyspace.LogKey(c.rid, end)); err != nil {
			return err
		}
		if retention == 0 {
			end = st.lsn + 1 // no change before now is in the log
		}
		// Continuations before end point at changes no longer kept.
		return w.Set(keyspace.LogTrimKey(c.rid), binary.BigEndian.AppendUint64(nil, end))
	})
}
