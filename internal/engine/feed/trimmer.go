package feed

import (
	"context"
	"encoding/binary"
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Trimmer removes change-log records older than their container's
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
type Trimmer struct {
	cfg      TrimmerConfig
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

// TrimmerConfig is what the trimmer needs of the engine.
type TrimmerConfig struct {
	Store storage.Store
	// Clock times the trimmer's sleeps.
	Clock clock.Clock
	Log   *slog.Logger
	// Now is the engine's current instant in epoch seconds.
	Now func() int64
	// Containers yields every container of the catalog.
	Containers iter.Seq[Container]
	// LastLSN reads the last LSN physical partition p of container rid
	// has written; exists is false once the container was deleted.
	LastLSN func(r storage.Reader, rid [8]byte, p int) (lsn uint64, exists bool, err error)
}

// trimInterval is the longest the trimmer sleeps: the shortest retention.
const trimInterval = time.Minute

// trimScanLimit caps the records one pass reads per container; a pass
// that stops there runs again at once.
const trimScanLimit = 100_000

// StartTrimmer starts a trimmer; Stop ends it.
func StartTrimmer(cfg TrimmerConfig) *Trimmer {
	t := newTrimmer(cfg)
	go t.loop()
	return t
}

func newTrimmer(cfg TrimmerConfig) *Trimmer {
	return &Trimmer{cfg: cfg, stopped: make(chan struct{}), done: make(chan struct{}),
		wake: make(chan struct{}, 1), dropped: map[[8]byte]bool{}, everything: true}
}

// VisitAll makes the next pass visit every container: after a catalog
// reload, when another node may have changed any policy.
func (t *Trimmer) VisitAll() {
	t.mu.Lock()
	t.everything = true
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Notice is told of a container whose changeFeedPolicy changed.
func (t *Trimmer) Notice(c Container) {
	t.mu.Lock()
	if c.Retention == 0 {
		t.dropped[c.RID] = true
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Stop ends the loop; the engine's Close may call it more than once.
func (t *Trimmer) Stop() {
	t.stopOnce.Do(func() { close(t.stopped) })
	<-t.done
}

func (t *Trimmer) loop() {
	defer close(t.done)
	for {
		var timer <-chan struct{}
		cancel := func() {}
		// The timer's target is taken before the pass, on the clock's
		// monotonic axis, so time that passes during the pass (or a
		// manual clock advanced meanwhile) is not lost.
		start := t.cfg.Clock.Elapsed()
		if wait, ok := t.pass(); ok {
			timer, cancel = t.cfg.Clock.At(start + wait)
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
func (t *Trimmer) pass() (time.Duration, bool) {
	t.mu.Lock()
	dropped, everything := t.dropped, t.everything
	t.dropped, t.everything = map[[8]byte]bool{}, false
	t.mu.Unlock()
	wait, any := trimInterval, false
	for c := range t.cfg.Containers {
		if c.Retention == 0 && !dropped[c.RID] && !everything {
			continue
		}
		any = any || c.Retention > 0
		parts := c.Partitions
		if parts == nil {
			parts = []int{0}
		}
		for _, p := range parts {
			next, err := t.trim(c, p, t.cfg.Now())
			if err != nil {
				t.cfg.Log.Error("change feed: trim log", "container", c.Name, "partition", p, "err", err)
				continue
			}
			wait = min(wait, next)
		}
	}
	return max(wait, 0), any
}

// trim deletes the records of the log of c's partition p that are older
// than its retention at now (all of them when c keeps no log) and
// returns how long until the oldest remaining one is due.
func (t *Trimmer) trim(c Container, p int, now int64) (time.Duration, error) {
	retention := c.Retention * 60
	cutoff := now - retention // records with crts <= cutoff are due
	prefix := keyspace.CollPrefix(keyspace.Log, c.RID)
	from, to := keyspace.LogKey(c.RID, keyspace.PartitionLSN(p, 0)), keyspace.LogKey(c.RID, keyspace.PartitionLSN(p+1, 0))
	var (
		first, end uint64 // the records to delete: LSNs [first, end)
		next       = trimInterval
	)
	err := t.cfg.Store.View(context.Background(), func(r storage.Reader) error {
		it := r.Scan(from, to, false)
		defer it.Close()
		for n := 0; it.Next(); n++ {
			lsn, _, err := keys.DecodeUint64(it.Key()[len(prefix):])
			if err != nil {
				return err
			}
			if n == 0 {
				first = lsn
			}
			crts, _, _, err := decodeRecord(it.Value())
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
	// The log is the partition's data: trim it in the partition's lock
	// domain (engine.updateContainer).
	return next, t.cfg.Store.UpdateLocked(context.Background(), [][]byte{keyspace.PartitionStateKey(c.RID, p)}, func(w storage.Writer) error {
		last, exists, err := t.cfg.LastLSN(w, c.RID, p)
		if err != nil || !exists {
			return err // a deleted container went with its log
		}
		if err := w.DeleteRange(keyspace.LogKey(c.RID, first), keyspace.LogKey(c.RID, end)); err != nil {
			return err
		}
		if retention == 0 {
			end = last + 1 // no change before now is in the log
		}
		// Continuations before end point at changes no longer kept.
		return w.Set(keyspace.LogTrimKey(c.RID, p), binary.BigEndian.AppendUint64(nil, end))
	})
}
