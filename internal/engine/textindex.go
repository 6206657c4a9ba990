package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"

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

// textIndex is the inverted index of one path of a container.
type textIndex struct {
	lsn      uint64
	docs     []textDoc
	postings map[string][]posting
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
// r (every stored item, visible or not), cached when it fits.
func (e *Engine) textIndexOf(r storage.Reader, c *container, path string) (*textIndex, error) {
	st, err := readCollState(r, c.rid)
	if err != nil {
		return nil, err
	}
	key := textIndexKey{c.rid, path}
	cached, _ := e.textIndexes.get(key)
	if cached != nil && cached.lsn == st.lsn {
		return cached, nil
	}
	ix := &textIndex{lsn: st.lsn, postings: map[string][]posting{}}
	prefix := keyspace.CollPrefix(keyspace.Doc, c.rid)
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	counts := map[string]int32{}
	for it.Next() {
		h, doc, err := document.DecodeItem(it.Value())
		if err != nil {
			return nil, err
		}
		text, ok := query.TextAt(doc, path)
		if !ok {
			continue
		}
		words := query.Analyze(text)
		clear(counts)
		for _, w := range words {
			counts[w]++
		}
		i := int32(len(ix.docs))
		ix.docs = append(ix.docs, textDoc{key: bytes.Clone(it.Key()), h: h, words: len(words)})
		for w, n := range counts {
			ix.postings[w] = append(ix.postings[w], posting{doc: i, tf: n})
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	e.textIndexes.put(key, ix, len(ix.docs))
	return ix, nil
}

// stats counts the corpus statistics of the index over the items visible
// to items, for terms: what FullTextScore ranks by.
func (ix *textIndex) stats(items itemReader, terms []string) (*query.TextStats, []bool) {
	visible := make([]bool, len(ix.docs))
	st := &query.TextStats{DocFreq: map[string]int{}}
	for i, d := range ix.docs {
		if items.visibleAt(d.key, d.h) {
			visible[i] = true
			st.Docs++
			st.Words += d.words
		}
	}
	for _, t := range terms {
		for _, p := range ix.postings[t] {
			if visible[p.doc] {
				st.DocFreq[t]++
			}
		}
	}
	return st, visible
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
		ix, err := s.e.textIndexOf(r, s.c, s.order.Path)
		if err != nil {
			return err
		}
		st, visible := ix.stats(items, s.order.Terms)
		s.textStats = map[string]*query.TextStats{s.order.Path: st}
		// Score the visible items of the scope that hold a term.
		tfs := map[int32][]int{}
		for i, t := range s.order.Terms {
			for _, p := range ix.postings[t] {
				if !visible[p.doc] || !bytes.HasPrefix(ix.docs[p.doc].key, s.prefix) {
					continue
				}
				if tfs[p.doc] == nil {
					tfs[p.doc] = make([]int, len(s.order.Terms))
				}
				tfs[p.doc][i] = int(p.tf)
			}
		}
		scored := make([]scoredDoc, 0, len(tfs))
		for d, tf := range tfs {
			scored = append(scored, scoredDoc{key: ix.docs[d].key, score: query.BM25(tf, ix.docs[d].words, s.order.Terms, st)})
		}
		seen := make(map[string]bool, len(scored))
		for _, d := range scored {
			seen[string(d.key)] = true
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
		last := binary.BigEndian.AppendUint64(nil, run+1)
		return items.scan(s.prefix, keys.PrefixEnd(s.prefix), false, func(key []byte, it storedItem) bool {
			return seen[string(key)] || yield(last, false, key, it.doc)
		})
	})
}
