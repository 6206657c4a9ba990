package storagetest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/ebbdb/ebb/internal/storage"
)

// Scribbling wraps s so that every slice the contract lends is
// overwritten once its loan ends: a value lent to fn (Lend, GetMany)
// when fn returns, a Get inside a transaction when the transaction's
// function returns, an iterator's key and value when it moves or closes.
// Pebble lends its own memory, which usually keeps its bytes for a while
// after the loan, so a caller that holds on to a lent slice passes its
// tests and corrupts data later, when that memory is reused; over a
// scribbling store the same caller reads garbage at once. Before
// overwriting a lent value or an iterator's key and value, it checks that
// the caller left them as lent, and panics if not: they are the store's
// memory. Store.Get returns the caller's own slice and is not scribbled.
func Scribbling(s storage.Store) storage.Store { return scribbling{s} }

// scribbled is what a lent byte becomes when its loan ends: not valid
// JSON, not UTF-8, and not a byte any key encoding ends with by chance
// everywhere.
const scribbled = 0xFF

func scribble(b []byte) {
	for i := range b {
		b[i] = scribbled
	}
}

// own is a copy of v that is the wrapper's to scribble; nil stays nil.
func own(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append(make([]byte, 0, len(v)), v...)
}

// lendOwn lends fn a copy of v and scribbles it when fn returns. A
// caller must not modify a lent value (on Pebble it is the block cache's
// or the row cache's memory): one that does panics here.
func lendOwn(v []byte, fn func([]byte) error) error {
	c := own(v)
	err := fn(c)
	checkUnmodified(c, v)
	scribble(c)
	return err
}

func checkUnmodified(lent, original []byte) {
	if !bytes.Equal(lent, original) {
		panic(fmt.Sprintf("storagetest: a caller modified a lent value: %q, lent as %q", lent, original))
	}
}

type scribbling struct{ storage.Store }

func (s scribbling) Lend(ctx context.Context, key []byte, fn func([]byte) error) error {
	return s.Store.Lend(ctx, key, func(v []byte) error { return lendOwn(v, fn) })
}

func (s scribbling) View(ctx context.Context, fn func(storage.Reader) error) error {
	return s.Store.View(ctx, func(r storage.Reader) error {
		sr := &scribReader{r: r}
		defer sr.end()
		return fn(sr)
	})
}

func (s scribbling) Update(ctx context.Context, fn func(storage.Writer) error) error {
	return s.Store.Update(ctx, scribbledTx(fn))
}

func (s scribbling) UpdateLocked(ctx context.Context, locks [][]byte, fn func(storage.Writer) error) error {
	return s.Store.UpdateLocked(ctx, locks, scribbledTx(fn))
}

// scribbledTx is fn run on a scribbling writer.
func scribbledTx(fn func(storage.Writer) error) func(storage.Writer) error {
	return func(w storage.Writer) error {
		sw := &scribWriter{scribReader{r: w}, w}
		defer sw.end()
		return fn(sw)
	}
}

// scribReader is a transaction's reader: what its Gets returned is
// scribbled when the transaction's function returns.
type scribReader struct {
	r    storage.Reader
	gets [][]byte
}

func (sr *scribReader) end() {
	for _, g := range sr.gets {
		scribble(g)
	}
}

func (sr *scribReader) Get(key []byte) ([]byte, error) {
	v, err := sr.r.Get(key)
	if err != nil {
		return v, err
	}
	c := own(v)
	sr.gets = append(sr.gets, c)
	return c, nil
}

func (sr *scribReader) Lend(key []byte, fn func([]byte) error) error {
	return sr.r.Lend(key, func(v []byte) error { return lendOwn(v, fn) })
}

func (sr *scribReader) GetMany(keys [][]byte, found func(int, []byte) error) error {
	return sr.r.GetMany(keys, func(i int, v []byte) error {
		return lendOwn(v, func(c []byte) error { return found(i, c) })
	})
}

func (sr *scribReader) Scan(start, end []byte, reverse bool) storage.Iterator {
	it := sr.r.Scan(start, end, reverse)
	si := &scribIter{it: it}
	if sk, ok := it.(storage.Skipper); ok {
		return &scribSkipper{si, sk}
	}
	return si
}

type scribWriter struct {
	scribReader
	w storage.Writer
}

func (sw *scribWriter) Set(key, value []byte) error         { return sw.w.Set(key, value) }
func (sw *scribWriter) Delete(key []byte) error             { return sw.w.Delete(key) }
func (sw *scribWriter) DeleteRange(start, end []byte) error { return sw.w.DeleteRange(start, end) }

// scribIter hands out copies of the current key and value, scribbled
// when the iterator moves or closes.
type scribIter struct {
	it         storage.Iterator
	key, value []byte
	loaded     bool
}

func (si *scribIter) release() {
	if si.loaded {
		checkUnmodified(si.key, si.it.Key())
		checkUnmodified(si.value, si.it.Value())
	}
	scribble(si.key)
	scribble(si.value)
	si.key, si.value, si.loaded = nil, nil, false
}

func (si *scribIter) load() {
	if !si.loaded {
		si.key, si.value, si.loaded = own(si.it.Key()), own(si.it.Value()), true
	}
}

func (si *scribIter) Next() bool {
	si.release()
	return si.it.Next()
}

func (si *scribIter) Key() []byte {
	si.load()
	return si.key
}

func (si *scribIter) Value() []byte {
	si.load()
	return si.value
}

func (si *scribIter) Err() error { return si.it.Err() }

func (si *scribIter) Close() error {
	si.release()
	return si.it.Close()
}

type scribSkipper struct {
	*scribIter
	sk storage.Skipper
}

func (ss *scribSkipper) SkipTo(key []byte) bool {
	ss.release()
	return ss.sk.SkipTo(key)
}
