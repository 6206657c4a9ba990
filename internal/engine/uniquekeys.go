package engine

import (
	"bytes"
	"errors"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/unique"
	"github.com/ebbdb/ebb/internal/storage"
)

// Unique keys (package unique) are enforced in the item's own storage
// transaction: a write claims the entry of each unique key for its
// values, and fails with 409 if another visible item holds it. An entry
// whose holder has expired is taken over, since an expired item is
// invisible and so no longer holds its values; the purger, deleting that
// item later, releases only entries still held by it. On a shared store
// two nodes claiming the same entry conflict in the serializable
// transaction, and the one retried then finds the entry held.

// uniqueClaim is what a write changes in the unique entries: the entries
// of the version it replaces and of the one it writes, in key order.
type uniqueClaim struct {
	id         string
	prev, next [][]byte
}

func (u uniqueClaim) changed(i int) bool {
	return i >= len(u.prev) || !bytes.Equal(u.prev[i], u.next[i])
}

// checkUnique checks, before the write stores anything, that no other
// visible item holds the unique values of body, the item id in the
// logical partition pkEnc that replaces old (when exists).
func (t *itemTx) checkUnique(pkEnc []byte, id string, old storedItem, exists bool, body []byte) (uniqueClaim, error) {
	c := t.c
	u := uniqueClaim{id: id}
	if c.unique.None() {
		return u, nil
	}
	if exists {
		u.prev = unique.Entries(nil, c.unique, c.rid, pkEnc, old.doc)
	}
	u.next = unique.Entries(nil, c.unique, c.rid, pkEnc, body)
	for i, k := range u.next {
		if !u.changed(i) {
			continue
		}
		holder, err := t.w.Get(k)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			continue
		case err != nil:
			return u, err
		case string(holder) == id:
			continue
		}
		_, held, err := t.items.get(keyspace.DocKey(c.rid, pkEnc, string(holder)))
		if err != nil {
			return u, err
		}
		if held {
			return u, unique.ErrViolation
		}
	}
	return u, nil
}

// claim makes the write the holder of its entries and releases those of
// the version it replaced.
func (u uniqueClaim) claim(w storage.Writer) error {
	for i, k := range u.prev {
		if u.changed(i) {
			if err := releaseUnique(w, k, u.id); err != nil {
				return err
			}
		}
	}
	for i, k := range u.next {
		if u.changed(i) {
			if err := w.Set(k, []byte(u.id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseUniqueOf releases the unique entries that the deleted item id
// (document doc, partition pkEnc) holds.
func releaseUniqueOf(w storage.Writer, c *container, pkEnc []byte, id string, doc []byte) error {
	if c.unique.None() {
		return nil
	}
	for _, k := range unique.Entries(nil, c.unique, c.rid, pkEnc, doc) {
		if err := releaseUnique(w, k, id); err != nil {
			return err
		}
	}
	return nil
}

// releaseUnique deletes entry k if id still holds it: another item may
// have taken it over after id expired.
func releaseUnique(w storage.Writer, k []byte, id string) error {
	holder, err := w.Get(k)
	if errors.Is(err, storage.ErrNotFound) || err == nil && string(holder) != id {
		return nil
	}
	if err != nil {
		return err
	}
	return w.Delete(k)
}
