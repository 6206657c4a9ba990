package engine

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

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
// granularity, so a record written after a pass (or a container whose
// policy appears after it) cannot be due sooner.
type logTrimmer struct {
	e        *Engine
	stopOnce sync.Once
	stopped  chan struct{}
	done     chan struct{}
}

// trimInterval is the longest the trimmer sleeps: the shortest retention.
const trimInterval = time.Minute

// trimScanLimit caps the records one pass reads per container; a pass
// that stops there runs again at once.
const trimScanLimit = 100_000

func startLogTrimmer(e *Engine) *logTrimmer {
	t := &logTrimmer{e: e, stopped: make(chan struct{}), done: make(chan struct{})}
	go t.loop()
	return t
}

// stop ends the loop; Close may call it more than once.
func (t *logTrimmer) stop() {
	t.stopOnce.Do(func() { close(t.stopped) })
	<-t.done
}

func (t *logTrimmer) loop() {
	defer close(t.done)
	for {
		timer, cancel := t.e.clock.After(t.pass())
		select {
		case <-t.stopped:
			cancel()
			return
		case <-timer:
		}
		cancel()
	}
}

// pass trims every container's log and returns how long to sleep.
func (t *logTrimmer) pass() time.Duration {
	wait := trimInterval
	for _, db := range t.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			next, err := trimLog(t.e.store, c, t.e.nowSec())
			if err != nil {
				t.e.log.Error("change feed: trim log", "container", c.label(), "err", err)
				continue
			}
			wait = min(wait, next)
		}
	}
	return max(wait, 0)
}

// trimLog deletes the records of c's log that are older than its
// retention at now (all of them when c keeps no log) and returns how long
// until the oldest remaining one is due.
func trimLog(store storage.Store, c *container, now int64) (time.Duration, error) {
	retention := c.logRetention() * 60
	cutoff := now - retention // records with crts <= cutoff are due
	prefix := collPrefix(spaceLog, c.rid)
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
			crts, _, _, err := decodeLogRecord(it.Value())
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
		if err := w.DeleteRange(logKey(c.rid, first), logKey(c.rid, end)); err != nil {
			return err
		}
		if retention == 0 {
			end = st.lsn + 1 // no change before now is in the log
		}
		// Continuations before end point at changes no longer kept.
		return w.Set(logTrimKey(c.rid), binary.BigEndian.AppendUint64(nil, end))
	})
}
