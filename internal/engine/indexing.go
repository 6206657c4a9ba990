package engine

import (
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/storage"
)

// The engine's side of the secondary indexes (package index): what the
// index package is handed of a container, of an item write and of a
// query's reads. The builder's loop is in indexbuild.go.

// indexTarget returns what the index package works on of c.
func (c *container) indexTarget() index.Target {
	return index.Target{RID: c.rid, PK: c.pk, Policy: c.index}
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
	return index.Replace(w, c.indexTarget(), pkEnc, id, prev, doc)
}

// indexQuery is what the index sources serving a query over s read: the
// items s sees, at its instant.
func (s *docSource) indexQuery() index.Query {
	return index.Query{
		Store:  s.store,
		Clock:  s.e.real,
		Target: s.c.indexTarget(),
		Scope:  s.prefix[docPrefixLen:],
		Items:  func(r storage.Reader) index.Items { return indexItems{s.items(r)} },
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

// splitToken decodes a continuation header into the query token and,
// for an index plan's token, its marker and the policy fingerprint it
// was issued under (index.SplitToken; kind 0 for a scan's token or
// none).
func splitToken(cont string) (tok []byte, kind byte, fp uint64, err error) {
	raw, err := decodeToken(cont)
	if err != nil {
		return nil, 0, 0, err
	}
	tok, kind, fp, err = index.SplitToken(raw)
	if err != nil {
		return nil, 0, 0, queryError(err)
	}
	return tok, kind, fp, nil
}
