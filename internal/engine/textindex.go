package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/storage"
)

// A full-text ranking (ORDER BY RANK FullTextScore of a path of the
// container's fullTextPolicy and constant terms) is served from an
// inverted index of the path, in memory: each stored item's analyzed
// length and the items each term occurs in, how often. It is read from
// the store once per version of the container (its state's LSN) and
// kept while the container is unchanged; the items' headers in it say
// which are visible at the query's instant, so an item that has expired
// since counts in no statistic, purged or not. From it the engine
// counts the corpus statistics, scores the items that hold a term with
// query.BM25 (the score the executor computes), and hands the executor
// the items best first (textSource).
//
// The index is read from the items' full-text entries (the Txt
// keyspace), which the item's transaction writes and removes with it:
// its header, and for each policy path whether it holds text, its
// analyzed length and its terms with their counts. Reading them spares
// parsing and analyzing every document. A container whose entries do
// not cover its items (items written before its fullTextPolicy, or
// before a change of it, which drops every entry) is read from its
// documents instead, as is a path an entry was written without.

// textEntry is the full-text entry of a stored item (value as stored)
// under policy paths (sorted): the item's header, then per path its
// length, the analyzed length plus one (0: no text there), the number of
// terms and each term with its count, all uvarints.
func textEntry(value []byte, paths []string) []byte {
	out := append([]byte(nil), value[:document.HeaderLen]...)
	doc := value[document.HeaderLen:]
	counts := map[string]int32{}
	for _, path := range paths {
		out = binary.AppendUvarint(out, uint64(len(path)))
		out = append(out, path...)
		text, ok := query.TextAt(doc, path)
		if !ok {
			out = binary.AppendUvarint(out, 0)
			continue
		}
		words := query.Analyze(text)
		clear(counts)
		for _, w := range words {
			counts[w]++
		}
		out = binary.AppendUvarint(out, uint64(len(words))+1)
		out = binary.AppendUvarint(out, uint64(len(counts)))
		for _, w := range slices.Sorted(maps.Keys(counts)) {
			out = binary.AppendUvarint(out, uint64(len(w)))
			out = append(out, w...)
			out = binary.AppendUvarint(out, uint64(counts[w]))
		}
	}
	return out
}

// errTextEntry is a full-text entry that does not decode.
var errTextEntry = errors.New("engine: corrupt full-text entry")

// readTextEntry reads path's part of entry into a textDoc of the item at
// key and its terms' counts into counts. analyzed is false when the entry
// was written without path; ok is false when the item has no text there.
func readTextEntry(key, entry []byte, path string, counts map[string]int32) (d textDoc, ok, analyzed bool, err error) {
	if len(entry) < document.HeaderLen {
		return textDoc{}, false, false, errTextEntry
	}
	h, _, err := document.DecodeItem(entry[:document.HeaderLen])
	if err != nil {
		return textDoc{}, false, false, err
	}
	b := entry[document.HeaderLen:]
	next := func() (uint64, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return n, true
	}
	bytesOf := func(n uint64) ([]byte, bool) {
		if uint64(len(b)) < n {
			return nil, false
		}
		v := b[:n]
		b = b[n:]
		return v, true
	}
	for len(b) > 0 {
		n, ok1 := next()
		p, ok2 := bytesOf(n)
		words, ok3 := next()
		if !ok1 || !ok2 || !ok3 {
			return textDoc{}, false, false, errTextEntry
		}
		mine := string(p) == path
		if mine {
			clear(counts)
		}
		if words == 0 {
			if mine {
				return textDoc{}, false, true, nil
			}
			continue
		}
		terms, ok := next()
		if !ok {
			return textDoc{}, false, false, errTextEntry
		}
		for range terms {
			n, ok1 := next()
			w, ok2 := bytesOf(n)
			tf, ok3 := next()
			if !ok1 || !ok2 || !ok3 {
				return textDoc{}, false, false, errTextEntry
			}
			if mine {
				counts[string(w)] = int32(tf)
			}
		}
		if mine {
			return textDoc{key: bytes.Clone(key), h: h, words: int(words - 1)}, true, true, nil
		}
	}
	return textDoc{}, false, false, nil
}

// writeTextEntry stores the full-text entry of the item at key (value
// as stored), replacing its earlier one.
func writeTextEntry(w storage.Writer, c *container, key, value []byte) error {
	if c.text == nil {
		return nil
	}
	return w.Set(keyspace.TxtKey(c.rid, key), textEntry(value, c.text.SortedPaths()))
}

// deleteTextEntry removes the full-text entry of the item at key.
func deleteTextEntry(w storage.Writer, c *container, key []byte) error {
	if c.text == nil {
		return nil
	}
	return w.Delete(keyspace.TxtKey(c.rid, key))
}

// textIndex is the inverted index of one path of a container, as of
// the container version lsn. It was read whole at base; the items written
// and removed since (changesSince) are taken in by catchUp, which
// appends their new versions to docs, marks their old ones dead and
// keeps their postings apart, so that a later version shares the first
// one's arrays. When the container's item count does not add up (a
// removal the log no longer holds), the index is read whole again.
type textIndex struct {
	lsn, base version
	// items is the container's item count at lsn.
	items    int64
	docs     []textDoc
	dead     []bool
	postings map[string][]posting // of the docs read at base
	added    map[string][]posting // of the docs added since
	// at is the docs index of each item key at base; addedAt of those
	// added since. present says whether each key written or removed
	// since base is stored (with or without text); stored, every key
	// stored at base.
	at, addedAt map[string]int32
	present     map[string]bool
	stored      map[string]bool
}

// textDoc is an item with text at the path.
type textDoc struct {
	key   []byte
	h     document.ItemHeader
	words int
}

// posting is an occurrence of a term: the item (an index in docs) and
// how often.
type posting struct {
	doc int32
	tf  int32
}

// textIndexKey names a cached index.
type textIndexKey struct {
	rid  [8]byte
	path string
}

// maxCachedTextDocs bounds the items the cached indexes hold, together.
const maxCachedTextDocs = 1 << 20

// textIndexOf returns the index of c's path as of snapshot r: the cached
// one when c has not been written since it was read, else one read from
// r within m (every stored item, visible or not), cached when it fits.
func (e *Engine) textIndexOf(r storage.Reader, c *container, path string, m *workMeter) (*textIndex, error) {
	st, err := readContainerState(r, c)
	if err != nil {
		return nil, err
	}
	key := textIndexKey{c.rid, path}
	cached, _ := e.textIndexes.get(key)
	if cached != nil && cached.lsn.equal(st.lsns) {
		return cached, nil
	}
	var ix *textIndex
	if cached != nil && cached.lsn.behind(st.lsns) && !st.counting && cached.base.distance(st.lsns) <= uint64(len(cached.docs)/10+1) {
		ix, err = cached.catchUp(r, c, path, st, m)
		if err != nil {
			return nil, err
		}
	}
	if ix == nil {
		if ix, err = readTextIndex(r, c, path, st, m); err != nil {
			return nil, err
		}
	}
	e.textIndexes.put(key, ix, len(ix.docs))
	return ix, nil
}

// readTextIndex reads the index of c's path whole from snapshot r, whose
// container state is st, within m: from the items' full-text entries
// when there is one for every item, else from the documents.
func readTextIndex(r storage.Reader, c *container, path string, st containerState, m *workMeter) (*textIndex, error) {
	if !st.counting {
		ix, complete, err := readTextIndexFrom(r, c, path, st, m, keyspace.CollPrefix(keyspace.Txt, c.rid))
		if err != nil || complete {
			return ix, err
		}
	}
	ix, _, err := readTextIndexFrom(r, c, path, st, m, keyspace.CollPrefix(keyspace.Doc, c.rid))
	return ix, err
}

// readTextIndexFrom reads the index from the keyspace at prefix: the
// items' full-text entries or their documents. complete says whether
// it read one for each of the container's items.
func readTextIndexFrom(r storage.Reader, c *container, path string, st containerState, m *workMeter, prefix []byte) (ix *textIndex, complete bool, err error) {
	ix = &textIndex{lsn: st.lsns, base: st.lsns, items: st.items, postings: map[string][]posting{},
		at: map[string]int32{}, stored: map[string]bool{}}
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	counts := map[string]int32{}
	for it.Next() {
		if err := m.step(); err != nil {
			return nil, false, err
		}
		var d textDoc
		var ok bool
		key := it.Key()
		if prefix[0] == keyspace.Txt {
			key = keyspace.DocKeyOfTxt(key)
			d, ok, err = textDocAt(r, c, key, it.Value(), path, counts)
		} else {
			d, ok, err = textDocOf(key, it.Value(), path, counts)
		}
		ix.stored[string(key)] = true
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		i := int32(len(ix.docs))
		ix.docs = append(ix.docs, d)
		ix.at[string(d.key)] = i
		for w, n := range counts {
			ix.postings[w] = append(ix.postings[w], posting{doc: i, tf: n})
		}
	}
	ix.dead = make([]bool, len(ix.docs))
	return ix, int64(len(ix.stored)) == st.items, it.Err()
}

// textDocAt is the item at key as the index of path holds it, and its
// terms' counts in counts; ok is false when it has no text at path. It
// reads the item's full-text entry (entry, or from r when nil), or its
// document when the entry is missing or was written without path.
func textDocAt(r storage.Reader, c *container, key, entry []byte, path string, counts map[string]int32) (d textDoc, ok bool, err error) {
	if entry == nil {
		if entry, err = r.Get(keyspace.TxtKey(c.rid, key)); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return textDoc{}, false, err
		}
	}
	if entry != nil {
		d, ok, analyzed, err := readTextEntry(key, entry, path, counts)
		if err != nil || analyzed {
			return d, ok, err
		}
	}
	value, err := r.Get(key)
	if err != nil {
		return textDoc{}, false, err // an item with an entry, or named by the latest-version index, is stored
	}
	return textDocOf(key, value, path, counts)
}

// textDocOf is the stored item at key (value as stored) as the index
// holds it, and its words' counts in counts; ok is false when it has no
// text at path.
func textDocOf(key, value []byte, path string, counts map[string]int32) (d textDoc, ok bool, err error) {
	h, doc, err := document.DecodeItem(value)
	if err != nil {
		return textDoc{}, false, err
	}
	text, ok := query.TextAt(doc, path)
	if !ok {
		return textDoc{}, false, nil
	}
	words := query.Analyze(text)
	clear(counts)
	for _, w := range words {
		counts[w]++
	}
	return textDoc{key: bytes.Clone(key), h: h, words: len(words)}, true, nil
}

// catchUp is ix with the items written since it up to st: nil when the
// container's item count says an item was deleted meanwhile, which only
// reading the index whole can take in. It reads within m.
func (ix *textIndex) catchUp(r storage.Reader, c *container, path string, st containerState, m *workMeter) (*textIndex, error) {
	next := *ix
	next.lsn, next.items = st.lsns, st.items
	next.docs = slices.Clip(ix.docs)
	next.dead = slices.Clone(ix.dead)
	next.added = maps.Clone(ix.added)
	next.addedAt = maps.Clone(ix.addedAt)
	next.present = maps.Clone(ix.present)
	if next.added == nil {
		next.added, next.addedAt, next.present = map[string][]posting{}, map[string]int32{}, map[string]bool{}
	}
	items := ix.items
	counts := map[string]int32{}
	err := changesBetween(r, c, ix.lsn, st.lsns, m, func(key []byte, gone bool) error {
		was, ok := next.present[string(key)]
		if !ok {
			was = ix.stored[string(key)]
		}
		switch {
		case was && gone:
			items--
		case !was && !gone:
			items++
		}
		next.present[string(key)] = !gone
		// Its earlier version, if the index holds one, is dead.
		if i, ok := next.addedAt[string(key)]; ok {
			next.dead[i] = true
		} else if i, ok := ix.at[string(key)]; ok {
			next.dead[i] = true
		}
		delete(next.addedAt, string(key))
		if gone {
			return nil
		}
		d, ok, err := textDocAt(r, c, key, nil, path, counts)
		if err != nil || !ok {
			return err
		}
		i := int32(len(next.docs))
		next.docs = append(next.docs, d)
		next.dead = append(next.dead, false)
		next.addedAt[string(key)] = i
		for w, n := range counts {
			next.added[w] = append(slices.Clip(next.added[w]), posting{doc: i, tf: n})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if items != st.items {
		return nil, nil // a removal the log no longer holds: read the index whole
	}
	return &next, nil
}

// stats counts the corpus statistics of the index over the items visible
// to items, for terms: what FullTextScore ranks by. live says which docs
// count.
func (ix *textIndex) stats(items itemReader, terms []string) (*query.TextStats, []bool) {
	live := make([]bool, len(ix.docs))
	st := &query.TextStats{DocFreq: map[string]int{}}
	for i, d := range ix.docs {
		if !ix.dead[i] && items.visibleAt(d.key, d.h) {
			live[i] = true
			st.Docs++
			st.Words += d.words
		}
	}
	for _, t := range terms {
		for _, ps := range ix.termPostings(t) {
			for _, p := range ps {
				if live[p.doc] {
					st.DocFreq[t]++
				}
			}
		}
	}
	return st, live
}

// termPostings are a term's postings: those read at base, and those
// added since.
func (ix *textIndex) termPostings(t string) [2][]posting {
	return [2][]posting{ix.postings[t], ix.added[t]}
}

// textSource is a query.OrderedSource for a full-text ranking over
// src's scope: the visible items that hold a term, best first, a run per
// score, then every other item.
type textSource struct {
	*docSource
	order query.FullTextQuery
}

// textSourceFor returns the source serving plan over src from the
// container's full-text index, with the corpus statistics it ranks by
// set on src; nil when the plan is not such a ranking.
func textSourceFor(plan *query.Plan, src *docSource) *textSource {
	if src.c.text == nil {
		return nil
	}
	fo, ok := plan.FullTextOrder()
	if !ok || !src.c.text.Covers(fo.Path) {
		return nil
	}
	return &textSource{docSource: src, order: fo}
}

// Descending implements query.OrderedSource: a ranking is highest first,
// and the executor breaks its ties by descending key.
func (s *textSource) Descending() bool { return true }

type scoredDoc struct {
	key   []byte
	score float64
}

// ScanOrdered implements query.OrderedSource.
func (s *textSource) ScanOrdered(after []byte, yield func(run []byte, sorted bool, key, doc []byte) bool) error {
	return s.store.View(s.ctx, func(r storage.Reader) error {
		items := s.items(r)
		ix, err := s.e.textIndexOf(r, s.c, s.order.Path, s.meter("reading the container's full-text index of "+s.order.Path))
		if err != nil {
			return err
		}
		st, visible := ix.stats(items, s.order.Terms)
		s.textStats = map[string]*query.TextStats{s.order.Path: st}
		// Score the visible items of the scope that hold a term.
		nt := len(s.order.Terms)
		tfs := make([]int32, nt*len(ix.docs))
		var touched []int32
		for i, t := range s.order.Terms {
			for _, ps := range ix.termPostings(t) {
				for _, p := range ps {
					if !visible[p.doc] || !bytes.HasPrefix(ix.docs[p.doc].key, s.prefix) {
						continue
					}
					row := tfs[int(p.doc)*nt : int(p.doc)*nt+nt]
					if !slices.ContainsFunc(row, func(n int32) bool { return n != 0 }) {
						touched = append(touched, p.doc) // its first term
					}
					row[i] = p.tf
				}
			}
		}
		scored := make([]scoredDoc, 0, len(touched))
		tf := make([]int, nt)
		for _, d := range touched {
			for i, n := range tfs[int(d)*nt : int(d)*nt+nt] {
				tf[i] = int(n)
			}
			scored = append(scored, scoredDoc{key: ix.docs[d].key, score: query.BM25(tf, ix.docs[d].words, s.order.Terms, st)})
		}
		// Best first, ties by descending key, as the executor breaks them.
		h := newOrderedHeap(scored, func(a, b scoredDoc) bool {
			if a.score != b.score {
				return a.score > b.score
			}
			return bytes.Compare(a.key, b.key) > 0
		})
		run, prev := uint64(0), math.NaN()
		for d, ok := h.next(); ok; d, ok = h.next() {
			if d.score != prev {
				run++
				prev = d.score
			}
			stop := false
			err := items.lend(d.key, func(it storedItem, ok bool) error {
				if ok {
					stop = !yield(binary.BigEndian.AppendUint64(nil, run), false, d.key, it.doc)
				}
				return nil
			})
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if stop {
				return nil
			}
		}
		// Every other item scores 0: one last run.
		seen := make(map[string]bool, len(touched))
		for _, d := range touched {
			seen[string(ix.docs[d].key)] = true
		}
		last := binary.BigEndian.AppendUint64(nil, run+1)
		return items.scan(s.prefix, keys.PrefixEnd(s.prefix), false, func(key []byte, it storedItem) bool {
			return seen[string(key)] || yield(last, false, key, it.doc)
		})
	})
}

// textFilterSource is a query.Source over the items of src's scope that
// can pass a full-text filter of the WHERE (FullTextContains and its
// All and Any forms on a policy path): those the path's index holds the
// filter's terms for, in key order. The executor still evaluates the
// filter on each, which checks the phrase's word order.
type textFilterSource struct {
	*docSource
	filter query.FullTextFilter
}

// textFilterSourceFor returns the source serving plan over src's
// scope from the container's full-text index; nil when the WHERE has no
// such filter.
func textFilterSourceFor(plan *query.Plan, src *docSource) *textFilterSource {
	if src.c.text == nil {
		return nil
	}
	f, ok := plan.FullTextFilter(src.c.text.Covers)
	if !ok {
		return nil
	}
	return &textFilterSource{docSource: src, filter: f}
}

func (s *textFilterSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	if after != nil && !bytes.HasPrefix(after, s.prefix) {
		return query.ErrBadContinuation
	}
	return s.store.View(s.ctx, func(r storage.Reader) error {
		m := s.meter("reading the container's full-text index of " + s.filter.Path)
		ix, err := s.e.textIndexOf(r, s.c, s.filter.Path, m)
		if err != nil {
			return err
		}
		keys, err := ix.candidates(s.filter, s.prefix, m)
		if err != nil {
			return err
		}
		items := s.items(r)
		for _, key := range keys {
			if after != nil && bytes.Compare(key, after) <= 0 {
				continue
			}
			stop := false
			err := items.lend(key, func(it storedItem, visible bool) error {
				if visible {
					stop = !yield(key, it.doc)
				}
				return nil
			})
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if stop {
				return nil
			}
		}
		return nil
	})
}

// candidates are the keys, in order, of the live items in the scope of
// prefix that hold every term of every phrase of f (with f.Any, of one
// phrase), walking the postings within m.
func (ix *textIndex) candidates(f query.FullTextFilter, prefix []byte, m *workMeter) ([][]byte, error) {
	// holding counts, per item, the terms of a phrase it holds.
	holding := func(terms []string) (map[int32]bool, error) {
		terms = slices.Compact(slices.Sorted(slices.Values(terms)))
		if len(terms) == 0 {
			return nil, nil
		}
		count := map[int32]int{}
		for _, t := range terms {
			for _, ps := range ix.termPostings(t) {
				for _, p := range ps {
					if err := m.step(); err != nil {
						return nil, err
					}
					if !ix.dead[p.doc] {
						count[p.doc]++
					}
				}
			}
		}
		out := map[int32]bool{}
		for d, n := range count {
			if n == len(terms) {
				out[d] = true
			}
		}
		return out, nil
	}
	var docs map[int32]bool
	if f.Any {
		docs = map[int32]bool{}
		for _, ph := range f.Phrases {
			held, err := holding(ph)
			if err != nil {
				return nil, err
			}
			maps.Copy(docs, held)
		}
	} else {
		var all []string
		for _, ph := range f.Phrases {
			if len(ph) == 0 {
				return nil, nil // a phrase of no terms matches nothing
			}
			all = append(all, ph...)
		}
		var err error
		if docs, err = holding(all); err != nil {
			return nil, err
		}
	}
	out := make([][]byte, 0, len(docs))
	for d := range docs {
		if key := ix.docs[d].key; bytes.HasPrefix(key, prefix) {
			out = append(out, key)
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return out, nil
}
