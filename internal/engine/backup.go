package engine

import (
	"context"
	"errors"
	"io"

	"github.com/ebbdb/ebb/internal/storage"
)

// Backup writes a tar archive of a consistent snapshot of the whole store
// to w while the engine goes on serving; sizeHint is told the archive's
// size before its first byte is written. Only the
// embedded store on disk can: a shared PostgreSQL database is backed up
// with its own tools (pg_dump, base backups), and an in-memory store
// keeps nothing.
func (e *Engine) Backup(ctx context.Context, w io.Writer, sizeHint func(int64)) error {
	b, ok := e.store.(storage.Backuper)
	if !ok {
		return &Error{Kind: KindNotImplemented, Message: "This store cannot be backed up by Ebb: back up a PostgreSQL store with PostgreSQL's own tools (pg_dump or a base backup)."}
	}
	err := b.Backup(ctx, w, sizeHint)
	if errors.Is(err, errors.ErrUnsupported) {
		return &Error{Kind: KindBadRequest, Message: "Ebb runs with --memory and keeps nothing on disk to back up; export the data with ebb export instead."}
	}
	return err
}
