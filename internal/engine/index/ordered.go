package index

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/storage"
)

// ORDER BY served from an index.
//
// An ORDER BY whose keys are all paths of the document (query.OrderKeys)
// reads its documents in order from an index instead of scanning them
// all through a heap, and each page stops one row after the page is
// full; the next page seeks straight to where it stopped.
//
// The index is a composite index whose paths are the ORDER BY paths, in
// order, with the same orders or all the opposite ones (walked
// backwards); or else the range index of the first key's path. A
// composite index holds every document (undefined components included).
// A path's index holds only the documents that have a value there, so
// the documents without one, which sort first, are read from the
// documents themselves: before the entries when ascending, after them
// when descending. That read is skipped when the WHERE already requires
// the path to be defined (any index hint on it); a hint on the path also
// narrows the walk to its ranges.
//
// Entries come in runs of one <value> (or tuple of them): the executor
// sorts the rows of a run only when the entry does not decide their
// order (query.OrderedSource): arrays, objects and cut strings share an
// entry, and further ORDER BY keys order the documents of a path's run.
// Within an exact run of a plan whose entries decide every key, the
// documents tie and come in key order, so the rows are final as they
// come, and the next page resumes at the last row's entry itself rather
// than at its run.
//
// A selective filter (an equality or IN on another indexed path) is
// better served by that index and a heap, so such queries keep the
// filter plan (SourceFor); so does a query limited to a small
// partition (unlessSparse).

// Ordered is the query.OrderedSource of an ORDER BY plan.
type Ordered struct {
	*Source
	// desc: the entries are walked backwards.
	desc bool
	// covers: the entries' values decide every ORDER BY key.
	covers bool
	// lacking, when not nil, is the path of a path index plan: the
	// documents without a value there are read from the documents in
	// scope themselves (through Query.Items).
	lacking []pathSeg
	// docPrefix is the key prefix of the documents in scope.
	docPrefix []byte
	// pol is the policy the index follows, which says what a computed
	// property's value is.
	pol *Policy
}

// Scan yields the source's documents in order, for callers that do not
// page by position.
func (s *Ordered) Scan(after []byte, yield func(key, doc []byte) bool) error {
	if after != nil {
		return query.ErrBadContinuation
	}
	return s.ScanOrdered(nil, func(_ []byte, _ bool, key, doc []byte) bool { return yield(key, doc) })
}

// Descending reports that the entries are walked backwards, so ties come
// in descending key order.
func (s *Ordered) Descending() bool { return s.desc }

// lackingRun names the run of documents without the path; a run of
// entries is never empty.
var lackingRun = []byte{}

func (s *Ordered) ScanOrdered(after []byte, yield func(run []byte, sorted bool, key, doc []byte) bool) error {
	inDocs := after != nil && s.lacking != nil && bytes.HasPrefix(after, s.docPrefix)
	inIndex := after != nil && bytes.HasPrefix(after, s.ip.base)
	if after != nil && !inDocs && !inIndex {
		return query.ErrBadContinuation
	}
	return s.view(func(r storage.Reader, t *walkTimes) error {
		var from []byte
		if inDocs {
			from = after
		}
		lacking := func() (bool, error) { return s.walkLacking(r, from, t, yield) }
		entries := func() (bool, error) {
			var at []byte
			if inIndex {
				at = after
			}
			return s.walkEntries(r, at, t, yield)
		}
		phases := []func() (bool, error){entries}
		switch {
		case s.lacking == nil:
		case !s.desc && inIndex:
		case !s.desc:
			phases = []func() (bool, error){lacking, entries}
		case inDocs:
			phases = []func() (bool, error){lacking}
		default:
			phases = append(phases, lacking)
		}
		for _, phase := range phases {
			if stop, err := phase(); stop || err != nil {
				return err
			}
		}
		return nil
	})
}

// walkEntries walks the plan's ranges in order from the run of at (an
// entry key; nil: from the start), or from at itself when that run is
// sorted.
func (s *Ordered) walkEntries(r storage.Reader, at []byte, t *walkTimes, yield func(run []byte, sorted bool, key, doc []byte) bool) (bool, error) {
	// [lo, hi) is what is left to walk.
	var lo, hi []byte
	if at != nil {
		run, _, exact, err := s.ip.split(at)
		if err != nil {
			return false, query.ErrBadContinuation
		}
		run = at[:len(s.ip.base)+len(run)]
		switch {
		case s.covers && exact && s.desc:
			hi = append(slices.Clip(at), 0)
		case s.covers && exact:
			lo = at
		case s.desc:
			hi = keys.PrefixEnd(run)
		default:
			lo = run
		}
	}
	fn := func(e *walkEntry) bool { return yield(e.run, s.covers && e.exact, e.key, e.doc) }
	n := len(s.ip.ranges)
	for i := range n {
		kr := s.ip.ranges[i]
		if s.desc {
			kr = s.ip.ranges[n-1-i]
		}
		if lo != nil && bytes.Compare(lo, kr.start) > 0 {
			kr.start = lo
		}
		if hi != nil && bytes.Compare(hi, kr.end) < 0 {
			kr.end = hi
		}
		if bytes.Compare(kr.start, kr.end) >= 0 {
			continue
		}
		if stop, err := s.walk(r, kr.start, kr.end, s.desc, t, fn); stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

// walkLacking yields the documents in scope without a value at the
// plan's path, in key order (backwards when descending), from the
// document at from (nil: from the first) when the run is sorted.
func (s *Ordered) walkLacking(r storage.Reader, from []byte, t *walkTimes, yield func(run []byte, sorted bool, key, doc []byte) bool) (bool, error) {
	lo, hi := s.docPrefix, keys.PrefixEnd(s.docPrefix)
	if from != nil && s.covers {
		if s.desc {
			hi = append(slices.Clip(from), 0)
		} else {
			lo = from
		}
	}
	// Reading the documents here is the load time; yield's is not.
	clk := s.q.Clock
	t0 := clk.Elapsed()
	var inYield time.Duration
	defer func() {
		t.loading += clk.Elapsed() - t0 - inYield
		t.inYield += inYield
	}()
	stopped := false
	err := s.q.Items(r).Scan(lo, hi, s.desc, func(key, doc []byte) bool {
		if s.pol.defined(doc, s.lacking) {
			return true
		}
		t1 := clk.Elapsed()
		more := yield(lackingRun, s.covers, key, doc)
		inYield += clk.Elapsed() - t1
		stopped = !more
		return more
	})
	return stopped, err
}

// OrderedFor returns the source serving plan's ORDER BY from an
// index over q, nil when none serves it (see the top of this file). fp,
// if non-zero, is the policy fingerprint a continuation was issued
// under.
func OrderedFor(ctx context.Context, q Query, plan *query.Plan, fp uint64) (*Ordered, error) {
	order, ok := plan.OrderKeys()
	if !ok {
		return nil, nil
	}
	st, pol, err := readyIndex(ctx, q, plan, fp)
	if pol == nil {
		return nil, err
	}
	first := order[0]
	hints := mergeRanges(plan.IndexHints())
	for _, h := range hints {
		onFirst := !h.Elem && slices.Equal(h.Path, first.Path)
		if (h.Op == query.HintEq || h.Op == query.HintIn) && !onFirst && pol.indexes(hintPath(h)) {
			return nil, nil
		}
	}
	rid := q.Target.RID
	os := &Ordered{Source: newSource(ctx, q), docPrefix: append(keyspace.CollPrefix(keyspace.Doc, rid), q.Scope...), pol: pol}
	if ci := pol.compositeFor(order); ci != nil {
		base := keys.AppendBytes(keyspace.IndexPrefix(rid), ci.name)
		ip := &accessPlan{fp: st.fp, base: base, ranges: []keyRange{{base, keys.PrefixEnd(base)}}}
		for i, segs := range ci.paths {
			x, o := byte(0), " ASC"
			if ci.desc[i] {
				x, o = 0xFF, " DESC"
			}
			ip.parts = append(ip.parts, x)
			ip.composite = append(ip.composite, string(appendPath(nil, segs))+o)
		}
		ip.itemXor = ci.itemXor
		os.ip, os.desc, os.covers = ip, first.Desc != ci.desc[0], true
		return os.unlessSparse()
	}
	h := query.IndexHint{Path: first.Path, Op: query.HintDefined}
	defined := false
	for _, o := range hints {
		if !slices.Equal(o.Path, first.Path) {
			continue
		}
		defined = true
		if !o.Elem && hintRank(o) < hintRank(h) {
			h = o
		}
	}
	segs := hintPath(h)
	if !pol.indexes(segs) {
		return nil, nil
	}
	os.ip = newAccessPlan(rid, h, st.fp, os.q.Scope)
	os.desc, os.covers = first.Desc, len(order) == 1
	if !defined {
		os.lacking = segs
	}
	return os.unlessSparse()
}

// A query limited to one partition (or a key prefix) reads the index in
// order only when the partition is large and holds a fair share of the
// entries: the index walk skips the entries of other partitions, so for
// a small partition in a large container scanning the partition through
// a heap reads far less. The first page decides, from at most
// sparseDocs documents and sparseSample entries; later pages follow its
// token.
const (
	sparseDocs   = 1000
	sparseSample = 4096
	sparseShare  = 64 // at most one in-scope entry in this many is sparse
)

// unlessSparse returns s, or nil when s is limited to a partition that a
// scan serves better (see sparseDocs).
func (s *Ordered) unlessSparse() (*Ordered, error) {
	if s.q.Scope == nil {
		return s, nil
	}
	sparse := false
	err := s.q.Store.View(s.ctx, func(r storage.Reader) error {
		large, err := hasKeys(r, s.docPrefix, sparseDocs)
		if err != nil || !large {
			sparse = true
			return err
		}
		seen, hits, err := s.sampleScope(r)
		sparse = seen == sparseSample && hits*sparseShare < seen
		return err
	})
	if err != nil || sparse {
		return nil, err
	}
	return s, nil
}

// hasKeys reports whether there are at least n keys under prefix.
func hasKeys(r storage.Reader, prefix []byte, n int) (bool, error) {
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	for n > 0 && it.Next() {
		n--
	}
	return n == 0, it.Err()
}

// sampleScope reads up to sparseSample of the first entries s walks and
// counts those in its scope.
func (s *Ordered) sampleScope(r storage.Reader) (seen, hits int, err error) {
	kr := s.ip.ranges[0]
	if s.desc {
		kr = s.ip.ranges[len(s.ip.ranges)-1]
	}
	it := r.Scan(kr.start, kr.end, s.desc)
	defer it.Close()
	var item []byte
	for seen < sparseSample && it.Next() {
		_, in, _, err := s.ip.split(it.Key())
		if err != nil {
			return seen, hits, err
		}
		item = xorBytes(item[:0], in, s.ip.itemXor)
		seen++
		if bytes.HasPrefix(item, s.q.Scope) {
			hits++
		}
	}
	return seen, hits, it.Err()
}

// compositeFor returns the composite index whose paths are those of
// order, with the same orders or all opposite, nil if none.
func (p *Policy) compositeFor(order []query.OrderKey) *compositeIndex {
	for i := range p.composites {
		ci := &p.composites[i]
		if len(ci.paths) != len(order) {
			continue
		}
		same, opposite := true, true
		for j, k := range order {
			if !slices.EqualFunc(ci.paths[j], k.Path, func(s pathSeg, name string) bool { return !s.elem && s.name == name }) {
				same, opposite = false, false
				break
			}
			same = same && ci.desc[j] == k.Desc
			opposite = opposite && ci.desc[j] != k.Desc
		}
		if same || opposite {
			return ci
		}
	}
	return nil
}
