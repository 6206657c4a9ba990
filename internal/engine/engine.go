// Package engine is the database: databases, containers, items and
// offers; resource ids, etags, _ts and LSNs; partition-key identity;
// conditional writes; Time-To-Live visibility on every read path; the
// background purge of expired items; and the request-unit cost model.
//
// The gateway calls one engine method per request; the engine calls the
// storage contract, the ttl policy and the query library, never the other
// way round. Errors the client must see are *Error values with a Kind;
// anything else is internal.
//
// # Time
//
// Every operation reads the clock once (its "now") and uses that instant
// for TTL visibility and for the _ts it writes. A container's _ts never
// goes backwards: a write gets max(now, the container's last _ts).
package engine

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage"
)

// Engine is one Ebb database over a store.
type Engine struct {
	store storage.Store
	clock clock.Clock
	log   *slog.Logger

	// catMu serializes catalog changes (create, replace and delete of
	// databases, containers and offers) so the cache below and the store
	// change together.
	catMu sync.Mutex
	// mu guards cat. Readers take a snapshot pointer under RLock; the
	// catalog values themselves are immutable once published.
	mu  sync.RWMutex
	cat *catalog

	purger *purger
}

// Options configure an Engine.
type Options struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// DisablePurger leaves expired items in storage (they stay invisible);
	// tests use it to look at unpurged state.
	DisablePurger bool
}

// Open loads the catalog from store and starts the purger.
func Open(ctx context.Context, store storage.Store, opts Options) (*Engine, error) {
	if opts.Clock == nil {
		opts.Clock = clock.NewSystem()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	e := &Engine{store: store, clock: opts.Clock, log: opts.Logger}
	cat, err := loadCatalog(ctx, store)
	if err != nil {
		return nil, err
	}
	e.cat = cat
	e.purger = newPurger(e)
	if !opts.DisablePurger {
		if err := e.purger.start(ctx); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Close stops background work. It does not close the store.
func (e *Engine) Close() error {
	e.purger.stop()
	return nil
}

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.clock }

// nowSec is the operation's "now" in whole epoch seconds.
func (e *Engine) nowSec() int64 { return e.clock.Now().Unix() }

// catalogSnapshot returns the current catalog. REQUIRES: the caller does
// not mutate it.
func (e *Engine) catalogSnapshot() *catalog {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cat
}

// ridEncoding is Cosmos's: standard base64 with '/' replaced by '-'.
func ridString(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	out := []byte(s)
	for i, c := range out {
		if c == '/' {
			out[i] = '-'
		}
	}
	return string(out)
}

// nextNumber allocates a resource number from the store-wide counter.
// REQUIRES: called inside an Update.
func nextNumber(w storage.Writer) (uint64, error) {
	var n uint64
	v, err := w.Get([]byte{spaceCounter})
	switch {
	case err == nil && len(v) == 8:
		n = binary.BigEndian.Uint64(v)
	case err == nil:
		return 0, fmt.Errorf("engine: corrupt counter (%d bytes)", len(v))
	case err != storage.ErrNotFound:
		return 0, err
	}
	n++
	return n, w.Set([]byte{spaceCounter}, binary.BigEndian.AppendUint64(nil, n))
}

// resourceEtag renders an etag for a catalog resource from its number.
func resourceEtag(n uint64) string {
	return fmt.Sprintf("\"00000000-0000-0000-%04x-%012x\"", (n>>48)&0xffff, n&0xffffffffffff)
}

// itemEtag renders an item's etag from the LSN of its last write, which
// is unique within its container.
func itemEtag(lsn uint64) string {
	return fmt.Sprintf("\"%08x-0000-0000-0000-%012x\"", lsn>>48, lsn&0xffffffffffff)
}

// StoredItems counts the item versions in storage, visible or expired
// and not yet purged. It scans every item: for tests and tools.
func (e *Engine) StoredItems() int {
	n := 0
	_ = e.store.View(context.Background(), func(r storage.Reader) error {
		it := r.Scan([]byte{spaceDoc}, []byte{spaceDoc + 1}, false)
		defer it.Close()
		for it.Next() {
			n++
		}
		return it.Err()
	})
	return n
}
