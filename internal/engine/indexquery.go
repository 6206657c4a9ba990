package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/storage"
)

// Index-served queries.
//
// The query library names the sargable conjuncts of a WHERE
// (query.Plan.IndexHints). The engine picks the most selective one on a
// path the container indexes — equality, then IN, then STARTSWITH or a
// range bounded on both sides, then a one-sided range, then IS_DEFINED —
// and turns it into key ranges of the index, in ascending key order. The
// indexSource walks those ranges, fetches each entry's item by its
// <pk> <id> (skipping entries outside the request's partition key; an
// equality's range is cut to that partition to begin with), drops
// items the TTL predicate hides, and yields (entry key, document). The
// executor evaluates the whole WHERE on each document, so the index only
// narrows what is read: the rows are the ones a scan gives. Their order
// can differ where the query leaves it open: a scan yields in (pk, id)
// order, an index in (value, pk, id) order, which is the same for an
// equality.
//
// A hint's path never goes through an array index and is single-valued
// (a document has at most one value at /a/b), and array elements are used
// only for one value (ARRAY_CONTAINS), so no range yields a document
// twice; IN values whose entries coincide (long strings cut to the same
// prefix) share one range.
//
// The index is used only while the container's index state is ready,
// and the source re-checks that in the snapshot it reads, so it never
// reads a half-built index. Continuation tokens of index plans are
// marked (idxToken) and carry the policy fingerprint: a page of an index
// plan resumes over the same index, a scan plan's token resumes a scan
// (even if an index is ready by then), and an index token presented
// after the policy changed is refused with a 400 asking to restart,
// since an index position means nothing to a scan.

// errIndexChanged is returned by an indexSource whose index was rebuilt
// or dropped since the plan was made.
var errIndexChanged = errors.New("engine: the index changed during the query")

// indexPlan is the index access chosen for a query.
type indexPlan struct {
	hint   query.IndexHint
	fp     uint64 // of the policy the index follows
	base   []byte // the index prefix of the hint's path (or composite index)
	ranges []keyRange
	// parts has one byte per <value> in an entry after base, each stored
	// XORed with it: one 0 for a path, one per component for a composite
	// index (0xFF where descending); itemXor is the <pk> <id>'s
	// (compositeIndex.itemXor).
	parts   []byte
	itemXor byte
	spec    string // the path as the index metrics name it: "/a/?"
	// composite, for a composite index: its paths and orders as the
	// index metrics name them ("/a ASC").
	composite []string
}

// split cuts an entry key of the plan's index into its run and the item
// (<pk> <id>). The run is the <value>s up to the first one that does not
// decide its place in the sort order (skipValueX), inclusive, since the
// ones after it order nothing across entries; exact says there is no
// such value.
func (ip *indexPlan) split(k []byte) (run, item []byte, exact bool, err error) {
	rest := k[len(ip.base):]
	runEnd := -1
	for _, x := range ip.parts {
		var ex bool
		if rest, ex, err = skipValueX(rest, x); err != nil {
			return nil, nil, false, err
		}
		if !ex && runEnd < 0 {
			runEnd = len(k) - len(rest)
		}
	}
	if runEnd < 0 {
		return k[len(ip.base) : len(k)-len(rest)], rest, true, nil
	}
	return k[len(ip.base):runEnd], rest, false, nil
}

type keyRange struct{ start, end []byte }

// xorBytes appends b XORed with x to dst.
func xorBytes(dst, b []byte, x byte) []byte {
	for _, c := range b {
		dst = append(dst, c^x)
	}
	return dst
}

// hintRank orders hints by expected selectivity, lower first.
func hintRank(h query.IndexHint) int {
	switch h.Op {
	case query.HintEq:
		return 0
	case query.HintIn:
		return 1
	case query.HintPrefix:
		return 2
	case query.HintRange:
		if h.Lo.IsDefined() && h.Hi.IsDefined() {
			return 2
		}
		return 3
	}
	return 4
}

func hintPath(h query.IndexHint) []pathSeg {
	segs := make([]pathSeg, 0, len(h.Path)+1)
	for _, n := range h.Path {
		segs = append(segs, pathSeg{name: n})
	}
	if h.Elem {
		segs = append(segs, pathSeg{elem: true})
	}
	return segs
}

// mergeRanges intersects range hints on the same path and kind
// (c.a > 1 AND c.a < 5 is one range).
func mergeRanges(hints []query.IndexHint) []query.IndexHint {
	var out []query.IndexHint
	for _, h := range hints {
		merged := false
		if h.Op == query.HintRange {
			for i := range out {
				o := &out[i]
				if o.Op != query.HintRange || o.Elem != h.Elem || !slices.Equal(o.Path, h.Path) || o.Kind() != h.Kind() {
					continue
				}
				if h.Lo.IsDefined() {
					if r := query.Compare(h.Lo, o.Lo); !o.Lo.IsDefined() || r > 0 || (r == 0 && !h.LoIncl) {
						o.Lo, o.LoIncl = h.Lo, h.LoIncl
					}
				}
				if h.Hi.IsDefined() {
					if r := query.Compare(h.Hi, o.Hi); !o.Hi.IsDefined() || r < 0 || (r == 0 && !h.HiIncl) {
						o.Hi, o.HiIncl = h.Hi, h.HiIncl
					}
				}
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, h)
		}
	}
	return out
}

// chooseIndex picks the hint to serve a plan from under policy pol, nil
// when none is on an indexed path. potential lists the paths of hints
// the policy does not index.
func chooseIndex(hints []query.IndexHint, pol *indexPolicy) (best *query.IndexHint, potential []string) {
	for _, h := range mergeRanges(hints) {
		segs := hintPath(h)
		if !pol.indexes(segs) {
			potential = append(potential, formatIndexRule(indexRule{segs: segs}))
			continue
		}
		if best == nil || hintRank(h) < hintRank(*best) {
			best = &h
		}
	}
	return best, potential
}

// appendIndexScalar appends the <value> encoding of a scalar.
func appendIndexScalar(dst []byte, v query.Value) []byte {
	switch v.Kind() {
	case query.Null:
		return append(dst, document.PKNull)
	case query.Bool:
		if v.Bool() {
			return append(dst, document.PKTrue)
		}
		return append(dst, document.PKFalse)
	case query.Number:
		return appendIndexNumber(dst, v.Number())
	}
	s, _ := v.AsString()
	return appendIndexString(dst, []byte(s))
}

func longString(v query.Value) bool {
	s, ok := v.AsString()
	return ok && len(s) > maxIndexedString
}

// kindRange is the span of <value> tags holding values of kind k.
func kindRange(k query.Kind) (lo, hi byte) {
	switch k {
	case query.Null:
		return document.PKNull, document.PKNull + 1
	case query.Bool:
		return document.PKFalse, document.PKTrue + 1
	case query.Number:
		return document.PKNumber, document.PKNumber + 1
	}
	return document.PKString, document.PKString + 1
}

// newIndexPlan turns hint h into key ranges of container rid's index.
// scope is the encoded partition key (or leading part) the query is
// limited to, nil for none: an equality's range then covers that
// partition only, since <pk> follows <value> in the key.
func newIndexPlan(rid [8]byte, h query.IndexHint, fp uint64, scope []byte) *indexPlan {
	segs := hintPath(h)
	base := indexPathPrefix(rid, segs)
	ip := &indexPlan{hint: h, fp: fp, base: base, parts: []byte{0}, spec: formatIndexRule(indexRule{segs: segs})}
	with := func(tail ...byte) []byte { return append(slices.Clip(base), tail...) }
	exact := func(v query.Value) keyRange {
		k := appendIndexScalar(slices.Clip(base), v)
		return keyRange{k, keys.PrefixEnd(k)}
	}
	switch h.Op {
	case query.HintEq, query.HintIn:
		for _, v := range h.Values {
			k := append(appendIndexScalar(slices.Clip(base), v), scope...)
			ip.ranges = append(ip.ranges, keyRange{k, keys.PrefixEnd(k)})
		}
		slices.SortFunc(ip.ranges, func(a, b keyRange) int { return bytes.Compare(a.start, b.start) })
		// Long strings sharing their indexed prefix share a range: keep
		// it once, or its items would be read twice.
		ip.ranges = slices.CompactFunc(ip.ranges, func(a, b keyRange) bool { return bytes.Equal(a.start, b.start) })
	case query.HintRange:
		// Cut strings need no care for short bounds: a string s cut to
		// its first bytes t has an entry after that of every string up to
		// t and before that of every greater string but t's other long
		// extensions, which share the entry; a bound is never strictly
		// inside that group unless it is long itself.
		lo, hi := kindRange(h.Kind())
		r := keyRange{with(lo), with(hi)}
		// A long bound is taken inclusively: its cut entry holds strings
		// on both sides of it.
		if h.Lo.IsDefined() {
			if e := exact(h.Lo); h.LoIncl || longString(h.Lo) {
				r.start = e.start
			} else {
				r.start = e.end
			}
		}
		if h.Hi.IsDefined() {
			if e := exact(h.Hi); h.HiIncl || longString(h.Hi) {
				r.end = e.end
			} else {
				r.end = e.start
			}
		}
		if bytes.Compare(r.start, r.end) < 0 {
			ip.ranges = append(ip.ranges, r)
		}
	case query.HintPrefix:
		if len(h.Prefix) > maxIndexedString {
			// Every string starting with it is cut to its first bytes.
			ip.ranges = append(ip.ranges, exact(query.StringValue(h.Prefix)))
			break
		}
		k := keys.AppendString(with(document.PKString), h.Prefix)
		k = k[:len(k)-2] // without the terminator: a prefix of every extension
		ip.ranges = append(ip.ranges, keyRange{k, keys.PrefixEnd(k)})
	case query.HintDefined:
		ip.ranges = append(ip.ranges, keyRange{base, keys.PrefixEnd(base)})
	}
	return ip
}

// idxItems reads one container's items visible at the request's
// instant: the only way the index sources read documents, so that they
// cannot forget TTL.
type idxItems interface {
	// Get returns the document of the item at key, ok false if there is
	// none visible.
	Get(key []byte) (doc []byte, ok bool, err error)
	// Scan calls yield with each visible item whose key is in [start,
	// end), in key order (descending when reverse), until yield returns
	// false; key and doc are valid only during the call.
	Scan(start, end []byte, reverse bool, yield func(key, doc []byte) bool) error
}

// idxQuery is what an index source needs of the query it serves.
type idxQuery struct {
	store storage.Store
	// clock times the index lookups and document loads for the query
	// metrics (the engine's real clock).
	clock  clock.Clock
	target indexTarget
	// scope is the encoded partition key (or leading part of one) the
	// request is limited to; nil for all.
	scope []byte
	// items reads the container at the request's instant in snapshot r.
	items func(r storage.Reader) idxItems
}

// indexSource is the query.Source of an index plan: the items its key
// ranges list, in entry-key order, filtered by partition scope and TTL.
type indexSource struct {
	idxQuery
	ctx context.Context
	ip  *indexPlan
	// docKeys: Scan yields each document's key, not its entry's, so
	// that a sorting plan breaks ties as a scan does (query.Plan.Sorted).
	docKeys bool
	// Filled by Scan, for the query metrics.
	lookup, load time.Duration
}

func (s *indexSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	if after != nil && !bytes.HasPrefix(after, s.ip.base) {
		return query.ErrBadContinuation
	}
	yieldKey := func(e *walkEntry) bool { return yield(e.key, e.doc) }
	if s.docKeys {
		yieldKey = func(e *walkEntry) bool { return yield(e.docKey, e.doc) }
	}
	return s.view(func(r storage.Reader, t *walkTimes) error {
		for _, kr := range s.ip.ranges {
			start := kr.start
			if after != nil {
				if bytes.Compare(after, kr.end) >= 0 {
					continue
				}
				if next := append(slices.Clip(after), 0); bytes.Compare(next, start) > 0 {
					start = next
				}
			}
			stop, err := s.walk(r, start, kr.end, false, t, yieldKey)
			if err != nil || stop {
				return err
			}
		}
		return nil
	})
}

// walkTimes accumulates, during a view, the time spent in yield and in
// loading documents.
type walkTimes struct{ inYield, loading time.Duration }

// view runs fn in a snapshot whose index state is still the one the
// plan was made for, and adds the time outside yield to the source's
// lookup and load times.
func (s *indexSource) view(fn func(r storage.Reader, t *walkTimes) error) error {
	clk := s.clock
	t0 := clk.Elapsed()
	var t walkTimes
	defer func() {
		total := clk.Elapsed() - t0
		s.load += t.loading
		s.lookup += total - t.inYield - t.loading
	}()
	return s.store.View(s.ctx, func(r storage.Reader) error {
		st, found, err := readIndexState(r, s.target.rid)
		if err != nil {
			return err
		}
		if !found || st.building || st.fp != s.ip.fp {
			return errIndexChanged
		}
		return fn(r, &t)
	})
}

// walkEntry is an index entry and its item, as walk yields them; all
// valid only during the yield.
type walkEntry struct {
	key    []byte // the entry's
	run    []byte // indexPlan.split's
	exact  bool
	docKey []byte
	doc    []byte // the item's document
}

// walk yields the visible items of the entries in [start, end),
// backwards if reverse; stop reports that yield asked to stop.
func (s *indexSource) walk(r storage.Reader, start, end []byte, reverse bool, t *walkTimes, yield func(*walkEntry) bool) (stop bool, err error) {
	clk := s.clock
	docKey := keyspace.CollPrefix(keyspace.Doc, s.target.rid)
	nDoc := len(docKey)
	var itemBuf []byte
	var e walkEntry // one for the walk: yield sees it only during its call
	items := s.items(r)
	it := r.Scan(start, end, reverse)
	defer it.Close()
	for it.Next() {
		k := it.Key()
		run, item, exact, err := s.ip.split(k)
		if err != nil {
			return false, err
		}
		if s.ip.itemXor != 0 {
			item = xorBytes(itemBuf[:0], item, s.ip.itemXor)
			itemBuf = item
		}
		if s.scope != nil && !bytes.HasPrefix(item, s.scope) {
			continue
		}
		docKey = append(docKey[:nDoc], item...)
		t0 := clk.Elapsed()
		doc, ok, err := items.Get(docKey)
		t.loading += clk.Elapsed() - t0
		if err != nil {
			return false, err
		}
		if !ok {
			continue // expired (or, were the index inconsistent, absent)
		}
		t0 = clk.Elapsed()
		e = walkEntry{key: k, run: run, exact: exact, docKey: docKey, doc: doc}
		more := yield(&e)
		t.inYield += clk.Elapsed() - t0
		if !more {
			return true, nil
		}
	}
	return false, it.Err()
}

// indexSourceFor returns the index source serving plan over q, nil when
// no index serves it. fp, if non-zero, is the policy fingerprint a
// continuation was issued under: then the index must follow that
// policy. potential lists the paths an index could serve but the policy
// leaves out.
func indexSourceFor(ctx context.Context, q idxQuery, plan *query.Plan, fp uint64) (ix *indexSource, potential []string, err error) {
	hints := plan.IndexHints()
	if len(hints) == 0 {
		return nil, nil, nil
	}
	st, pol, err := readyIndex(ctx, q, fp)
	if pol == nil {
		return nil, nil, err
	}
	h, potential := chooseIndex(hints, pol)
	if h == nil {
		return nil, potential, nil
	}
	ix = newIndexSource(ctx, q)
	ix.ip = newIndexPlan(q.target.rid, *h, st.fp, ix.scope)
	ix.docKeys = plan.Sorted()
	return ix, potential, nil
}

// readyIndex returns the index state and policy of q's container when
// its index is ready (and, if fp is non-zero, follows policy fp); pol is
// nil when no index can serve a query now.
func readyIndex(ctx context.Context, q idxQuery, fp uint64) (st indexState, pol *indexPolicy, err error) {
	v, err := q.store.Get(ctx, keyspace.IndexStateKey(q.target.rid))
	if errors.Is(err, storage.ErrNotFound) {
		return st, nil, nil
	}
	if err != nil {
		return st, nil, err
	}
	st, err = decodeIndexState(v)
	if err != nil || st.building || (fp != 0 && st.fp != fp) {
		return st, nil, err
	}
	pol, err = st.compiled(q.target)
	return st, pol, err
}

// newIndexSource returns an index source over q's scope, without a plan.
func newIndexSource(ctx context.Context, q idxQuery) *indexSource {
	if len(q.scope) == 0 {
		q.scope = nil
	}
	return &indexSource{idxQuery: q, ctx: ctx}
}

// Continuation tokens of index plans start with a marker and the policy
// fingerprint; query tokens start with their version byte (1).
const (
	idxToken     = 'I' // a filter plan (indexSource)
	orderedToken = 'O' // an ORDER BY plan (orderedSource)
)

// splitToken decodes a continuation header into the query token and, for
// an index plan's token, its marker and the policy fingerprint it was
// issued under (kind 0 for a scan's token or none).
func splitToken(cont string) (tok []byte, kind byte, fp uint64, err error) {
	if cont == "" {
		return nil, 0, 0, nil
	}
	raw, err := decodeToken(cont)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(raw) > 0 && (raw[0] == idxToken || raw[0] == orderedToken) {
		if len(raw) < 9 {
			return nil, 0, 0, queryError(query.ErrBadContinuation)
		}
		return raw[9:], raw[0], binary.BigEndian.Uint64(raw[1:9]), nil
	}
	return raw, 0, 0, nil
}

// indexTokenPrefix is what an index plan's query token is wrapped in.
func indexTokenPrefix(kind byte, fp uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{kind}, fp)
}

// indexUtilization renders x-ms-cosmos-index-utilization: URL-encoded
// JSON in the service's shape, naming the index used (if any) and the
// indexes that would serve the query's filters but the policy leaves
// out.
func indexUtilization(used *indexPlan, potential []string) string {
	var b strings.Builder
	single := func(spec string) {
		b.WriteString(`{"FilterExpression":"","IndexSpec":`)
		b.Write(document.AppendQuoted(nil, spec))
		b.WriteString(`,"FilterPreciseSet":true,"IndexPreciseSet":true,"IndexImpactScore":"High"}`)
	}
	b.WriteString(`{"UtilizedSingleIndexes":[`)
	if used != nil && used.composite == nil {
		single(used.spec)
	}
	b.WriteString(`],"PotentialSingleIndexes":[`)
	for i, p := range potential {
		if i > 0 {
			b.WriteByte(',')
		}
		single(p)
	}
	b.WriteString(`],"UtilizedCompositeIndexes":[`)
	if used != nil && used.composite != nil {
		b.WriteString(`{"IndexSpecs":[`)
		for i, p := range used.composite {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(document.AppendQuoted(nil, p))
		}
		b.WriteString(`],"IndexPreciseSet":true,"IndexImpactScore":"High"}`)
	}
	b.WriteString(`],"PotentialCompositeIndexes":[]}`)
	return url.QueryEscape(b.String())
}
