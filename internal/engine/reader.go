package engine

import (
	"bytes"
	"context"
	"errors"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl"
)

// itemReader reads a container's items as they are at one instant: get
// and scan return only the items visible then, so a read path built on
// it cannot forget TTL. Every path that reads items goes through one:
// point reads, the preconditions of writes, patches and deletes, query
// scans, index walks, the read feed, the latest-version change feed, the
// batch, and the purger's re-check before it deletes.
//
// INVARIANT: alive is the only caller of ttl.Visible and of
// container.deletedByPartition in the engine, but for the writes that
// tell a TTL delete from a partition delete in the change feed.
type itemReader struct {
	r   storage.Reader
	c   *container
	now int64 // the request's instant in epoch seconds
	// scoped restricts the reader to the items of physical partition
	// part: a query or feed addressed to one partition key range sees
	// only that range's items, whatever path it reads them by. A scan
	// then walks the other partitions' items too, without yielding
	// them, so it steps meter for every item it reads, and a point
	// lookup passes over another partition's key without reading it but
	// steps meter too: the executor's budget sees only the items it is
	// given.
	scoped bool
	part   int
	// epkIn, when set, narrows a scoped reader to the items whose encoded
	// partition key it accepts (an EPK range within part).
	epkIn func(pkEnc []byte) bool
	meter *workMeter
}

// storedItem is an item version as storage holds it: header and document
// (nil doc: none is stored).
type storedItem struct {
	doc []byte
	h   document.ItemHeader
}

// visibleAt is the predicate of every read path: the item stored at key
// with header h is visible unless it is outside the reader's scope, has
// expired (TTL) or a delete of its partition is in progress
// (pkdelete.go).
func (ir itemReader) visibleAt(key []byte, h document.ItemHeader) bool {
	return ir.inScope(key) && ir.alive(key, h)
}

// alive is visibleAt for an item known to be in the reader's scope.
func (ir itemReader) alive(key []byte, h document.ItemHeader) bool {
	return ttl.Visible(h.Ts, h.TTL, ir.c.ttl, ir.now) && !ir.c.deletedByPartition(key, h.LSN)
}

// inScope reports whether the item at key is in the reader's scope: every
// item, or a scoped reader's partition's (within its EPK range).
func (ir itemReader) inScope(key []byte) bool {
	return !ir.scoped || ir.c.inPartition(key, ir.part) && (ir.epkIn == nil || ir.epkIn(key[docPrefixLen:]))
}

// scopeRun remembers the scope of the logical partition a scan is in. A
// scan meets each logical partition's items one after another (their
// keys share the encoded partition key), and the scope depends on the
// partition key alone, so the scan places each logical partition in its
// physical one once, not each item.
type scopeRun struct {
	pk []byte // the encoded partition key placed last; nil: none
	in bool
	// passed counts the run's keys passed over so far (when !in).
	passed int
	// to holds the key skipRun returns backwards: the iterator's own key
	// is not the scan's to hand back to it, since a skip moves the
	// iterator.
	to []byte
}

// skipAfter is how many keys of another range's logical partition a
// scan steps through before it skips the rest of them with one seek: a
// seek costs several steps, so short runs (an item or a few to a
// partition key) are cheaper stepped through.
const skipAfter = 8

// skipRun returns where a scan that has passed over key, of run, should
// seek to pass over the rest of run (its next key, in the scan's
// direction), or nil to step on.
func (run *scopeRun) skipRun(key []byte, reverse bool) []byte {
	if run.in || run.pk == nil {
		return nil
	}
	if run.passed++; run.passed < skipAfter {
		return nil
	}
	prefix := key[:docPrefixLen+len(run.pk)]
	if !reverse {
		return keys.PrefixEnd(prefix) // a copy of its own
	}
	run.to = append(run.to[:0], prefix...)
	return run.to // the last key before the run
}

// inScopeRun is inScope for a scan, through run.
func (ir itemReader) inScopeRun(key []byte, run *scopeRun) bool {
	if !ir.scoped {
		return true
	}
	pkEnc := key[docPrefixLen:]
	// An encoded partition key is never a prefix of another one: a key
	// that starts with run.pk has that partition key.
	if run.pk != nil && bytes.HasPrefix(pkEnc, run.pk) {
		return run.in
	}
	run.in, run.passed = ir.inScope(key), 0
	if n, ok := document.PKLen(pkEnc, len(ir.c.pk.Paths)); ok {
		run.pk = append(run.pk[:0], pkEnc[:n]...)
	} else {
		run.pk = nil
	}
	return run.in
}

// passOver reports whether a scoped reader passes over key, an item of
// another partition, without reading it. Passing over is work the
// request's executor does not see, so it steps the meter, whose error
// stops the read.
func (ir itemReader) passOver(key []byte) (bool, error) {
	if ir.inScope(key) {
		return false, nil
	}
	if ir.meter != nil {
		return true, ir.meter.step()
	}
	return true, nil
}

// deletedByPartition reports whether the item stored at key with header h
// is hidden by a partition delete rather than (only) by its TTL.
func (ir itemReader) deletedByPartition(key []byte, h document.ItemHeader) bool {
	return ir.c.deletedByPartition(key, h.LSN)
}

// lookup reads the version stored at key, visible or not: writes need an
// expired version too, since it still owns index entries and must be
// purged before it is replaced. it.doc is nil when nothing is stored.
func (ir itemReader) lookup(key []byte) (it storedItem, visible bool, err error) {
	if skip, err := ir.passOver(key); skip || err != nil {
		return storedItem{}, false, err
	}
	v, err := ir.r.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return storedItem{}, false, nil
	}
	if err != nil {
		return storedItem{}, false, err
	}
	h, doc, err := document.DecodeItem(v)
	if err != nil {
		return storedItem{}, false, err
	}
	return storedItem{doc: doc, h: h}, ir.alive(key, h), nil
}

// lend is lookup without copying the stored version: it calls fn once
// with what lookup would return and returns fn's error. it.doc is valid
// only until fn returns.
func (ir itemReader) lend(key []byte, fn func(it storedItem, visible bool) error) error {
	if skip, err := ir.passOver(key); err != nil {
		return err
	} else if skip {
		return fn(storedItem{}, false)
	}
	called := false
	err := ir.r.Lend(key, func(v []byte) error {
		h, doc, err := document.DecodeItem(v)
		if err != nil {
			return err
		}
		called = true
		return fn(storedItem{doc: doc, h: h}, ir.alive(key, h))
	})
	if !called && errors.Is(err, storage.ErrNotFound) {
		return fn(storedItem{}, false)
	}
	return err
}

// lookupMany is lookup of many keys, sorted ascending, read together:
// it calls found with the index in keys of each key that has a version
// stored, that version (the caller may keep it) and whether it is
// visible. Keys with nothing stored are skipped.
func (ir itemReader) lookupMany(keys [][]byte, found func(i int, it storedItem, visible bool)) error {
	read := keys
	var at []int // scoped: the index in keys of each key read
	if ir.scoped {
		read, at = make([][]byte, 0, len(keys)), make([]int, 0, len(keys))
		for i, k := range keys {
			skip, err := ir.passOver(k)
			if err != nil {
				return err
			}
			if !skip {
				read, at = append(read, k), append(at, i)
			}
		}
	}
	return ir.r.GetMany(read, func(i int, v []byte) error {
		h, doc, err := document.DecodeItem(v)
		if err != nil {
			return err
		}
		if ir.scoped {
			i = at[i]
		}
		found(i, storedItem{doc: bytes.Clone(doc), h: h}, ir.alive(keys[i], h))
		return nil
	})
}

// get returns the item at key if it is visible.
func (ir itemReader) get(key []byte) (storedItem, bool, error) {
	it, visible, err := ir.lookup(key)
	if err != nil || !visible {
		return storedItem{}, false, err
	}
	return it, true, nil
}

// read is a point read: the visible item at key, ErrNotFound, or (with
// the item) an error of KindNotModified when ifNoneMatch ("" for none)
// matches its etag.
func (ir itemReader) read(key []byte, ifNoneMatch string) (storedItem, error) {
	it, ok, err := ir.get(key)
	switch {
	case err != nil:
		return storedItem{}, err
	case !ok:
		return storedItem{}, ErrNotFound
	case ifNoneMatch != "" && (ifNoneMatch == "*" || ifNoneMatch == itemEtag(it.h.LSN)):
		return it, errNotModified
	}
	return it, nil
}

// readTo is read for a caller that only writes the item out: it calls
// fn with the visible item at key, valid only until fn returns, and
// returns fn's error; otherwise ErrNotFound, or the item's header and an
// error of KindNotModified when ifNoneMatch matches its etag.
func (ir itemReader) readTo(key []byte, ifNoneMatch string, fn func(it storedItem) error) (document.ItemHeader, error) {
	var h document.ItemHeader
	err := ir.lend(key, func(it storedItem, visible bool) error {
		switch {
		case !visible:
			return ErrNotFound
		case ifNoneMatch != "" && (ifNoneMatch == "*" || ifNoneMatch == itemEtag(it.h.LSN)):
			h = it.h
			return errNotModified
		}
		return fn(it)
	})
	return h, err
}

var errNotModified = &Error{Kind: KindNotModified, Message: "Not modified."}

// scan calls yield with each visible item whose key is in [start, end),
// in key order (descending when reverse), until yield returns false. The
// key and item are valid only during the call.
func (ir itemReader) scan(start, end []byte, reverse bool, yield func(key []byte, it storedItem) bool) error {
	iter := ir.r.Scan(start, end, reverse)
	defer iter.Close()
	skipper, _ := iter.(storage.Skipper)
	var run scopeRun
	// at says iter is already at its next key (a skip moved it there).
	for at := false; at || iter.Next(); {
		at = false
		if ir.meter != nil {
			if err := ir.meter.step(); err != nil {
				return err
			}
		}
		if !ir.inScopeRun(iter.Key(), &run) {
			if skipper == nil {
				continue
			}
			if to := run.skipRun(iter.Key(), reverse); to != nil {
				if at = skipper.SkipTo(to); !at {
					break
				}
			}
			continue
		}
		h, doc, err := document.DecodeItem(iter.Value())
		if err != nil {
			return err
		}
		if !ir.alive(iter.Key(), h) {
			continue
		}
		if !yield(iter.Key(), storedItem{doc: doc, h: h}) {
			return nil
		}
	}
	return iter.Err()
}

// storeReader reads single keys straight from the store, without a
// snapshot: a lone point read needs none. It cannot scan.
type storeReader struct {
	ctx   context.Context
	store storage.Store
}

func (s storeReader) Get(key []byte) ([]byte, error) { return s.store.Get(s.ctx, key) }

func (s storeReader) Lend(key []byte, fn func([]byte) error) error {
	return s.store.Lend(s.ctx, key, fn)
}

// GetMany reads each key on its own: a lone reader has no snapshot to
// read them together in.
func (s storeReader) GetMany(keys [][]byte, found func(i int, value []byte) error) error {
	for i, k := range keys {
		v, err := s.Get(k)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err == nil {
			err = found(i, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s storeReader) Scan(start, end []byte, reverse bool) storage.Iterator {
	return errIterator{errors.New("engine: a point reader cannot scan")}
}

// errIterator is an iterator that holds only an error.
type errIterator struct{ err error }

func (it errIterator) Next() bool    { return false }
func (it errIterator) Key() []byte   { return nil }
func (it errIterator) Value() []byte { return nil }
func (it errIterator) Err() error    { return it.err }
func (it errIterator) Close() error  { return nil }
