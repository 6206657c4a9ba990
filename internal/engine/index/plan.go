package index

import (
	"bytes"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/query"
)

// Planning an index access: which sargable conjunct of a WHERE an index
// serves (chooseIndex) and the key ranges of its entries (newAccessPlan).

// accessPlan is the index access chosen for a query.
type accessPlan struct {
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
func (ip *accessPlan) split(k []byte) (run, item []byte, exact bool, err error) {
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
func chooseIndex(hints []query.IndexHint, pol *Policy) (best *query.IndexHint, potential []string) {
	for _, h := range mergeRanges(hints) {
		segs := hintPath(h)
		if !pol.indexes(segs) {
			potential = append(potential, formatRule(rule{segs: segs}))
			continue
		}
		if best == nil || hintRank(h) < hintRank(*best) {
			best = &h
		}
	}
	return best, potential
}

// appendScalar appends the <value> encoding of a scalar.
func appendScalar(dst []byte, v query.Value) []byte {
	switch v.Kind() {
	case query.Null:
		return append(dst, document.PKNull)
	case query.Bool:
		if v.Bool() {
			return append(dst, document.PKTrue)
		}
		return append(dst, document.PKFalse)
	case query.Number:
		return appendNumber(dst, v.Number())
	}
	s, _ := v.AsString()
	return appendString(dst, []byte(s))
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

// newAccessPlan turns hint h into key ranges of container rid's index.
// scope is the encoded partition key (or leading part) the query is
// limited to, nil for none: an equality's range then covers that
// partition only, since <pk> follows <value> in the key.
func newAccessPlan(rid [8]byte, h query.IndexHint, fp uint64, scope []byte) *accessPlan {
	segs := hintPath(h)
	base := pathPrefix(rid, segs)
	ip := &accessPlan{hint: h, fp: fp, base: base, parts: []byte{0}, spec: formatRule(rule{segs: segs})}
	with := func(tail ...byte) []byte { return append(slices.Clip(base), tail...) }
	exact := func(v query.Value) keyRange {
		k := appendScalar(slices.Clip(base), v)
		return keyRange{k, keys.PrefixEnd(k)}
	}
	switch h.Op {
	case query.HintEq, query.HintIn:
		for _, v := range h.Values {
			k := append(appendScalar(slices.Clip(base), v), scope...)
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
