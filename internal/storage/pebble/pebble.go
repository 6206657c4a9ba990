// Package pebble is Ebb's embedded, durable store on Pebble.
//
// # Transactions
//
// Pebble has batches, not transactions, so Update gets its isolation from a
// single writer lock: fn runs on an indexed batch (it reads its own writes
// and the latest committed state) while the lock is held, the batch is
// applied to the memtable in that same critical section, and the lock is
// released before waiting for the WAL fsync. Every update is therefore
// serializable, commit order equals lock order, and concurrent writers
// still share one fsync (group commit). The lock is held for microseconds:
// fn does a handful of point reads and writes.
//
// A mutation is visible to readers once applied, a moment before its fsync
// finishes (Pebble behaves the same way with Apply); Update returns only
// after the fsync, so nothing is acknowledged before it is durable.
//
// # Closing
//
// Pebble panics when used after Close and refuses to close while
// iterators are open. So every View and Update registers itself, Close
// waits for the ones in flight and makes later calls fail with
// storage.ErrClosed, and iterators that fn leaves open are closed when it
// returns.
//
// # Row cache
//
// Store.Get and Store.Lend, the point reads of the live store, are
// served from a cache of recently read values that every Update keeps
// exact (rowcache.go). Reads in a View or an Update go to Pebble.
//
// # Memory
//
// Built without cgo, Pebble's memtables and block cache are Go heap, and
// the store keeps the garbage collector from counting them as room for
// garbage (heap.go).
package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ebbdb/ebb/internal/storage"
)

// Store is a storage.Store on one Pebble directory (or in memory).
type Store struct {
	db *pebble.DB
	// inMemory is set for OpenMemory: no WAL, so nothing to sync.
	inMemory bool
	// dir is the store's directory, empty in memory.
	dir string
	// writeMu serializes Update callbacks. See the package doc.
	writeMu sync.Mutex
	// rows caches values of point reads of the live store (rowcache.go);
	// nil when off.
	rows *rowCache

	// mu guards closed and inflight. Pebble panics when it is used after
	// Close, so every call registers itself here first and Close waits
	// for the calls in flight before it closes the DB.
	mu sync.Mutex
	// INVARIANT: once closed is set, inflight only decreases.
	closed   bool
	inflight int
	drained  *sync.Cond // signalled when inflight drops to 0 after close

	// written counts the bytes of the batches applied, which fill the
	// memtables; the heap tuner reads it (heap.go).
	written atomic.Uint64
	// releaseMark is written when the heap tuner last returned free
	// pages to the system; guarded by heapTuner.mu.
	releaseMark uint64
}

var _ storage.Store = (*Store)(nil)

// Options tune a store; the zero value is the default.
type Options struct {
	// RowCacheSize is the most bytes of keys and values the row cache
	// keeps (rowcache.go): 0 means DefaultRowCacheSize, a negative size
	// turns the cache off.
	RowCacheSize int
}

// DefaultRowCacheSize is the row cache's size unless told otherwise:
// enough for the items a busy application reads again and again, small
// next to Pebble's own block cache.
const DefaultRowCacheSize = 8 << 20

// Open opens (or creates) the store in dir.
func Open(dir string) (*Store, error) {
	return open(dir, nil, Options{})
}

// OpenWith is Open with options.
func OpenWith(dir string, o Options) (*Store, error) {
	return open(dir, nil, o)
}

// OpenMemory opens a store that lives in memory only.
func OpenMemory() (*Store, error) {
	return open("", vfs.NewMem(), Options{})
}

// OpenMemoryWith is OpenMemory with options.
func OpenMemoryWith(o Options) (*Store, error) {
	return open("", vfs.NewMem(), o)
}

// memTableSize is Pebble's MemTableSize. Items and index entries are
// small; a larger memtable keeps write-heavy bursts out of L0 on a small
// machine.
const memTableSize = 32 << 20

// pidFile, in a store's directory, holds the process id of the Ebb that
// has it open, so that a second one can say who holds it.
const pidFile = "ebb.pid"

func open(dir string, fs vfs.FS, o Options) (*Store, error) {
	opts := &pebble.Options{
		MemTableSize: memTableSize,
		// Point reads dominate (items, container state, index fetches),
		// and every write first looks its item up. The cache must hold
		// the filter and index blocks of the whole store, or each lookup
		// reads them from disk: a million 1 KB items need about 100 MB
		// (importing them ran at 15,000 items/s with 64 MB, 27,000 with
		// 128 MB). It fills only as data is read, so a small store stays
		// small in memory.
		CacheSize: 128 << 20,
		Logger:    quietLogger{},
	}
	// Bloom filters answer most lookups of keys that do not exist (a
	// create checking for a conflict, a purge re-check) without reading
	// data blocks. Set on L0; lower levels inherit it.
	opts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	if fs != nil {
		opts.FS = fs
		// In memory nothing survives the process, so a WAL would only
		// keep a second copy of every write.
		opts.DisableWAL = true
	}
	db, err := pebble.Open(dir, opts)
	if err != nil && fs == nil && lockHeld(err) {
		holder := "another process"
		if pid, rerr := os.ReadFile(filepath.Join(dir, pidFile)); rerr == nil {
			holder = "another Ebb (process " + strings.TrimSpace(string(pid)) + ")"
		}
		return nil, fmt.Errorf("open store %s: the directory is in use by %s; stop it or choose another --data-dir: %w", dir, holder, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	if fs == nil {
		// Checkpoints of backups that were running when the last process
		// stopped; none can run now, with the directory locked.
		_ = os.RemoveAll(filepath.Join(dir, backupDir))
		// Only read when the lock is refused, so it names the process that
		// holds it; a stale one does no harm.
		_ = os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	}
	if o.RowCacheSize == 0 {
		o.RowCacheSize = DefaultRowCacheSize
	}
	s := &Store{db: db, inMemory: fs != nil, dir: dir, rows: newRowCache(o.RowCacheSize)}
	s.drained = sync.NewCond(&s.mu)
	tuneHeap(s)
	return s, nil
}

// enter registers a call in flight; it fails once the store is closed.
// Every successful enter is paired with one exit.
func (s *Store) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return storage.ErrClosed
	}
	s.inflight++
	return nil
}

func (s *Store) exit() {
	s.mu.Lock()
	s.inflight--
	if s.closed && s.inflight == 0 {
		s.drained.Broadcast()
	}
	s.mu.Unlock()
}

// Get implements storage.Store. A read of the live DB is consistent on
// its own, so no snapshot is taken.
func (s *Store) Get(ctx context.Context, key []byte) ([]byte, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.exit()
	if s.rows == nil {
		r := reader{r: s.db}
		return r.Get(key)
	}
	var out []byte
	err := s.lendCached(key, func(v []byte) error {
		out = bytes.Clone(v)
		return nil
	})
	return out, err
}

// Lend implements storage.Store: fn reads the memtable's or the block
// cache's memory, pinned until it returns.
func (s *Store) Lend(ctx context.Context, key []byte, fn func(value []byte) error) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	if s.rows == nil {
		r := reader{r: s.db}
		return r.Lend(key, fn)
	}
	return s.lendCached(key, fn)
}

// lendCached lends key's value from the row cache, or reads it from
// Pebble and adds it.
func (s *Store) lendCached(key []byte, fn func(value []byte) error) error {
	v, hit, ticket := s.rows.lookup(key)
	if hit {
		return fn(v)
	}
	r := reader{r: s.db}
	return r.Lend(key, func(v []byte) error {
		s.rows.add(ticket, key, v)
		return fn(v)
	})
}

// View implements storage.Store.
func (s *Store) View(ctx context.Context, fn func(storage.Reader) error) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	snap := s.db.NewSnapshot()
	defer snap.Close()
	r := &reader{r: snap}
	defer r.closeIterators()
	return fn(r)
}

// UpdateLocked implements storage.Store as Update: updates take turns
// under writeMu already, whatever their domain.
func (s *Store) UpdateLocked(ctx context.Context, _ [][]byte, fn func(storage.Writer) error) error {
	return s.Update(ctx, fn)
}

// Update implements storage.Store.
func (s *Store) Update(ctx context.Context, fn func(storage.Writer) error) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	b := s.db.NewIndexedBatch()
	defer b.Close()
	applied, err := s.applyLocked(b, fn)
	if err != nil || !applied || s.inMemory {
		return err
	}
	// The lock is released: concurrent updates queue their batches behind
	// this one and share its fsync.
	if err := b.SyncWait(); err != nil {
		return fmt.Errorf("storage: sync: %w", err)
	}
	return nil
}

// applyLocked runs fn on b under writeMu and applies b without waiting for
// the WAL sync. It reports whether anything was applied. The deferred
// unlock keeps the store usable when fn panics.
func (s *Store) applyLocked(b *pebble.Batch, fn func(storage.Writer) error) (applied bool, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	w := &writer{reader: reader{r: b}, b: b, db: s.db}
	err = fn(w)
	// Iterators on the batch must be closed before it is applied.
	w.closeIterators()
	if err != nil || b.Empty() {
		return false, err
	}
	if s.rows != nil {
		defer s.rows.writeEnd(s.rows.writeBegin(b))
	}
	if s.inMemory {
		err = s.db.Apply(b, pebble.NoSync)
	} else {
		err = s.db.ApplyNoSyncWait(b, pebble.Sync)
	}
	if err != nil {
		return false, fmt.Errorf("storage: apply: %w", err)
	}
	s.written.Add(uint64(b.Len()))
	return true, nil
}

// Close implements storage.Store. It waits for View and Update calls in
// flight to return (Pebble cannot close under open snapshots); calls made
// after Close starts fail with storage.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return storage.ErrClosed
	}
	s.closed = true
	for s.inflight > 0 {
		s.drained.Wait()
	}
	s.mu.Unlock()
	untuneHeap(s)
	return s.db.Close()
}

type pebbleReader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// reader serves one View (on a snapshot) or one Update (on its batch).
type reader struct {
	r pebbleReader
	// iters are the iterators opened through this reader; the ones fn
	// left open are closed when it returns, so a leak cannot pin the
	// snapshot or make DB.Close fail.
	iters []*iterator
}

func (r *reader) Get(key []byte) ([]byte, error) {
	v, closer, err := r.r.Get(emptyToNil(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	// The value is only valid until closer.Close; the contract promises it
	// for the rest of fn, so it is copied once here.
	out := make([]byte, len(v))
	copy(out, v)
	closer.Close()
	return out, nil
}

// Lend implements storage.Reader without the copy Get makes: Pebble's
// value stays valid until its closer is closed, after fn.
func (r *reader) Lend(key []byte, fn func(value []byte) error) error {
	v, closer, err := r.r.Get(emptyToNil(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return storage.ErrNotFound
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	return fn(v)
}

// GetMany implements storage.Reader with one iterator that seeks from
// key to key: sorted seeks reuse the blocks and positions of the last one
// (Pebble's try-seek-using-next), where a Get per key would set up an
// iterator on every level each time.
func (r *reader) GetMany(keys [][]byte, found func(i int, value []byte) error) error {
	if len(keys) == 0 {
		return nil
	}
	upper := append(bytes.Clone(keys[len(keys)-1]), 0)
	it, err := r.r.NewIter(&pebble.IterOptions{LowerBound: emptyToNil(keys[0]), UpperBound: upper})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if !it.SeekGE(k) {
			break // nothing at or after k: the rest are absent
		}
		if !bytes.Equal(it.Key(), k) {
			continue
		}
		v, err := it.ValueAndErr()
		if err == nil {
			err = found(i, v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Error(), it.Close())
}

func (r *reader) Scan(start, end []byte, reverse bool) storage.Iterator {
	if end != nil && bytes.Compare(start, end) >= 0 {
		// Nothing to iterate, and Pebble's internal iterators assume
		// LowerBound < UpperBound.
		return &iterator{}
	}
	it, err := r.r.NewIter(&pebble.IterOptions{LowerBound: emptyToNil(start), UpperBound: end})
	if err != nil {
		return &iterator{err: err}
	}
	i := &iterator{it: it, reverse: reverse}
	r.iters = append(r.iters, i)
	return i
}

func (r *reader) closeIterators() {
	for _, i := range r.iters {
		i.Close()
	}
	r.iters = nil
}

// emptyToNil maps the empty key to nil for Pebble, where both mean the
// smallest key: with invariants on (race builds), Pebble's iterators
// index key[0] of a non-nil seek key.
func emptyToNil(key []byte) []byte {
	if len(key) == 0 {
		return nil
	}
	return key
}

type writer struct {
	reader
	b *pebble.Batch
	// db is the database under b, which writeMu keeps still.
	db *pebble.DB
}

// Get implements storage.Reader. While b holds no writes, what it reads
// is the database's latest state, and writeMu keeps that still; reading
// the database directly then skips the iterators an indexed batch sets
// up for every Get. An item write does all its reads before it writes.
func (w *writer) Get(key []byte) ([]byte, error) {
	if w.b.Empty() {
		r := reader{r: w.db}
		return r.Get(key)
	}
	return w.reader.Get(key)
}

// Lend implements storage.Reader, as Get.
func (w *writer) Lend(key []byte, fn func([]byte) error) error {
	if w.b.Empty() {
		r := reader{r: w.db}
		return r.Lend(key, fn)
	}
	return w.reader.Lend(key, fn)
}

func (w *writer) Set(key, value []byte) error { return w.b.Set(key, value, nil) }
func (w *writer) Delete(key []byte) error     { return w.b.Delete(key, nil) }

func (w *writer) DeleteRange(start, end []byte) error {
	if end == nil {
		// Pebble needs an upper bound. The writer lock keeps the key space
		// still, so just past the last key present is as good as infinity.
		it, err := w.b.NewIter(&pebble.IterOptions{LowerBound: emptyToNil(start)})
		if err != nil {
			return err
		}
		if it.Last() {
			end = append(append([]byte(nil), it.Key()...), 0)
		}
		if err := it.Close(); err != nil {
			return err
		}
		if end == nil {
			return nil // nothing at or after start
		}
	}
	if bytes.Compare(start, end) >= 0 {
		return nil
	}
	return w.b.DeleteRange(start, end, nil)
}

type iterator struct {
	it      *pebble.Iterator
	reverse bool
	started bool
	err     error
}

func (i *iterator) Next() bool {
	if i.it == nil {
		return false
	}
	if !i.started {
		i.started = true
		if i.reverse {
			return i.it.Last()
		}
		return i.it.First()
	}
	if i.reverse {
		return i.it.Prev()
	}
	return i.it.Next()
}

// SkipTo implements storage.Skipper.
func (i *iterator) SkipTo(key []byte) bool {
	if i.it == nil {
		return false
	}
	if i.reverse {
		return i.it.SeekLT(key)
	}
	return i.it.SeekGE(key)
}

func (i *iterator) Key() []byte { return i.it.Key() }

func (i *iterator) Value() []byte {
	v, err := i.it.ValueAndErr()
	if err != nil {
		i.err = err
		return nil
	}
	return v
}

func (i *iterator) Err() error {
	if i.err != nil {
		return i.err
	}
	if i.it == nil {
		return nil
	}
	return i.it.Error()
}

func (i *iterator) Close() error {
	if i.it == nil {
		return i.err
	}
	err := i.it.Close()
	i.it = nil
	if i.err != nil {
		return i.err
	}
	return err
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
