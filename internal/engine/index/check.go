package index

import (
	"bytes"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Check verifies, in snapshot r, that t's index state and entries agree
// with its stored items (see the invariant on State), calling report
// with each problem, prefixed by label. Every stored item counts,
// visible or not: an expired item keeps its entries until it is purged.
// It reads the whole container: for tests, crash checks and tools.
func Check(r storage.Reader, t Target, label string, report func(string, ...any)) error {
	st, found, err := ReadState(r, t.RID)
	if err != nil {
		return err
	}
	if !found {
		report("%s: no index state", label)
		return nil
	}
	pol, err := st.compiled(t)
	if err != nil {
		return err
	}
	// want maps each expected entry to whether it must be present.
	want := map[string]bool{}
	prefix := keyspace.CollPrefix(keyspace.Doc, t.RID)
	base := keyspace.IndexPrefix(t.RID)
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	for it.Next() {
		_, doc, err := document.DecodeItem(it.Value())
		if err != nil {
			continue // the engine's item check reports it
		}
		suffix := it.Key()[len(prefix):]
		required := !st.building || (st.cursor != nil && bytes.Compare(suffix, st.cursor) <= 0)
		var ew entryWalker
		ew.collect(pol, doc)
		for _, e := range ew.sorted() {
			want[string(pol.appendEntryKey(slices.Clip(base), e, suffix))] = required
		}
	}
	it.Close()
	if err := it.Err(); err != nil {
		return err
	}
	it = r.Scan(base, keys.PrefixEnd(base), false)
	defer it.Close()
	for it.Next() {
		k := string(it.Key())
		if _, ok := want[k]; !ok {
			report("%s: stray index entry %q", label, k[len(base):])
			continue
		}
		delete(want, k)
	}
	if err := it.Err(); err != nil {
		return err
	}
	for k, required := range want {
		if required {
			report("%s: missing index entry %q", label, k[len(base):])
		}
	}
	return nil
}
