package engine

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// The index builder: one goroutine that brings every container whose
// index state is "building" to "ready" (see "Policy changes and
// rebuilds" in index.go). It wakes when a policy changes and once at
// start (to resume a rebuild a restart interrupted), works through the
// building containers batch by batch, and sleeps again; after a storage
// error it retries a second later. On a shared store it also looks every
// poll period, so that a rebuild whose node died is finished by another
// (two nodes building at once is harmless: batches are transactions on
// the stored cursor, and setting an entry twice is a no-op).

// Batch limits: a batch is one transaction, holding the store's writer
// while it runs, so it is kept short.
const (
	indexBatchDocs  = 256
	indexBatchBytes = 4 << 20
)

type indexBuilder struct {
	e *Engine
	// batch is the most documents a batch indexes.
	batch int
	// hook, if set (tests), runs after each committed batch; false stops
	// work on that container until the next wake.
	hook func(c *container) bool
	// poll, if non-zero, is how often to look for building containers
	// without being woken (shared stores).
	poll    time.Duration
	wake    chan struct{}
	stopped chan struct{}
	done    chan struct{}
}

func startIndexBuilder(e *Engine, batch int, hook func(c *container) bool, poll time.Duration) *indexBuilder {
	if batch <= 0 {
		batch = indexBatchDocs
	}
	b := &indexBuilder{e: e, batch: batch, hook: hook, poll: poll, wake: make(chan struct{}, 1),
		stopped: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// kick wakes the builder; it never blocks.
func (b *indexBuilder) kick() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *indexBuilder) stop() {
	close(b.stopped)
	<-b.done
}

func (b *indexBuilder) run() {
	defer close(b.done)
	for {
		retry := b.pass()
		var tick <-chan struct{}
		cancel := func() {}
		switch {
		case retry:
			tick, cancel = b.e.real.After(time.Second)
		case b.poll > 0:
			tick, cancel = b.e.real.After(b.poll)
		}
		select {
		case <-b.stopped:
			cancel()
			return
		case <-b.wake:
		case <-tick:
		}
		cancel()
	}
}

func (b *indexBuilder) stopping() bool {
	select {
	case <-b.stopped:
		return true
	default:
		return false
	}
}

// pass builds every building container to the end. It reports whether
// an error left work for later.
func (b *indexBuilder) pass() (retry bool) {
	var colls []*container
	for _, db := range b.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			colls = append(colls, c)
		}
	}
	slices.SortFunc(colls, func(x, y *container) int { return bytes.Compare(x.rid[:], y.rid[:]) })
	for _, c := range colls {
		for !b.stopping() {
			more, err := b.e.indexBatch(context.Background(), c, b.batch)
			if err != nil {
				b.e.log.Warn("index rebuild", "container", c.label(), "err", err)
				retry = true
				break
			}
			if !more || (b.hook != nil && !b.hook(c)) {
				break
			}
		}
	}
	return retry
}

// indexBatch runs the next batch of c's rebuild (buildBatch) in one
// transaction. more reports that documents remain.
func (e *Engine) indexBatch(ctx context.Context, c *container, max int) (more bool, err error) {
	err = e.store.Update(ctx, func(w storage.Writer) error {
		more, err = buildBatch(w, c.indexTarget(), max)
		return err
	})
	return more, err
}

// buildBatch indexes the next documents of a building container: it
// reads the state (and stops if the container is not building), indexes
// up to max documents after the cursor under the state's policy, and
// moves the cursor past them, or marks the index ready after the last.
// more reports that documents remain.
// REQUIRES: called inside an Update, which is the batch.
func buildBatch(w storage.Writer, t indexTarget, max int) (more bool, err error) {
	type item struct{ suffix, doc []byte }
	st, found, err := readIndexState(w, t.rid)
	if err != nil || !found || !st.building {
		return false, err
	}
	prefix := keyspace.CollPrefix(keyspace.Doc, t.rid)
	start := prefix
	if st.cursor != nil {
		start = append(append(slices.Clip(prefix), st.cursor...), 0)
	}
	// Read the batch first: the iterator is closed before writing.
	var items []item
	size := 0
	it := w.Scan(start, keys.PrefixEnd(prefix), false)
	for it.Next() {
		if len(items) == max || size >= indexBatchBytes {
			more = true
			break
		}
		_, doc, err := document.DecodeItem(it.Value())
		if err != nil {
			it.Close()
			return false, err
		}
		items = append(items, item{suffix: slices.Clone(it.Key()[len(prefix):]), doc: slices.Clone(doc)})
		size += len(doc)
	}
	if err := it.Close(); err != nil {
		return false, err
	}
	if err := it.Err(); err != nil {
		return false, err
	}
	for _, it := range items {
		_, rest, err := document.DecodePK(it.suffix, len(t.pk.Paths))
		if err != nil {
			return false, err
		}
		id, _, err := keys.DecodeBytes(rest)
		if err != nil {
			return false, err
		}
		pkEnc := it.suffix[:len(it.suffix)-len(rest)]
		// Under the state's policy: indexAdd reads it from w too.
		if err := indexAdd(w, t, pkEnc, string(id), it.doc); err != nil {
			return false, err
		}
	}
	if more {
		st.cursor = items[len(items)-1].suffix
	} else {
		st.building, st.cursor = false, nil
	}
	return more, w.Set(keyspace.IndexStateKey(t.rid), st.encode())
}

// initIndexState stores the index state of a new container: ready, under
// its catalog policy, with no entries since it has no items.
// REQUIRES: called inside the Update that creates the container.
func initIndexState(w storage.Writer, t indexTarget) error {
	return w.Set(keyspace.IndexStateKey(t.rid), newIndexState(t.catalogPolicy()).encode())
}

// setIndexPolicy makes t's catalog policy the one its index follows, in
// the transaction that stores the catalog change: when it indexes
// differently from the stored state's, every entry is dropped and the
// state starts building from the first item (a policy that indexes
// nothing is ready at once).
// REQUIRES: called inside an Update.
func setIndexPolicy(w storage.Writer, t indexTarget) error {
	pol := t.catalogPolicy()
	st, found, err := readIndexState(w, t.rid)
	if err != nil {
		return err
	}
	if found && st.fp == pol.fp {
		return nil
	}
	p := keyspace.IndexPrefix(t.rid)
	if err := w.DeleteRange(p, keys.PrefixEnd(p)); err != nil {
		return err
	}
	ns := newIndexState(pol)
	ns.building = !pol.none
	return w.Set(keyspace.IndexStateKey(t.rid), ns.encode())
}

// ensureIndexState gives t, if it has no index state (a store written
// before Ebb had indexes), one that builds its index.
// REQUIRES: called inside an Update.
func ensureIndexState(w storage.Writer, t indexTarget) error {
	_, found, err := readIndexState(w, t.rid)
	if err != nil || found {
		return err
	}
	return setIndexPolicy(w, t)
}

// ensureIndexStates gives every container without an index state one
// that builds its index (ensureIndexState). Open calls it before serving.
func (e *Engine) ensureIndexStates(ctx context.Context) error {
	for _, db := range e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			err := e.store.Update(ctx, func(w storage.Writer) error {
				return ensureIndexState(w, c.indexTarget())
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
