package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/unique"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// CheckConsistency verifies, in one snapshot, that every container's
// keyspaces agree: each stored item has exactly its expiry-index entry
// and its latest-version entry, no entry lacks its item, the container
// state is ahead of every item's LSN and _ts and its usage counters are
// the stored items' count and document bytes, each item's vectors are
// stored apart exactly as its document holds them, and the secondary index
// holds exactly the entries of the stored items under the index state's
// policy (while a rebuild runs: all of them up to its cursor, a subset
// after it; see package index). It reads
// everything: for tests, crash checks and tools, not for serving.
func (e *Engine) CheckConsistency(ctx context.Context) error {
	var problems []error
	report := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	err := e.store.View(ctx, func(r storage.Reader) error {
		for _, db := range e.catalogSnapshot().dbs {
			for _, c := range db.colls {
				if err := checkContainer(r, c, report); err != nil {
					return err
				}
				if err := index.Check(r, c.indexTarget(), c.label(), report); err != nil {
					return err
				}
				if err := checkVectors(r, c, report); err != nil {
					return err
				}
				if err := checkTextEntries(r, c, report); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(problems...)
}

func checkContainer(r storage.Reader, c *container, report func(string, ...any)) error {
	sts := map[int]collState{}
	for _, p := range c.layout.ids() {
		st, err := readPartitionState(r, c.rid, p)
		if err != nil {
			return err
		}
		if keyspace.LSNPartition(st.lsn) != p || keyspace.LSNPartition(st.seq) != p {
			report("%s: partition %d's state has lsn %d and seq %d of another partition", c.label(), p, st.lsn, st.seq)
		}
		sts[p] = st
	}
	prefix := keyspace.CollPrefix(keyspace.Doc, c.rid)
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	docs, expiring := 0, 0
	// What the partitions' usage counters should hold.
	items, size := map[int]int64{}, map[int]int64{}
	for it.Next() {
		docs++
		key := it.Key()
		h, doc, err := document.DecodeItem(it.Value())
		if err != nil {
			report("%s: item %x: %v", c.label(), key, err)
			continue
		}
		p, err := c.partitionOfKey(key[len(prefix):])
		if err != nil {
			report("%s: item key %x: %v", c.label(), key, err)
			continue
		}
		st := sts[p]
		if st.counts(key) {
			items[p]++
			size[p] += int64(len(doc))
		}
		if q := keyspace.LSNPartition(h.LSN); !c.writtenBy(p, q) {
			report("%s: item %x of partition %d has lsn %d of partition %d", c.label(), key, p, h.LSN, q)
		}
		pk, rest, err := document.DecodePK(key[len(prefix):], len(c.pk.Paths))
		if err != nil {
			report("%s: item key %x: %v", c.label(), key, err)
			continue
		}
		id, _, err := keys.DecodeBytes(rest)
		if err != nil {
			report("%s: item key %x: %v", c.label(), key, err)
			continue
		}
		if h.LSN > st.lsn || h.Ts > st.lastTs {
			report("%s: item %q has lsn %d, _ts %d beyond the container's %d, %d", c.label(), id, h.LSN, h.Ts, st.lsn, st.lastTs)
		}
		if k := itemExpiryKey(c, h, pk.Encode(nil), string(id)); k != nil {
			expiring++
			if _, err := r.Get(k); err != nil {
				report("%s: item %q lacks its expiry entry: %v", c.label(), id, err)
			}
		}
		if _, err := r.Get(keyspace.LatestKey(c.rid, h.LSN)); err != nil {
			report("%s: item %q lacks its latest-version entry at lsn %d: %v", c.label(), id, h.LSN, err)
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	for p, st := range sts {
		if items[p] != st.items || size[p] != st.bytes {
			report("%s: partition %d's state counts %d items of %d bytes; %d items of %d bytes are stored (counting %v, cursor %x)", c.label(), p, st.items, st.bytes, items[p], size[p], st.counting, st.cursor)
		}
	}
	entries := 0
	for _, space := range []byte{keyspace.ExpOwn, keyspace.ExpTs} {
		n, err := countKeys(r, keyspace.CollPrefix(space, c.rid), -1)
		if err != nil {
			return err
		}
		entries += n
	}
	if entries != expiring {
		report("%s: %d expiry entries for %d expiring items", c.label(), entries, expiring)
	}
	latest, err := countKeys(r, keyspace.CollPrefix(keyspace.Latest, c.rid), -1)
	if err != nil {
		return err
	}
	if latest != docs {
		report("%s: %d latest-version entries for %d items", c.label(), latest, docs)
	}
	return checkUnique(r, c, report)
}

// checkUnique verifies that every unique-key entry is held by a stored
// item whose values it is. (A stored item may lack an entry: once it has
// expired, another item may take its values over and then release them.)
func checkUnique(r storage.Reader, c *container, report func(string, ...any)) error {
	prefix := keyspace.CollPrefix(keyspace.Unique, c.rid)
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	for it.Next() {
		key, holder := it.Key(), string(it.Value())
		if len(key) <= len(prefix) || int(key[len(prefix)]) >= len(c.unique.Keys) {
			report("%s: unique entry %x of no unique key", c.label(), key)
			continue
		}
		pk, _, err := document.DecodePK(key[len(prefix)+1:], len(c.pk.Paths))
		if err != nil {
			report("%s: unique entry %x: %v", c.label(), key, err)
			continue
		}
		pkEnc := pk.Encode(nil)
		v, err := r.Get(keyspace.DocKey(c.rid, pkEnc, holder))
		if err != nil {
			report("%s: unique entry %x is held by %q, which is not stored: %v", c.label(), key, holder, err)
			continue
		}
		_, doc, err := document.DecodeItem(v)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(unique.Entries(nil, c.unique, c.rid, pkEnc, doc), func(k []byte) bool { return bytes.Equal(k, key) }) {
			report("%s: unique entry %x is held by %q, whose values differ", c.label(), key, holder)
		}
	}
	return it.Err()
}

// countKeys counts the keys under prefix, up to limit (-1: all).
func countKeys(r storage.Reader, prefix []byte, limit int) (int, error) {
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	n := 0
	for n != limit && it.Next() {
		n++
	}
	return n, it.Err()
}

// checkTextEntries reports full-text entries (textindex.go) that differ
// from what their items hold, and entries of items that are gone. An
// item may lack one: written before the container's fullTextPolicy or
// a change of it.
func checkTextEntries(r storage.Reader, c *container, report func(string, ...any)) error {
	if c.text == nil {
		return nil
	}
	p := keyspace.CollPrefix(keyspace.Txt, c.rid)
	it := r.Scan(p, keys.PrefixEnd(p), false)
	defer it.Close()
	for it.Next() {
		key := keyspace.DocKeyOfTxt(it.Key())
		value, err := r.Get(key)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			report("%s: a full-text entry for item %q, which is gone", c.label(), key)
		case err != nil:
			return err
		case !bytes.Equal(it.Value(), textEntry(value, c.text.SortedPaths())):
			report("%s: the full-text entry of item %q differs from its document's", c.label(), key)
		}
	}
	return it.Err()
}

// checkVectors reports vectors kept apart (vectors.go) that differ from
// those their items hold, and vectors of items that are gone.
func checkVectors(r storage.Reader, c *container, report func(string, ...any)) error {
	if c.vectors == nil {
		return nil
	}
	for i, e := range c.vectors.Embeddings {
		want := map[string]string{}
		docs := keyspace.CollPrefix(keyspace.Doc, c.rid)
		it := r.Scan(docs, keys.PrefixEnd(docs), false)
		for it.Next() {
			_, doc, err := document.DecodeItem(it.Value())
			if err != nil {
				it.Close()
				return err
			}
			if v := vectorAt(doc, e.Path, e.Dimensions); v != nil {
				want[string(it.Key())] = fmt.Sprint(v)
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
		p := keyspace.VecPrefix(c.rid, byte(i), docs)
		vit := r.Scan(p, keys.PrefixEnd(p), false)
		for vit.Next() {
			key := string(keyspace.DocKeyOfVec(vit.Key()))
			b := vit.Value()
			got := make([]float32, len(b)/4)
			for j := range got {
				got[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
			}
			switch w, ok := want[key]; {
			case !ok:
				report("%s: a vector at %s for item %q, which holds none", c.label(), e.Path, key)
			case w != fmt.Sprint(got):
				report("%s: the vector at %s of item %q differs from its document's", c.label(), e.Path, key)
			}
			delete(want, key)
		}
		if err := vit.Close(); err != nil {
			return err
		}
		for key := range want {
			report("%s: item %q has a vector at %s that is not kept apart", c.label(), key, e.Path)
		}
	}
	return nil
}
