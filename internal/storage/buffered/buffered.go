// Package buffered is a storage.Writer that keeps its writes in memory
// over a snapshot it reads through. Work that may run long (a stored
// procedure) runs against one without holding the store's write lock or
// a database transaction; what it wrote is applied afterwards in one
// short Update, once the caller has checked that what it read has not
// changed since the snapshot.
package buffered

import (
	"bytes"
	"slices"

	"github.com/ebbdb/ebb/internal/storage"
)

// Writer buffers writes over base. Reads see the buffered writes first,
// then base. It is not safe for concurrent use.
type Writer struct {
	base storage.Reader
	// entries holds one entry per key written, sorted by key.
	entries []entry
	// spans are the ranges deleted from base, in the order deleted.
	// Entries written later in a span override it.
	spans []span
	bytes int
}

// entry is the latest write of one key: a value or a deletion.
type entry struct {
	key, value []byte
	deleted    bool
}

// span is a deleted range [start, end); a nil end has no bound.
type span struct{ start, end []byte }

func (s span) covers(key []byte) bool {
	return bytes.Compare(key, s.start) >= 0 && (s.end == nil || bytes.Compare(key, s.end) < 0)
}

// New returns a Writer over base, which must stay readable for as long
// as the Writer is read.
func New(base storage.Reader) *Writer { return &Writer{base: base} }

// Bytes is the size of the buffered keys and values: what the writes
// hold in memory.
func (w *Writer) Bytes() int { return w.bytes }

// Apply writes the buffered writes to dst: the deleted ranges first, then
// every key's last write.
func (w *Writer) Apply(dst storage.Writer) error {
	for _, s := range w.spans {
		if err := dst.DeleteRange(s.start, s.end); err != nil {
			return err
		}
	}
	for _, e := range w.entries {
		var err error
		if e.deleted {
			err = dst.Delete(e.key)
		} else {
			err = dst.Set(e.key, e.value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) find(key []byte) (int, bool) {
	return slices.BinarySearchFunc(w.entries, key, func(e entry, k []byte) int { return bytes.Compare(e.key, k) })
}

// local reports whether the buffer decides key: it was written, or lies
// in a deleted range. v is its value when written and not deleted.
func (w *Writer) local(key []byte) (v []byte, found, decided bool) {
	if i, ok := w.find(key); ok {
		e := w.entries[i]
		return e.value, !e.deleted, true
	}
	return nil, false, covered(w.spans, key)
}

func covered(spans []span, key []byte) bool {
	for _, s := range spans {
		if s.covers(key) {
			return true
		}
	}
	return false
}

// Get implements storage.Reader.
func (w *Writer) Get(key []byte) ([]byte, error) {
	v, found, decided := w.local(key)
	switch {
	case !decided:
		return w.base.Get(key)
	case !found:
		return nil, storage.ErrNotFound
	}
	return bytes.Clone(v), nil
}

// Lend implements storage.Reader.
func (w *Writer) Lend(key []byte, fn func(value []byte) error) error {
	v, found, decided := w.local(key)
	switch {
	case !decided:
		return w.base.Lend(key, fn)
	case !found:
		return storage.ErrNotFound
	}
	return fn(v)
}

// GetMany implements storage.Reader: the keys the buffer decides are
// answered from it, the rest from base in one call, all in key order.
func (w *Writer) GetMany(keys [][]byte, found func(i int, value []byte) error) error {
	var baseKeys [][]byte
	var baseIndex []int
	for i, k := range keys {
		if _, _, decided := w.local(k); !decided {
			baseKeys = append(baseKeys, k)
			baseIndex = append(baseIndex, i)
		}
	}
	next := 0
	// upTo answers the buffered keys before index end.
	upTo := func(end int) error {
		for ; next < end; next++ {
			if v, ok, decided := w.local(keys[next]); decided && ok {
				if err := found(next, v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if len(baseKeys) > 0 {
		err := w.base.GetMany(baseKeys, func(j int, v []byte) error {
			i := baseIndex[j]
			if err := upTo(i); err != nil {
				return err
			}
			next = i + 1
			return found(i, v)
		})
		if err != nil {
			return err
		}
	}
	return upTo(len(keys))
}

// Set implements storage.Writer; it copies key and value.
func (w *Writer) Set(key, value []byte) error {
	w.put(entry{key: append([]byte{}, key...), value: append([]byte{}, value...)})
	return nil
}

// Delete implements storage.Writer.
func (w *Writer) Delete(key []byte) error {
	w.put(entry{key: append([]byte{}, key...), deleted: true})
	return nil
}

func (w *Writer) put(e entry) {
	w.bytes += len(e.key) + len(e.value)
	i, ok := w.find(e.key)
	if ok {
		w.bytes -= len(w.entries[i].key) + len(w.entries[i].value)
		w.entries[i] = e
		return
	}
	w.entries = slices.Insert(w.entries, i, e)
}

// DeleteRange implements storage.Writer.
func (w *Writer) DeleteRange(start, end []byte) error {
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil
	}
	s := span{start: append([]byte{}, start...)}
	if end != nil {
		s.end = append([]byte{}, end...)
	}
	lo, _ := w.find(s.start)
	hi := len(w.entries)
	if s.end != nil {
		hi, _ = w.find(s.end)
	}
	for _, e := range w.entries[lo:hi] {
		w.bytes -= len(e.key) + len(e.value)
	}
	w.entries = slices.Delete(w.entries, lo, hi)
	w.spans = append(w.spans, s)
	w.bytes += len(s.start) + len(s.end)
	return nil
}

// Scan implements storage.Reader. The iterator sees the writes made
// before it was created, not those made while it is open.
func (w *Writer) Scan(start, end []byte, reverse bool) storage.Iterator {
	it := &iterator{base: w.base.Scan(start, end, reverse), spans: slices.Clone(w.spans), reverse: reverse}
	if end == nil || bytes.Compare(start, end) < 0 {
		lo, _ := w.find(start)
		hi := len(w.entries)
		if end != nil {
			hi, _ = w.find(end)
		}
		it.entries = slices.Clone(w.entries[lo:hi])
		if reverse {
			slices.Reverse(it.entries)
		}
	}
	return it
}

// iterator merges a scan of base with a copy of the buffered entries in
// its range, skipping what the buffer deleted.
type iterator struct {
	base    storage.Iterator
	baseOK  bool
	entries []entry
	// next is the index of the next entry to consider.
	next    int
	spans   []span
	reverse bool
	started bool
	// onBase: the current key is base's, else entries[next]'s.
	onBase, onKey bool
}

func (it *iterator) Next() bool {
	switch {
	case !it.started:
		it.started = true
		it.baseOK = it.base.Next()
	case it.onKey && it.onBase:
		it.baseOK = it.base.Next()
	case it.onKey:
		it.next++
	}
	it.onKey = false
	for {
		haveEntry := it.next < len(it.entries)
		if !it.baseOK && !haveEntry {
			return false
		}
		c := 1 // which comes first in scan order: base (< 0) or the entry
		switch {
		case !haveEntry:
			c = -1
		case it.baseOK:
			c = bytes.Compare(it.base.Key(), it.entries[it.next].key)
			if it.reverse {
				c = -c
			}
		}
		if c < 0 {
			if covered(it.spans, it.base.Key()) {
				it.baseOK = it.base.Next()
				continue
			}
			it.onBase, it.onKey = true, true
			return true
		}
		if c == 0 {
			it.baseOK = it.base.Next() // the entry overrides base
		}
		if it.entries[it.next].deleted {
			it.next++
			continue
		}
		it.onBase, it.onKey = false, true
		return true
	}
}

func (it *iterator) Key() []byte {
	if it.onBase {
		return it.base.Key()
	}
	return it.entries[it.next].key
}

func (it *iterator) Value() []byte {
	if it.onBase {
		return it.base.Value()
	}
	return it.entries[it.next].value
}

func (it *iterator) Err() error { return it.base.Err() }

func (it *iterator) Close() error { return it.base.Close() }
