package bench

import (
	"fmt"
	"os"
	"sync"
)

// syncLog is the durable stub's write-ahead log: an append-only file
// with group commit, the least a server must do to acknowledge a write
// durably.
type syncLog struct {
	f *os.File

	mu   sync.Mutex
	cond *sync.Cond // signalled when a sync finishes
	// buf holds the records of generation gen, not yet written. A sync
	// takes buf, closes its generation (gen++) and, when done, sets
	// synced to the next open generation. INVARIANT: synced <= gen.
	// All guarded by mu, as are syncing (a sync is under way) and err
	// (a failed sync, after which every commit fails).
	buf     []byte
	gen     uint64
	synced  uint64
	syncing bool
	err     error
}

func newSyncLog(dir string) (*syncLog, error) {
	f, err := os.CreateTemp(dir, "ebb-stub-wal-*")
	if err != nil {
		return nil, err
	}
	l := &syncLog{f: f}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// commit appends rec and returns once it is durable. The caller that
// finds no sync under way does one for everything buffered; the others
// wait for it, or for the next.
func (l *syncLog) commit(rec []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, rec...)
	mine := l.gen
	for l.synced <= mine {
		if l.err != nil {
			return l.err
		}
		if l.syncing {
			l.cond.Wait()
			continue
		}
		l.syncing = true
		buf := l.buf
		l.buf = nil
		l.gen++
		l.mu.Unlock()
		_, err := l.f.Write(buf)
		if err == nil {
			err = syncData(l.f)
		}
		l.mu.Lock()
		l.syncing = false
		l.cond.Broadcast()
		if err != nil {
			l.err = fmt.Errorf("stub log: %w", err)
			return l.err
		}
		l.synced = l.gen
	}
	return nil
}

func (l *syncLog) close() error {
	err := l.f.Close()
	if rerr := os.Remove(l.f.Name()); err == nil {
		err = rerr
	}
	return err
}
