package storagetest

import (
	"context"

	"github.com/ebbdb/ebb/internal/storage"
)

// Briefly wraps s so that every UpdateLocked is marked brief
// (storage.Brief), as the engine marks its point writes: a store that
// runs brief transactions together (the PostgreSQL store's groups) then
// runs the contract's locked transactions that way.
func Briefly(s storage.Store) storage.Store { return briefly{s} }

type briefly struct{ storage.Store }

func (b briefly) UpdateLocked(ctx context.Context, locks [][]byte, fn func(storage.Writer) error) error {
	return b.Store.UpdateLocked(storage.Brief(ctx), locks, fn)
}
