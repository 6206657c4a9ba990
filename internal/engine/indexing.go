package engine

import (
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

// The engine's side of the secondary indexes: what the index subsystem
// is handed of a container, of a query's reads and of an item write.

// indexTarget returns what the index subsystem works on of c.
func (c *container) indexTarget() indexTarget {
	return indexTarget{rid: c.rid, pk: c.pk, policy: c.index}
}

// indexPut moves the index entries of the item at <pkEnc> <id> to doc,
// its new version, from old, the version it replaces when exists (an
// expired one was removed with its entries already).
// REQUIRES: called inside the Update that writes the item.
func indexPut(w storage.Writer, c *container, pkEnc []byte, id string, old storedItem, exists bool, doc []byte) error {
	var prev []byte
	if exists {
		prev = old.doc
	}
	return indexReplace(w, c.indexTarget(), pkEnc, id, prev, doc)
}

// indexQuery is what the index sources serving a query over s read: the
// items s sees, at its instant.
func (s *docSource) indexQuery() idxQuery {
	return idxQuery{
		store:  s.e.store,
		clock:  s.e.real,
		target: s.c.indexTarget(),
		scope:  s.prefix[len(keyspace.CollPrefix(keyspace.Doc, s.c.rid)):],
		items:  func(r storage.Reader) idxItems { return indexItems{s.items(r)} },
	}
}

// indexItems is an itemReader as the index sources read it: documents
// only, and only the visible ones.
type indexItems struct{ ir itemReader }

func (s indexItems) Get(key []byte) ([]byte, bool, error) {
	it, ok, err := s.ir.get(key)
	return it.doc, ok, err
}

func (s indexItems) Scan(start, end []byte, reverse bool, yield func(key, doc []byte) bool) error {
	return s.ir.scan(start, end, reverse, func(key []byte, it storedItem) bool { return yield(key, it.doc) })
}
