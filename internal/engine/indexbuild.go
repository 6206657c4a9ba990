package engine

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/storage"
)

// The index builder: one goroutine that brings every container whose
// index state is "building" to "ready" (see "Policy changes and
// rebuilds" in package index, which owns each batch: index.BuildBatch).
// It wakes when a policy changes and once at start (to resume a rebuild
// a restart interrupted), works through the building containers batch by
// batch, and sleeps again; after a storage error it retries a second
// later. On a shared store it also looks every
// poll period, so that a rebuild whose node died is finished by another
// (two nodes building at once is harmless: batches are transactions on
// the stored cursor, and setting an entry twice is a no-op).
//
// The same goroutine, on the same wakes, finishes the one-time count of
// the usage counters of a container whose state predates them (usage.go,
// countBatch): a walk of the same shape, a cursor in a stored state
// advanced by transactional batches.

type indexBuilder struct {
	e *Engine
	// batch is the most documents a batch indexes.
	batch int
	// hook, if set (tests), runs after each committed batch; false stops
	// work on that container until the next wake.
	hook func(c *container) bool
	// countGate, if set (tests), is asked before counting a container's
	// usage; false skips the count until the next pass.
	countGate func(c *container) bool
	// poll, if non-zero, is how often to look for building containers
	// without being woken (shared stores).
	poll    time.Duration
	wake    chan struct{}
	stopped chan struct{}
	done    chan struct{}
	// ctx is canceled by stop, so that a long read (a split's sample of
	// a large partition) does not hold up Close.
	ctx    context.Context
	cancel context.CancelFunc
}

func startIndexBuilder(e *Engine, batch int, hook, countGate func(c *container) bool, poll time.Duration) *indexBuilder {
	if batch <= 0 {
		batch = index.BatchDocs
	}
	b := &indexBuilder{e: e, batch: batch, hook: hook, countGate: countGate, poll: poll, wake: make(chan struct{}, 1),
		stopped: make(chan struct{}), done: make(chan struct{})}
	b.ctx, b.cancel = context.WithCancel(context.Background())
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
	b.cancel()
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

// pass counts every container still counting and builds every building
// container to the end. It reports whether an error left work for later.
func (b *indexBuilder) pass() (retry bool) {
	var colls []*container
	for _, db := range b.e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			colls = append(colls, c)
		}
	}
	slices.SortFunc(colls, func(x, y *container) int { return bytes.Compare(x.rid[:], y.rid[:]) })
	for _, c := range colls {
		for b.countGate == nil || b.countGate(c) {
			if b.stopping() {
				break
			}
			more, err := b.e.countBatch(b.ctx, c, b.batch)
			if err != nil && b.stopping() {
				return retry // cut short by stop
			}
			if err != nil {
				b.e.log.Warn("usage count", "container", c.label(), "err", err)
				retry = true
				break
			}
			if !more {
				break
			}
		}
		for !b.stopping() {
			more, err := b.e.indexBatch(b.ctx, c, b.batch)
			if err != nil && b.stopping() {
				return retry
			}
			if errors.Is(err, errPartitionSplit) {
				// The next pass goes on with the split's children.
				retry = true
				break
			}
			if err != nil {
				b.e.log.Warn("index rebuild", "container", c.label(), "err", err)
				retry = true
				break
			}
			if !more || (b.hook != nil && !b.hook(c)) {
				break
			}
		}
		for !b.stopping() {
			// The container as it is now: each split publishes a new one.
			cur, err := b.e.catalogSnapshot().container(c.dbID, c.id)
			if err != nil || cur.rid != c.rid {
				break
			}
			split, err := b.e.growPartitions(b.ctx, cur)
			if err != nil && b.stopping() {
				return retry
			}
			if err != nil {
				b.e.log.Warn("partition split", "container", c.label(), "err", err)
				retry = true
			}
			if !split {
				break
			}
		}
	}
	return retry
}

// indexBatch runs the next batch of c's rebuild (index.BuildBatch) in
// one transaction. more reports that documents remain.
func (e *Engine) indexBatch(ctx context.Context, c *container, max int) (more bool, err error) {
	// Most containers' indexes were built long ago: look before taking
	// every partition's lock, which the writes to them wait for.
	built := false
	_ = e.store.View(ctx, func(r storage.Reader) error {
		st, found, err := index.ReadState(r, c.rid)
		built = err == nil && found && !st.Building()
		return err
	})
	if built {
		return false, nil
	}
	err = e.updateContainer(ctx, c, func(w storage.Writer) error {
		more, err = index.BuildBatch(w, c.indexTarget(), max)
		return err
	})
	return more, err
}

// ensureIndexStates gives every container without an index state one
// that builds its index (index.EnsureState). Open calls it before
// serving.
func (e *Engine) ensureIndexStates(ctx context.Context) error {
	for _, db := range e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			err := e.updateContainer(ctx, c, func(w storage.Writer) error {
				return index.EnsureState(w, c.indexTarget())
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
