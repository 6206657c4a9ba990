// Package storage is the contract between the engine and the bytes on disk:
// an ordered key/value store with consistent snapshots and atomic,
// serializable updates. It is implemented by the embedded Pebble store and
// by the PostgreSQL store; the storagetest package holds the conformance
// suite both must pass.
package storage

import (
	"context"
	"errors"
	"io"
)

// ErrNotFound is returned by Get when the key is absent.
var ErrNotFound = errors.New("storage: not found")

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("storage: closed")

// ErrUnavailable wraps errors from a backend that cannot be reached right
// now (a database that went away); the gateway answers them with 503.
var ErrUnavailable = errors.New("storage: unavailable")

// Store is an ordered, transactional key/value store.
type Store interface {
	// Get reads one key outside any transaction: the value committed
	// last, or ErrNotFound. It is the cheap path for point reads, which
	// need no snapshot. The slice is the caller's.
	Get(ctx context.Context, key []byte) ([]byte, error)
	// Lend is Get that lends the value instead of copying it: it calls
	// fn with the value committed last, or returns ErrNotFound without
	// calling fn, and returns fn's error. The value is valid only until
	// fn returns and must not be modified. A backend that holds values
	// in memory of its own (Pebble) lends that memory, pinned while fn
	// runs, so fn should not block for long; the others copy, as Get.
	Lend(ctx context.Context, key []byte, fn func(value []byte) error) error
	// View runs fn against a consistent snapshot.
	View(ctx context.Context, fn func(Reader) error) error
	// Update runs fn in a serializable transaction and commits what it
	// wrote atomically and durably before returning nil. fn may be run
	// more than once (after a conflict), so it must not have side effects
	// outside the Writer; if fn returns an error nothing is written and
	// Update returns that error.
	Update(ctx context.Context, fn func(Writer) error) error
	// UpdateLocked is Update for a transaction in the lock domains of the
	// keys locks (one, or several). A domain is data that only its own
	// transactions change: every transaction that writes the data, or
	// reads it to decide a write, either runs in the domain (UpdateLocked
	// with its lock among locks) or is an Update that writes its lock; and
	// a transaction in a domain read-modify-writes nothing outside its
	// domains. Under that rule the result is serializable, as with
	// Update, while the backend may take a cheaper path: a transaction
	// holds its locks from before fn runs to its end, so it runs alone
	// among the transactions of each of its domains, and PostgreSQL runs
	// it at READ COMMITTED, where a second writer waits for the lock
	// instead of failing at commit and running again. Transactions with
	// no domain in common never wait for each other. fn may still run
	// more than once (after a deadlock), as with Update.
	UpdateLocked(ctx context.Context, locks [][]byte, fn func(Writer) error) error
	// Close waits for calls in flight and releases the store; later calls
	// fail with ErrClosed.
	Close() error
}

// Reader reads one snapshot. Slices it returns are valid only until fn
// returns (Get) or until the iterator moves (Key, Value); copy to keep.
type Reader interface {
	// Get returns the value of key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// Lend is Get that lends the value instead of copying it, as
	// Store.Lend: fn's value is valid only until fn returns.
	Lend(key []byte, fn func(value []byte) error) error
	// GetMany reads many keys at once, which must be sorted ascending:
	// it calls found with the index in keys and the value of each key
	// present, in order, and stops at found's first error. It costs far
	// less than a Get per key: one pass in key order on Pebble, one round
	// trip on PostgreSQL. The value is valid only during the call.
	GetMany(keys [][]byte, found func(i int, value []byte) error) error
	// Scan iterates the keys in [start, end) in ascending order, or in
	// descending order when reverse is set. A nil end means no bound.
	Scan(start, end []byte, reverse bool) Iterator
}

// Iterator walks a range. Call Next before the first Key.
type Iterator interface {
	Next() bool
	Key() []byte
	Value() []byte
	// Err reports the error that stopped the iteration, if any.
	Err() error
	Close() error
}

// Skipper is an Iterator that can pass over a run of keys without
// visiting them: one seek instead of a step per key (Pebble), or a page
// that starts after them (PostgreSQL), so they are never sent. Callers
// step through iterators that do not implement it.
type Skipper interface {
	Iterator
	// SkipTo moves a started iterator to the first key at or after key
	// (ascending) or the last key before key (descending) within its
	// range, and reports whether there is one, as Next does. key must lie
	// ahead of the current key in the iteration's order, and must not be
	// a slice the iterator lent (Key, Value): moving ends that loan.
	SkipTo(key []byte) bool
}

// Writer is a Reader that also writes. Reads see the writer's own writes.
type Writer interface {
	Reader
	Set(key, value []byte) error
	Delete(key []byte) error
	// DeleteRange deletes every key in [start, end).
	DeleteRange(start, end []byte) error
}

// Backuper is a Store that can write a consistent copy of itself while it
// serves: the embedded Pebble store. A shared database is backed up with
// its own tools.
type Backuper interface {
	// Backup writes a tar archive of a consistent snapshot of the whole
	// store to w. sizeHint, called once before the archive's first byte,
	// is told the archive's size in bytes.
	Backup(ctx context.Context, w io.Writer, sizeHint func(bytes int64)) error
}
