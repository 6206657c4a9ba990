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

// textIndex is the inverted index of one path of a container, as of
// the container state lsn. It was read whole at base; the items written
// since (upserts: the latest-version index names them) are added by
// catchUp, which appends their new versions to docs, marks their old
// ones dead and keeps their postings apart, so that a later version
// shares the first one's arrays. A delete is not in the latest-version
// index: the container's item count, which no longer adds up, makes the
// index be read whole again.
type textIndex struct {
	lsn, base uint64
	// items is the container's item count at lsn.
	items    int64
	docs     []textDoc
	dead     []bool
	postings map[string][]posting // of the docs read at base
	added    map[string][]posting // of the docs added since
	// at is the docs index of each item key at base; addedAt of those
	// added since. present says whether each key written since base is
	// stored (with or without text); stored, every key stored at base.
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
	st, err := readCollState(r, c.rid)
	if err != nil {
		return nil, err
	}
	key := textIndexKey{c.rid, path}
	cached, _ := e.textIndexes.get(key)
	if cached != nil && cached.lsn == st.lsn {
		return cached, nil
	}
	var ix *textIndex
	if cached != nil && cached.lsn < st.lsn && !st.counting && st.lsn-cached.base <= uint64(len(cached.docs)/10+1) {
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
// container state is st, within m.
func readTextIndex(r storage.Reader, c *container, path string, st collState, m *workMeter) (*textIndex, error) {
	ix := &textIndex{lsn: st.lsn, base: st.lsn, items: st.items, postings: map[string][]posting{},
		at: map[string]int32{}, stored: map[string]bool{}}
	prefix := keyspace.CollPrefix(keyspace.Doc, c.rid)
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	counts := map[string]int32{}
	for it.Next() {
		if err := m.step(); err != nil {
			return nil, err
		}
		ix.stored[string(it.Key())] = true
		d, ok, err := textDocOf(it.Key(), it.Value(), path, counts)
		if err != nil {
			return nil, err
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
	return ix, it.Err()
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
func (ix *textIndex) catchUp(r storage.Reader, c *container, path string, st collState, m *workMeter) (*textIndex, error) {
	next := *ix
	next.lsn, next.items = st.lsn, st.items
	next.docs = slices.Clip(ix.docs)
	next.dead = slices.Clone(ix.dead)
	next.added = maps.Clone(ix.added)
	next.addedAt = maps.Clone(ix.addedAt)
	next.present = maps.Clone(ix.present)
	if next.added == nil {
		next.added, next.addedAt, next.present = map[string][]posting{}, map[string]int32{}, map[string]bool{}
	}
	items := ix.items
	docPrefix := keyspace.CollPrefix(keyspace.Doc, c.rid)
	it := r.Scan(keyspace.LatestKey(c.rid, ix.lsn+1), keyspace.LatestKey(c.rid, st.lsn+1), false)
	defer it.Close()
	counts := map[string]int32{}
	for it.Next() {
		if err := m.step(); err != nil {
			return nil, err
		}
		key := append(slices.Clip(docPrefix), it.Value()...)
		value, err := r.Get(key)
		if err != nil {
			return nil, err // an item the latest-version index names is stored
		}
		was, ok := ix.present[string(key)]
		if !ok {
			was = ix.stored[string(key)]
		}
		if !was {
			items++
		}
		next.present[string(key)] = true
		// Its earlier version, if the index holds one, is dead.
		if i, ok := next.addedAt[string(key)]; ok {
			next.dead[i] = true
		} else if i, ok := ix.at[string(key)]; ok {
			next.dead[i] = true
		}
		delete(next.addedAt, string(key))
		d, ok, err := textDocOf(key, value, path, counts)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		i := int32(len(next.docs))
		next.docs = append(next.docs, d)
		next.dead = append(next.dead, false)
		next.addedAt[string(key)] = i
		for w, n := range counts {
			next.added[w] = append(slices.Clip(next.added[w]), posting{doc: i, tf: n})
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if items != st.items {
		return nil, nil // an item was deleted: read the index whole
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
