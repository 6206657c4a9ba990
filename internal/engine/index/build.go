package index

import (
	"slices"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Batch limits: a batch is one transaction, holding the store's writer
// while it runs, so it is kept short. BatchDocs is how many documents a
// batch indexes unless the builder asks for fewer; batchBytes caps their
// total size.
const (
	BatchDocs  = 256
	batchBytes = 4 << 20
)

// BuildBatch indexes the next documents of a building container: it
// reads the state (and stops if the container is not building), indexes
// up to max documents after the cursor under the state's policy, and
// moves the cursor past them, or marks the index ready after the last.
// more reports that documents remain.
// REQUIRES: called inside an Update, which is the batch.
func BuildBatch(w storage.Writer, t Target, max int) (more bool, err error) {
	type item struct{ suffix, doc []byte }
	st, found, err := ReadState(w, t.RID)
	if err != nil || !found || !st.building {
		return false, err
	}
	prefix := keyspace.CollPrefix(keyspace.Doc, t.RID)
	start := prefix
	if st.cursor != nil {
		start = append(append(slices.Clip(prefix), st.cursor...), 0)
	}
	// Read the batch first: the iterator is closed before writing.
	var items []item
	size := 0
	it := w.Scan(start, keys.PrefixEnd(prefix), false)
	for it.Next() {
		if len(items) == max || size >= batchBytes {
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
		_, rest, err := document.DecodePK(it.suffix, len(t.PK.Paths))
		if err != nil {
			return false, err
		}
		id, _, err := keys.DecodeBytes(rest)
		if err != nil {
			return false, err
		}
		pkEnc := it.suffix[:len(it.suffix)-len(rest)]
		// Under the state's policy: add reads it from w too.
		if err := add(w, t, pkEnc, string(id), it.doc); err != nil {
			return false, err
		}
	}
	if more {
		st.cursor = items[len(items)-1].suffix
		st.indexed += uint64(len(items))
	} else {
		st.building, st.cursor, st.indexed = false, nil, 0
	}
	return more, w.Set(keyspace.IndexStateKey(t.RID), st.encode())
}
