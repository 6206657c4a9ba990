package storagetest

import (
	"context"
	"errors"

	"github.com/ebbdb/ebb/internal/storage"
)

// Replaying wraps s so that every transaction function runs twice: once
// in a transaction that is then rolled back, as after a conflict, and
// again in the one that commits. The contract lets Update and
// UpdateLocked run fn more than once, and PostgreSQL does after a
// serialization failure or a deadlock, so whatever a caller keeps across
// attempts (a parsed request, a counter, a slice it appends to) must
// leave the second run's result the same as a first run's. Running a
// caller's tests over a replaying store shows where it does not: tests
// that pass on the store itself and fail on this wrapper have found such
// a function. Other methods, and optional interfaces such as
// storage.Backuper, are s's own or absent.
func Replaying(s storage.Store) storage.Store { return replaying{s} }

type replaying struct{ storage.Store }

// errReplay rolls back a first run.
var errReplay = errors.New("storagetest: first run rolled back to run again")

func (r replaying) Update(ctx context.Context, fn func(storage.Writer) error) error {
	return replay(fn, func(fn func(storage.Writer) error) error { return r.Store.Update(ctx, fn) })
}

func (r replaying) UpdateLocked(ctx context.Context, locks [][]byte, fn func(storage.Writer) error) error {
	return replay(fn, func(fn func(storage.Writer) error) error { return r.Store.UpdateLocked(ctx, locks, fn) })
}

// replay runs fn through update twice, rolling the first run back. A
// first run that fails is the answer: fn saw what the committing run
// would see, and a failure writes nothing.
func replay(fn func(storage.Writer) error, update func(func(storage.Writer) error) error) error {
	err := update(func(w storage.Writer) error {
		if err := fn(w); err != nil {
			return err
		}
		return errReplay
	})
	if !errors.Is(err, errReplay) {
		return err
	}
	return update(fn)
}
