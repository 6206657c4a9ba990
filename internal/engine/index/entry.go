package index

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
)

// The entries of a document (see "Entries" in the package doc): the
// walker that lists them under a policy, and the <value> encoding.

// The <value> tags of arrays and objects, after document.PKString:
// arrays and objects sort after strings.
const (
	tagArray  byte = 0x07
	tagObject byte = 0x08
)

// pathPrefix is the key prefix of container rid's entries at path.
func pathPrefix(rid [8]byte, path []pathSeg) []byte {
	return keys.AppendBytes(keyspace.IndexPrefix(rid), appendPath(nil, path))
}

// entryWalker collects the <path> <value> parts of a document's index
// entries under a policy.
type entryWalker struct {
	pol  *Policy
	segs []pathSeg
	path []byte // appendPath(segs)
	buf  []byte // the entries, back to back
	ends []int  // where each entry ends in buf
	out  [][]byte
	// cps are the document's indexed computed properties with a value,
	// their JSON in cpBuf (computed.go).
	cps   []cpValue
	cpBuf []byte
	// members holds the members of the objects being walked, outermost
	// first, so that a walk allocates no slice of them per object.
	members []document.Member
}

// collect walks doc (nil: none), a stored JSON object.
func (w *entryWalker) collect(pol *Policy, doc []byte) {
	if doc == nil {
		return
	}
	w.pol, w.cps = pol, w.cps[:0]
	w.object(doc)
	if pol.cpEval != nil {
		w.computeValues(doc)
		for _, cv := range w.cps {
			n := w.push(pathSeg{name: cv.name})
			w.value(cv.raw)
			w.pop(n)
		}
	}
	for i := range pol.composites {
		w.composite(&pol.composites[i], doc)
	}
}

// sorted returns the entries sorted, without duplicates (an array may
// hold a value twice).
func (w *entryWalker) sorted() [][]byte {
	out := slices.Grow(w.out[:0], len(w.ends))[:len(w.ends)]
	start := 0
	for i, end := range w.ends {
		out[i] = w.buf[start:end:end]
		start = end
	}
	slices.SortFunc(out, bytes.Compare)
	w.out = out
	return slices.CompactFunc(out, bytes.Equal)
}

// walkers recycles entryWalkers: item writes walk two documents each.
var walkers = sync.Pool{New: func() any { return new(entryWalker) }}

func getWalker() *entryWalker { return walkers.Get().(*entryWalker) }

func putWalker(w *entryWalker) {
	if cap(w.buf) > 64<<10 {
		return // a huge document: let its buffers go
	}
	clear(w.members[:cap(w.members)]) // let the documents go
	*w = entryWalker{segs: w.segs[:0], path: w.path[:0], buf: w.buf[:0], ends: w.ends[:0], out: w.out[:0], cps: w.cps[:0], cpBuf: w.cpBuf[:0], members: w.members[:0]}
	walkers.Put(w)
}

func (w *entryWalker) push(s pathSeg) int {
	n := len(w.path)
	w.segs = append(w.segs, s)
	w.path = appendPath(w.path, w.segs[len(w.segs)-1:])
	return n
}

func (w *entryWalker) pop(n int) {
	w.segs = w.segs[:len(w.segs)-1]
	w.path = w.path[:n]
}

func (w *entryWalker) object(raw []byte) {
	start := len(w.members)
	w.members, _ = document.AppendMembers(w.members, raw)
	// An inner object's members go after these, and a growing buffer
	// leaves ms on the old array, which stays as it was.
	ms := w.members[start:len(w.members):len(w.members)]
	defer func() { w.members = w.members[:start] }()
	var seen map[string]bool
	if len(ms) > 8 {
		seen = make(map[string]bool, len(ms))
	}
	// A stored member named as a computed property is never indexed.
	skipComputed := len(w.segs) == 0 && w.pol.computed != nil
	for i := len(ms) - 1; i >= 0; i-- { // last wins
		m := ms[i]
		if skipComputed && w.pol.isComputed(m.Key) {
			continue
		}
		if seen != nil {
			if seen[m.Key] {
				continue
			}
			seen[m.Key] = true
		} else if slices.ContainsFunc(ms[i+1:], func(o document.Member) bool { return o.Key == m.Key }) {
			continue
		}
		n := w.push(pathSeg{name: m.Key})
		w.value(m.Val)
		w.pop(n)
	}
}

func (w *entryWalker) value(raw []byte) {
	if len(raw) == 0 {
		return
	}
	switch raw[0] {
	case '{':
		w.emit(tagObject, raw)
		if !w.pol.prunes(w.segs) {
			w.object(raw)
		}
	case '[':
		w.emit(tagArray, raw)
		n := w.push(pathSeg{elem: true})
		if !w.pol.prunes(w.segs) {
			for i := document.SkipSpace(raw, 1); i < len(raw) && raw[i] != ']'; {
				end := document.SkipValue(raw, i)
				w.value(raw[i:end])
				i = document.SkipSpace(raw, end)
				if i < len(raw) && raw[i] == ',' {
					i = document.SkipSpace(raw, i+1)
				}
			}
		}
		w.pop(n)
	default:
		w.emit(valueKind(raw), raw)
	}
}

// emit adds the entry of the value at the current path, if indexed.
func (w *entryWalker) emit(kind byte, raw []byte) {
	if !w.pol.indexes(w.segs) {
		return
	}
	n := len(w.buf)
	w.buf = keys.AppendBytes(w.buf, w.path)
	var ok bool
	if w.buf, ok = appendValue(w.buf, kind, raw); !ok {
		// Not a number a document can hold (checkShape refuses them);
		// leave the path unindexed rather than fail the write.
		w.buf = w.buf[:n]
		return
	}
	w.ends = append(w.ends, len(w.buf))
}

// composite adds the entry of doc in composite index ci: its name, then
// each path's <value> (PKNone where the document has none), complemented
// where the component is descending.
func (w *entryWalker) composite(ci *compositeIndex, doc []byte) {
	w.buf = append(w.buf, ci.prefix...)
	for i, segs := range ci.paths {
		start := len(w.buf)
		raw := w.valueAt(doc, segs)
		var ok bool
		if raw != nil {
			w.buf, ok = appendValue(w.buf, valueKind(raw), raw)
		}
		if !ok {
			w.buf = append(w.buf[:start], document.PKNone)
		}
		if ci.desc[i] {
			for j := start; j < len(w.buf); j++ {
				w.buf[j] ^= 0xFF
			}
		}
	}
	w.ends = append(w.ends, len(w.buf))
}

// valueAt returns the raw JSON value at path in doc, nil if there is
// none (the last of duplicate names wins, as everywhere).
func valueAt(doc []byte, path []pathSeg) []byte {
	for _, s := range path {
		if doc = document.MemberValue(doc, s.name); doc == nil {
			return nil
		}
	}
	return doc
}

// valueKind is the <value> tag of a raw JSON value.
func valueKind(raw []byte) byte {
	switch raw[0] {
	case '{':
		return tagObject
	case '[':
		return tagArray
	case '"':
		return document.PKString
	case 't':
		return document.PKTrue
	case 'f':
		return document.PKFalse
	case 'n':
		return document.PKNull
	}
	return document.PKNumber
}

// appendValue appends the <value> encoding of raw, a JSON value of
// the given kind: the scalar, or a bare tag for arrays and objects. ok is
// false for a number float64 cannot hold.
func appendValue(dst []byte, kind byte, raw []byte) (out []byte, ok bool) {
	switch kind {
	case document.PKString:
		body := raw[1 : len(raw)-1]
		if bytes.IndexByte(body, '\\') >= 0 {
			body = []byte(document.Unquote(raw))
		}
		return appendString(dst, body), true
	case document.PKNumber:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(f, 0) {
			return dst, false
		}
		return appendNumber(dst, f), true
	}
	return append(dst, kind), true
}

func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		f = 0 // -0 is 0
	}
	return document.PartitionKey{{Kind: document.PKNumber, Num: f}}.Encode(dst)
}

// skipValue returns what follows the <value> at the start of b.
func skipValue(b []byte) ([]byte, error) {
	rest, _, err := skipValueX(b, 0)
	return rest, err
}

// skipValueX returns what follows the <value> at the start of b, stored
// with every byte XORed with x (0xFF: a descending composite component).
// exact says the value decides its place in the sort order: not a cut
// string, an array or an object, which all share their entry with other
// values.
func skipValueX(b []byte, x byte) (rest []byte, exact bool, err error) {
	if len(b) == 0 {
		return nil, false, keys.ErrMalformed
	}
	switch b[0] ^ x {
	case document.PKNone, document.PKNull, document.PKFalse, document.PKTrue:
		return b[1:], true, nil
	case tagArray, tagObject:
		return b[1:], false, nil
	case document.PKNumber:
		if len(b) < 9 {
			return nil, false, keys.ErrMalformed
		}
		return b[9:], true, nil
	case document.PKString:
		for i := 1; i+1 < len(b); i++ {
			if b[i]^x == 0 {
				switch b[i+1] ^ x {
				case 0x01:
					return b[i+2:], true, nil
				case truncatedEnd:
					return b[i+2:], false, nil
				}
				i++ // escaped NUL
			}
		}
	}
	return nil, false, keys.ErrMalformed
}

// maxIndexedString is how many bytes of a string an index entry holds.
// A longer string is indexed by its first maxIndexedString bytes and a
// truncation terminator, which keeps index keys short whatever the
// documents hold; a lookup of a long value reads every item sharing its
// indexed prefix, and the executor's WHERE picks the right ones.
const maxIndexedString = 256

// truncatedEnd ends a truncated string in place of the terminator 0x01:
// after the exact string equal to the prefix (0x00 0x01), before any
// string that continues with a character (0x00 sorts below every
// character byte; an escaped NUL is 0x00 0xFF).
const truncatedEnd = 0x02

// appendString appends the <value> encoding of a string: the
// partition-key encoding, truncated beyond maxIndexedString bytes.
func appendString(dst, s []byte) []byte {
	dst = append(dst, document.PKString)
	if len(s) <= maxIndexedString {
		return keys.AppendBytes(dst, s)
	}
	dst = keys.AppendBytes(dst, s[:maxIndexedString])
	dst[len(dst)-1] = truncatedEnd
	return dst
}
