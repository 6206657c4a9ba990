package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Secondary indexes.
//
// # What is indexed
//
// Every scalar of a stored item version whose path the container's
// indexing policy includes gets one entry
//
//	0x16 <coll-rid:8> <path> <value> <pk> <id>  →  (empty)
//
// <path> is the value's path as canonical text (appendPath): property
// names joined by "/", "[]" for "any element of this array", names that
// could be mistaken for syntax quoted; so c.tags[2] is under "/tags/[]"
// and c.a.b under "/a/b". <value> is the partition-key encoding of the
// scalar (type tag, then float64 bits or an escaped string), which sorts
// null < false < true < numbers < strings in Cosmos order, numbers
// numerically, strings by code point, and never makes one value a prefix
// of another, so a range of values is a range of keys; strings longer
// than maxIndexedString bytes are cut there and marked as cut (the query
// planner widens its ranges to match). Arrays and objects
// get an entry too, with a bare type tag after strings (idxArray,
// idxObject): that is what makes IS_DEFINED(c.a) answerable for any value
// of c.a. The system properties _rid, _self, _etag, _attachments and _lsn
// are never indexed; _ts and id are. Duplicate member names (JSON allows
// them, Ebb stores them) index only the last, as JavaScript reads them.
//
// The policy (indexpolicy.go) follows Cosmos DB: includedPaths and
// excludedPaths in the service's syntax ("/*", "/a/?", "/a/*",
// "/\"quoted\"/?", "/a/[]/?"), the most specific matching path wins, an
// exclusion wins a tie; indexingMode none indexes nothing.
//
// Each composite index of the policy gives every document one more
// entry,
//
//	0x16 <coll-rid:8> <name> <value> <value>... <pk> <id>
//
// <name> is "(/a,/b desc)", which no path can be; there is a <value>
// per path of the index, pkNone where the document has no value there,
// each byte complemented for a descending path, so that the entries sort
// in the index's order (the encodings are prefix-free, and
// complementing reverses the order of prefix-free strings); and <pk>
// <id> is complemented too when the first path is descending, so that
// documents with equal values come in the order every other plan gives
// them (see indexorder.go).
//
// # Maintenance
//
// putItem and removeItem call indexReplace and indexRemove in the
// transaction that writes or deletes the item, so entries and documents
// change atomically, whoever writes: a request, a batch, a patch, the
// purger. A replace deletes only the entries the new version no longer
// has and adds only the new ones. Documents are walked as raw JSON with
// the engine's lenient helpers (docjson.go): the stored bytes are
// already validated, and a strict parser would refuse documents the
// engine accepts (duplicate names).
//
// The policy a write indexes under is the one in the container's index
// state (idxState key, read in the write's transaction), not the one in
// the caller's catalog snapshot: a catalog snapshot can be older than a
// policy change that committed before the write's transaction began (on
// one node between ReplaceContainer's commit and its publish; on a
// shared store for a whole catalog poll). The state names the policy by
// fingerprint, so the usual case costs one Get and a comparison.
//
// # Policy changes and rebuilds
//
// ReplaceContainer with a policy that indexes differently (another
// fingerprint) deletes all of the container's entries and stores the new
// policy in the state as "building", with an empty cursor, in one
// transaction. From then on every write indexes under the new policy.
// The builder (indexbuild.go) walks the documents in key order in
// batches; each batch is one transaction that reads the state, reads the
// next documents after the cursor, writes their entries and advances the
// cursor, so it cannot interleave with a write or delete of the same
// item. When it passes the last document the state becomes "ready". The
// state is in storage, so a restart resumes where the cursor stopped; a
// store written before Ebb had indexes gets a "building" state at Open.
// indexingMode none simply drops the entries (nothing to build).
//
// Invariant, at every commit: when the state is ready, the entries are
// exactly those of the stored item versions under the state's policy;
// while building, the same holds for items at or before the cursor, and
// items after it have a subset of theirs. CheckConsistency verifies it.
//
// # Queries
//
// Queries use an index only when the state is ready: to narrow a filter
// (indexquery.go) or to read an ORDER BY in order (indexorder.go).
// While building they scan, which is slower but returns the same rows.
const (
	idxArray  byte = 0x07 // after pkString: arrays sort after strings
	idxObject byte = 0x08
)

func indexPathPrefix(rid [8]byte, path []pathSeg) []byte {
	return keys.AppendBytes(keyspace.IndexPrefix(rid), appendPath(nil, path))
}

// indexState is a container's index state, stored at indexStateKey.
type indexState struct {
	building bool
	// fp and policy are the fingerprint and canonical JSON of the policy
	// the entries follow (indexPolicy.fp, .canon).
	fp     uint64
	policy []byte
	// cursor, while building: the item key after the doc prefix
	// (<pk> <id>) of the last item indexed; nil when none yet.
	cursor []byte
}

const indexStateVersion = 1

func (s indexState) encode() []byte {
	b := make([]byte, 0, 16+len(s.cursor)+len(s.policy))
	var flags byte
	if s.building {
		flags |= 1
	}
	b = append(b, indexStateVersion, flags)
	b = binary.BigEndian.AppendUint64(b, s.fp)
	b = binary.AppendUvarint(b, uint64(len(s.cursor)))
	b = append(b, s.cursor...)
	return append(b, s.policy...)
}

func decodeIndexState(v []byte) (indexState, error) {
	if len(v) < 11 || v[0] != indexStateVersion {
		return indexState{}, fmt.Errorf("engine: corrupt index state (%d bytes)", len(v))
	}
	s := indexState{building: v[1]&1 != 0, fp: binary.BigEndian.Uint64(v[2:])}
	n, k := binary.Uvarint(v[10:])
	if k <= 0 || uint64(len(v)-10-k) < n {
		return indexState{}, fmt.Errorf("engine: corrupt index state cursor")
	}
	rest := v[10+k:]
	if n > 0 {
		s.cursor = slices.Clone(rest[:n])
	}
	s.policy = slices.Clone(rest[n:])
	return s, nil
}

func newIndexState(p *indexPolicy) indexState {
	return indexState{fp: p.fp, policy: p.canon}
}

// readIndexState reads container rid's index state; found is false when
// there is none (a store from before indexes, or a deleted container).
func readIndexState(r storage.Reader, rid [8]byte) (st indexState, found bool, err error) {
	v, err := r.Get(keyspace.IndexStateKey(rid))
	if errors.Is(err, storage.ErrNotFound) {
		return indexState{}, false, nil
	}
	if err != nil {
		return indexState{}, false, err
	}
	st, err = decodeIndexState(v)
	return st, err == nil, err
}

// compiled returns the compiled form of the state's policy: t's own when
// it is the same, else from the cache.
func (s indexState) compiled(t indexTarget) (*indexPolicy, error) {
	if p := t.catalogPolicy(); p.fp == s.fp {
		return p, nil
	}
	return compiledPolicy(s.policy, s.fp)
}

// indexTarget is the container an index operation works on: all the
// index subsystem knows of it.
type indexTarget struct {
	rid [8]byte
	// pk is the container's partition key definition: the builder splits
	// item keys into <pk> <id> by its number of paths.
	pk document.PKDef
	// policy is the indexing policy of the caller's catalog entry (nil:
	// the default). Writes and queries follow the stored index state's
	// policy, which is this one unless the caller's catalog snapshot is
	// stale; when it is, policy spares compiling the state's again.
	policy *indexPolicy
}

// catalogPolicy returns the policy of t's catalog entry.
func (t indexTarget) catalogPolicy() *indexPolicy {
	if t.policy == nil {
		return defaultIndexPolicy
	}
	return t.policy
}

// policyMemo is a transaction that remembers the index policy it read for
// each container, so a transaction writing many items (a purge batch, a
// transactional batch) reads the index state once, not once per item.
type policyMemo struct {
	storage.Writer
	policies map[[8]byte]*indexPolicy
}

func withPolicyMemo(w storage.Writer) storage.Writer {
	return &policyMemo{Writer: w, policies: map[[8]byte]*indexPolicy{}}
}

// writePolicy returns the policy an item write in transaction r indexes
// under: the stored state's (see "Maintenance" above).
func writePolicy(r storage.Reader, t indexTarget) (*indexPolicy, error) {
	memo, _ := r.(*policyMemo)
	if memo != nil {
		if pol, ok := memo.policies[t.rid]; ok {
			return pol, nil
		}
	}
	pol, err := readWritePolicy(r, t)
	if err == nil && memo != nil {
		memo.policies[t.rid] = pol
	}
	return pol, err
}

func readWritePolicy(r storage.Reader, t indexTarget) (*indexPolicy, error) {
	v, err := r.Get(keyspace.IndexStateKey(t.rid))
	if errors.Is(err, storage.ErrNotFound) {
		return t.catalogPolicy(), nil
	}
	if err != nil {
		return nil, err
	}
	if len(v) >= 10 && v[0] == indexStateVersion && binary.BigEndian.Uint64(v[2:]) == t.catalogPolicy().fp {
		return t.catalogPolicy(), nil
	}
	st, err := decodeIndexState(v)
	if err != nil {
		return nil, err
	}
	return st.compiled(t)
}

// indexAdd writes the index entries of doc, stored at <pkEnc> <id>.
// REQUIRES: called inside the Update that stores the document.
func indexAdd(w storage.Writer, t indexTarget, pkEnc []byte, id string, doc []byte) error {
	return indexReplace(w, t, pkEnc, id, nil, doc)
}

// indexRemove deletes the index entries of doc, stored at <pkEnc> <id>.
// REQUIRES: called inside the Update that deletes the document.
func indexRemove(w storage.Writer, t indexTarget, pkEnc []byte, id string, doc []byte) error {
	return indexReplace(w, t, pkEnc, id, doc, nil)
}

// indexReplace moves the index entries of the item at <pkEnc> <id> from
// version old to version doc (either nil: none): it deletes the entries
// only old has and sets those only doc has.
// REQUIRES: called inside the Update that writes the item.
func indexReplace(w storage.Writer, t indexTarget, pkEnc []byte, id string, old, doc []byte) error {
	pol, err := writePolicy(w, t)
	if err != nil || pol.none {
		return err
	}
	ow, nw := getWalker(), getWalker()
	defer putWalker(ow)
	defer putWalker(nw)
	ow.collect(pol, old)
	nw.collect(pol, doc)
	olds, news := ow.sorted(), nw.sorted()
	prefix := keyspace.IndexPrefix(t.rid)
	item := keys.AppendString(slices.Clip(pkEnc), id)
	var key []byte
	entryKey := func(e []byte) []byte {
		key = pol.appendEntryKey(append(key[:0], prefix...), e, item)
		return key
	}
	// Merge the two sorted lists.
	i, j := 0, 0
	for i < len(olds) || j < len(news) {
		var r int
		switch {
		case i == len(olds):
			r = 1
		case j == len(news):
			r = -1
		default:
			r = bytes.Compare(olds[i], news[j])
		}
		switch {
		case r < 0:
			if err := w.Delete(entryKey(olds[i])); err != nil {
				return err
			}
			i++
		case r > 0:
			if err := w.Set(entryKey(news[j]), nil); err != nil {
				return err
			}
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return nil
}

// entryWalker collects the <path> <value> parts of a document's index
// entries under a policy.
type entryWalker struct {
	pol  *indexPolicy
	segs []pathSeg
	path []byte // appendPath(segs)
	buf  []byte // the entries, back to back
	ends []int  // where each entry ends in buf
	out  [][]byte
}

// collect walks doc (nil: none), a stored JSON object.
func (w *entryWalker) collect(pol *indexPolicy, doc []byte) {
	if doc == nil {
		return
	}
	w.pol = pol
	w.object(doc)
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
	*w = entryWalker{segs: w.segs[:0], path: w.path[:0], buf: w.buf[:0], ends: w.ends[:0], out: w.out[:0]}
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
	ms, _ := document.ObjectMembers(raw)
	var seen map[string]bool
	if len(ms) > 8 {
		seen = make(map[string]bool, len(ms))
	}
	for i := len(ms) - 1; i >= 0; i-- { // last wins
		m := ms[i]
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
		w.emit(idxObject, raw)
		if !w.pol.prunes(w.segs) {
			w.object(raw)
		}
	case '[':
		w.emit(idxArray, raw)
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
		w.emit(indexKind(raw), raw)
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
	if w.buf, ok = appendIndexValue(w.buf, kind, raw); !ok {
		// Not a number a document can hold (checkShape refuses them);
		// leave the path unindexed rather than fail the write.
		w.buf = w.buf[:n]
		return
	}
	w.ends = append(w.ends, len(w.buf))
}

// composite adds the entry of doc in composite index ci: its name, then
// each path's <value> (pkNone where the document has none), complemented
// where the component is descending.
func (w *entryWalker) composite(ci *compositeIndex, doc []byte) {
	w.buf = append(w.buf, ci.prefix...)
	for i, segs := range ci.paths {
		start := len(w.buf)
		raw := valueAt(doc, segs)
		var ok bool
		if raw != nil {
			w.buf, ok = appendIndexValue(w.buf, indexKind(raw), raw)
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

// indexKind is the <value> tag of a raw JSON value.
func indexKind(raw []byte) byte {
	switch raw[0] {
	case '{':
		return idxObject
	case '[':
		return idxArray
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

// appendIndexValue appends the <value> encoding of raw, a JSON value of
// the given kind: the scalar, or a bare tag for arrays and objects. ok is
// false for a number float64 cannot hold.
func appendIndexValue(dst []byte, kind byte, raw []byte) (out []byte, ok bool) {
	switch kind {
	case document.PKString:
		body := raw[1 : len(raw)-1]
		if bytes.IndexByte(body, '\\') >= 0 {
			body = []byte(document.Unquote(raw))
		}
		return appendIndexString(dst, body), true
	case document.PKNumber:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(f, 0) {
			return dst, false
		}
		return appendIndexNumber(dst, f), true
	}
	return append(dst, kind), true
}

func appendIndexNumber(dst []byte, f float64) []byte {
	if f == 0 {
		f = 0 // -0 is 0
	}
	return document.PartitionKey{{Kind: document.PKNumber, Num: f}}.Encode(dst)
}

// skipIndexValue returns what follows the <value> at the start of b.
func skipIndexValue(b []byte) ([]byte, error) {
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
	case idxArray, idxObject:
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
				case idxTruncated:
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

// idxTruncated ends a truncated string in place of the terminator 0x01:
// after the exact string equal to the prefix (0x00 0x01), before any
// string that continues with a character (0x00 sorts below every
// character byte; an escaped NUL is 0x00 0xFF).
const idxTruncated = 0x02

// appendIndexString appends the <value> encoding of a string: the
// partition-key encoding, truncated beyond maxIndexedString bytes.
func appendIndexString(dst, s []byte) []byte {
	dst = append(dst, document.PKString)
	if len(s) <= maxIndexedString {
		return keys.AppendBytes(dst, s)
	}
	dst = keys.AppendBytes(dst, s[:maxIndexedString])
	dst[len(dst)-1] = idxTruncated
	return dst
}
