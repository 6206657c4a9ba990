package index

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/storage"
)

// Items reads one container's items visible at the request's
// instant: the only way the index sources read documents, so that they
// cannot forget TTL.
type Items interface {
	// Get returns the document of the item at key, ok false if there is
	// none visible.
	Get(key []byte) (doc []byte, ok bool, err error)
	// Scan calls yield with each visible item whose key is in [start,
	// end), in key order (descending when reverse), until yield returns
	// false; key and doc are valid only during the call.
	Scan(start, end []byte, reverse bool, yield func(key, doc []byte) bool) error
}

// Query is what an index source needs of the query it serves.
type Query struct {
	Store storage.Store
	// Clock times the index lookups and document loads for the query
	// metrics (the engine's real clock, even when its clock is manual).
	Clock  clock.Clock
	Target Target
	// Scope is the encoded partition key (or leading part of one) the
	// request is limited to; nil or empty for all.
	Scope []byte
	// Items reads the container's items visible at the request's
	// instant, in snapshot r.
	Items func(r storage.Reader) Items
}

// Source is the query.Source of an index plan: the items its key
// ranges list, in entry-key order, filtered by partition scope and TTL.
type Source struct {
	q   Query
	ctx context.Context
	ip  *accessPlan
	// docKeys: Scan yields each document's key, not its entry's, so
	// that a sorting plan breaks ties as a scan does (query.Plan.Sorted).
	docKeys bool
	// Filled by Scan, for the query metrics.
	lookup, load time.Duration
}

// SourceFor returns the index source serving plan over q, nil when
// no index serves it. fp, if non-zero, is the policy fingerprint a
// continuation was issued under: then the index must follow that
// policy. potential lists the paths an index could serve but the policy
// leaves out.
func SourceFor(ctx context.Context, q Query, plan *query.Plan, fp uint64) (ix *Source, potential []string, err error) {
	hints := plan.IndexHints()
	if len(hints) == 0 {
		return nil, nil, nil
	}
	st, pol, err := readyIndex(ctx, q, plan, fp)
	if pol == nil {
		return nil, nil, err
	}
	h, potential := chooseIndex(hints, pol)
	if h == nil {
		return nil, potential, nil
	}
	ix = newSource(ctx, q)
	ix.ip = newAccessPlan(q.Target.RID, *h, st.fp, ix.q.Scope)
	ix.docKeys = plan.Sorted()
	return ix, potential, nil
}

// readyIndex returns the index state and policy of q's container when
// its index is ready (and, if fp is non-zero, follows policy fp) and
// indexes the computed properties plan was bound with; pol is nil when
// no index can serve plan now.
func readyIndex(ctx context.Context, q Query, plan *query.Plan, fp uint64) (st State, pol *Policy, err error) {
	v, err := q.Store.Get(ctx, keyspace.IndexStateKey(q.Target.RID))
	if errors.Is(err, storage.ErrNotFound) {
		return st, nil, nil
	}
	if err != nil {
		return st, nil, err
	}
	st, err = decodeState(v)
	if err != nil || st.building || (fp != 0 && st.fp != fp) {
		return st, nil, err
	}
	if pol, err = st.compiled(q.Target); err != nil || !pol.ServesComputed(plan.Computed()) {
		return st, nil, err
	}
	return st, pol, nil
}

// newSource returns an index source over q's scope, without a plan.
func newSource(ctx context.Context, q Query) *Source {
	if len(q.Scope) == 0 {
		q.Scope = nil
	}
	return &Source{q: q, ctx: ctx}
}

// ErrChanged is returned by a source whose index was rebuilt or dropped
// since it was planned: the caller plans the page again, or refuses the
// continuation that asked for the old index.
var ErrChanged = errors.New("index: the index changed during the query")

// Scan yields the items of the plan's ranges in entry-key order, after
// the entry key after (nil: from the start).
func (s *Source) Scan(after []byte, yield func(key, doc []byte) bool) error {
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
func (s *Source) view(fn func(r storage.Reader, t *walkTimes) error) error {
	clk := s.q.Clock
	t0 := clk.Elapsed()
	var t walkTimes
	defer func() {
		total := clk.Elapsed() - t0
		s.load += t.loading
		s.lookup += total - t.inYield - t.loading
	}()
	return s.q.Store.View(s.ctx, func(r storage.Reader) error {
		st, found, err := ReadState(r, s.q.Target.RID)
		if err != nil {
			return err
		}
		if !found || st.building || st.fp != s.ip.fp {
			return ErrChanged
		}
		return fn(r, &t)
	})
}

// walkEntry is an index entry and its item, as walk yields them; all
// valid only during the yield.
type walkEntry struct {
	key    []byte // the entry's
	run    []byte // accessPlan.split's
	exact  bool
	docKey []byte
	doc    []byte // the item's document
}

// walk yields the visible items of the entries in [start, end),
// backwards if reverse; stop reports that yield asked to stop.
func (s *Source) walk(r storage.Reader, start, end []byte, reverse bool, t *walkTimes, yield func(*walkEntry) bool) (stop bool, err error) {
	clk := s.q.Clock
	docKey := keyspace.CollPrefix(keyspace.Doc, s.q.Target.RID)
	nDoc := len(docKey)
	var itemBuf []byte
	var e walkEntry // one for the walk: yield sees it only during its call
	items := s.q.Items(r)
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
		if s.q.Scope != nil && !bytes.HasPrefix(item, s.q.Scope) {
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
