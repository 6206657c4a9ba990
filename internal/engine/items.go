package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/feed"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl"
)

// MaxDocumentSize is the largest document Cosmos accepts (2 MB).
const MaxDocumentSize = 2 << 20

// maxIDBytes is the service's limit on an item id.
const maxIDBytes = 1023

// ItemRef names an item (or, with ID empty, a container's items) as a
// request addresses it.
type ItemRef struct {
	DB, Coll, ID string
	// PK is the raw x-ms-documentdb-partitionkey header; HasPK is false
	// when the request had none.
	PK    string
	HasPK bool
	// Triggers are the triggers an item write names (triggers.go).
	Triggers Triggers
}

// WriteKind is the kind of a document write.
type WriteKind int

const (
	Create WriteKind = iota
	Upsert
	Replace
)

// collState is a container's write state, read and written by every
// item write in the same transaction. INVARIANT: lsn and lastTs never
// decrease; seq numbers each new item's _rid. lastTs is the latest _ts
// written, the time guard's floor after a restart; a write's _ts is its
// operation's instant, which is at least lastTs unless the guard resumed
// on a clock behind a stored future (see clock.NewTimeGuard).
//
// items and bytes are the container's usage: how many items are stored
// and the bytes of their documents (as served, system properties
// included; the item header is not counted). Every put and removeItem
// keeps them in the transaction that writes the item, so reading them
// costs one Get. They count stored versions: an expired item the purger
// has not reached, or an item of a partition delete not yet drained,
// still counts, as the service's figures do until its background
// deletion.
//
// INVARIANT: when not counting, items and bytes are exactly those of the
// stored items. While counting (a state written before Ebb kept the
// counters: see usage.go), they are those of the stored items whose key
// (after the doc prefix) is at most cursor, none while cursor is nil;
// writes at keys after the cursor leave them alone, and the count picks
// those items up when it reaches them.
type collState struct {
	lsn    uint64
	lastTs int64
	seq    uint64

	items, bytes int64
	counting     bool
	cursor       []byte
	// split: the partition was split (split.go); its state keeps its
	// last LSN and takes no more writes.
	split bool
}

// A state's encoding: lsn, lastTs and seq (8 bytes each, big-endian),
// then items and bytes (8 bytes each) and, only while counting, the flag
// byte stateCounting and the cursor, or, once split, the flag byte
// stateSplit. A state of legacyStateLen bytes was written before Ebb
// kept the counters: it reads as counting from the first item.
const (
	legacyStateLen = 24
	stateLen       = 40
	stateCounting  = 1
	stateSplit     = 2
)

func (s collState) encode() []byte {
	b := make([]byte, 0, stateLen+1+len(s.cursor))
	b = binary.BigEndian.AppendUint64(b, s.lsn)
	b = binary.BigEndian.AppendUint64(b, uint64(s.lastTs))
	b = binary.BigEndian.AppendUint64(b, s.seq)
	b = binary.BigEndian.AppendUint64(b, uint64(s.items))
	b = binary.BigEndian.AppendUint64(b, uint64(s.bytes))
	switch {
	case s.split:
		b = append(b, stateSplit)
	case s.counting:
		b = append(append(b, stateCounting), s.cursor...)
	}
	return b
}

func decodeCollState(v []byte) (collState, error) {
	switch {
	case len(v) == legacyStateLen, len(v) == stateLen:
	case len(v) > stateLen && v[stateLen] == stateCounting:
	case len(v) == stateLen+1 && v[stateLen] == stateSplit:
	default:
		return collState{}, fmt.Errorf("engine: corrupt container state (%d bytes)", len(v))
	}
	s := collState{
		lsn:    binary.BigEndian.Uint64(v),
		lastTs: int64(binary.BigEndian.Uint64(v[8:])),
		seq:    binary.BigEndian.Uint64(v[16:]),
	}
	if len(v) == legacyStateLen {
		s.counting = true
		return s, nil
	}
	s.items = int64(binary.BigEndian.Uint64(v[24:]))
	s.bytes = int64(binary.BigEndian.Uint64(v[32:]))
	if len(v) > stateLen && v[stateLen] == stateSplit {
		s.split = true
		return s, nil
	}
	if len(v) > stateLen {
		s.counting = true
		if len(v) > stateLen+1 {
			s.cursor = bytes.Clone(v[stateLen+1:])
		}
	}
	return s, nil
}

// equal reports whether s and o are the same state.
func (s collState) equal(o collState) bool {
	return s.lsn == o.lsn && s.lastTs == o.lastTs && s.seq == o.seq && s.items == o.items &&
		s.bytes == o.bytes && s.counting == o.counting && bytes.Equal(s.cursor, o.cursor) && s.split == o.split
}

// counts reports whether the usage counters include the item stored at
// doc key key (see the INVARIANT on collState).
func (s *collState) counts(key []byte) bool {
	if !s.counting {
		return true
	}
	return s.cursor != nil && bytes.Compare(key[docPrefixLen:], s.cursor) <= 0
}

// account adds n items of size bytes (either may be negative) to the
// usage if the counters include the item at doc key key.
func (s *collState) account(key []byte, n, size int) {
	if s.counts(key) {
		s.items += int64(n)
		s.bytes += int64(size)
	}
}

// docPrefixLen is the length of a doc key's prefix: the keyspace byte and
// the container's RID.
var docPrefixLen = len(keyspace.CollPrefix(keyspace.Doc, [8]byte{}))

// readPartitionState reads the state of physical partition p of
// container rid; a missing state means the container was deleted (after
// the request looked it up).
func readPartitionState(r storage.Reader, rid [8]byte, p int) (collState, error) {
	v, err := r.Get(keyspace.PartitionStateKey(rid, p))
	if errors.Is(err, storage.ErrNotFound) {
		return collState{}, dberr.NotFound("Resource Not Found. The container was deleted.")
	}
	if err != nil {
		return collState{}, err
	}
	return decodeCollState(v)
}

// updatePartition runs fn in a write transaction in the lock domain of
// physical partition p of c (storage.Store.UpdateLocked), whose lock is
// the partition's write state. Every transaction that writes a
// partition's data, or reads it to decide a write, holds its lock: here
// for one partition, in updateContainer for all of c's. The catalog's
// transactions are the exception: they read-modify-write the catalog's
// counter too, so they run as serializable Updates and write the locks
// instead (touchPartitions).
func (e *Engine) updatePartition(ctx context.Context, c *container, p int, fn func(storage.Writer) error) error {
	return e.store.UpdateLocked(ctx, c.partitionLock(p), fn)
}

// updateContainer runs fn in a write transaction that holds the locks of
// all of c's partitions, for work over the whole container (an index
// rebuild batch). It fails with errPartitionSplit, before fn runs, when
// one was split after c was read: the split's children would not be
// locked.
func (e *Engine) updateContainer(ctx context.Context, c *container, fn func(storage.Writer) error) error {
	return e.store.UpdateLocked(ctx, c.partitionStateKeys(), func(w storage.Writer) error {
		for _, p := range c.layout.ids() {
			if _, err := readWritableState(w, c.rid, p); err != nil {
				return err
			}
		}
		return fn(w)
	})
}

// touchPartitions reads the states of c's partitions ps (all of them
// when none is named) and writes them back unchanged, for a catalog
// transaction that changes what the partitions' data transactions read
// or write: writing their locks orders it with them (see
// updatePartition). It returns the states read.
func touchPartitions(w storage.Writer, c *container, ps ...int) ([]collState, error) {
	if len(ps) == 0 {
		ps = c.layout.ids()
	}
	sts := make([]collState, len(ps))
	for i, p := range ps {
		st, err := readWritableState(w, c.rid, p)
		if err != nil {
			return nil, err
		}
		if err := w.Set(keyspace.PartitionStateKey(c.rid, p), st.encode()); err != nil {
			return nil, err
		}
		sts[i] = st
	}
	return sts, nil
}

// itemExpiryKey returns the expiry-index key for an item version, nil for an
// item that can never expire (ttl = -1).
func itemExpiryKey(c *container, h document.ItemHeader, pk []byte, id string) []byte {
	switch {
	case h.TTL > 0:
		return keyspace.ExpiryKey(keyspace.ExpOwn, c.rid, h.Ts+int64(h.TTL), pk, id)
	case h.TTL == ttl.Absent:
		return keyspace.ExpiryKey(keyspace.ExpTs, c.rid, h.Ts, pk, id)
	}
	return nil
}

// sessionToken is the session token of a write or read at lsn: its
// partition's range id and its number there.
func sessionToken(lsn uint64) string {
	if p := keyspace.LSNPartition(lsn); p > 0 {
		return strconv.Itoa(p) + ":-1#" + strconv.FormatUint(keyspace.LSNCount(lsn), 10)
	}
	return "0:-1#" + strconv.FormatUint(lsn, 10)
}

func (c *container) docRID(seq uint64) string {
	var b [16]byte
	copy(b[:8], c.rid[:])
	binary.LittleEndian.PutUint64(b[8:], seq)
	return resource.RIDString(b[:])
}

func (c *container) resource(body []byte, h document.ItemHeader, charge float64) Resource {
	return Resource{
		Body: body, ETag: itemEtag(h.LSN), Charge: charge, Session: sessionToken(h.LSN),
		ContentPath: c.ridStr, AltContentPath: "dbs/" + c.dbID + "/colls/" + c.id,
	}
}

// resolve finds the container an item request addresses.
func (e *Engine) resolve(ref ItemRef) (*container, error) {
	return e.container(ref.DB, ref.Coll)
}

// checkItemID applies the service's rules for item ids.
func checkItemID(raw []byte) (string, error) {
	if raw == nil {
		return "", dberr.BadRequest("The input content is invalid because the required properties - 'id; ' - are missing")
	}
	if raw[0] != '"' {
		return "", dberr.BadRequest("The item id must be a string; found %s.", document.Truncate(raw, 64))
	}
	id := document.Unquote(raw)
	switch {
	case id == "":
		return "", dberr.BadRequest("The item id must not be empty.")
	case len(id) > maxIDBytes:
		return "", dberr.BadRequest("The item id is %d bytes long; the maximum is %d.", len(id), maxIDBytes)
	case !utf8.ValidString(id):
		return "", dberr.BadRequest("The item id is not valid UTF-8.")
	}
	return id, nil
}

// pkFromRequest resolves the partition key a point request names.
func (c *container) pkFromRequest(ref ItemRef) (document.PartitionKey, error) {
	if !ref.HasPK {
		if len(c.pk.Paths) == 1 && c.pk.Paths[0][0] == "_partitionKey" {
			return document.PartitionKey{{Kind: document.PKNone}}, nil
		}
		return nil, dberr.BadRequest("The partition key header x-ms-documentdb-partitionkey is required for this operation on a partitioned container.")
	}
	pk, err := document.ParsePKHeader(ref.PK)
	if err != nil {
		return nil, err
	}
	if len(pk) == 0 {
		pk = make(document.PartitionKey, len(c.pk.Paths))
		for i := range pk {
			pk[i] = document.PKComponent{Kind: document.PKNone}
		}
	}
	if len(pk) != len(c.pk.Paths) {
		return nil, dberr.BadRequest("The partition key has %d values but the container's partition key %s has %d paths.", len(pk), resource.PKPaths(c.pk), len(c.pk.Paths))
	}
	return pk, nil
}

// prepared is a validated document ready to be stored.
type prepared struct {
	body  []byte
	ms    []document.Member
	id    string
	pk    document.PartitionKey
	pkEnc []byte
	ttl   ttl.ItemTTL
	// ts, when not 0, is the _ts to store instead of the operation's
	// instant: an imported item keeps its last-modified time.
	ts int64
}

// prepare validates a document for container c: its size, id,
// partition key and ttl.
func (c *container) prepare(body []byte) (prepared, error) {
	if err := checkSize(body); err != nil {
		return prepared{}, err
	}
	ms, err := document.ObjectBody(body)
	if err != nil {
		return prepared{}, err
	}
	return c.prepareMembers(body, ms)
}

// checkSize refuses a document over the service's size limit.
func checkSize(body []byte) error {
	if len(body) > MaxDocumentSize {
		return &Error{Kind: KindTooLarge, Message: fmt.Sprintf("Request size is too large: the document is %d bytes; the maximum is %d.", len(body), MaxDocumentSize)}
	}
	return nil
}

// prepareMembers is prepare of a valid document whose top-level members
// are ms.
func (c *container) prepareMembers(body []byte, ms []document.Member) (prepared, error) {
	p := prepared{body: body, ms: ms}
	var err error
	if p.id, err = checkItemID(document.Lookup(ms, "id")); err != nil {
		return prepared{}, err
	}
	if p.pk, err = c.pk.FromDocument(body, ms); err != nil {
		return prepared{}, err
	}
	if p.ttl, err = ttl.CheckItemTTL(document.Lookup(ms, "ttl"), c.ttl); err != nil {
		return prepared{}, &Error{Kind: KindBadRequest, Message: err.Error()}
	}
	p.pkEnc = p.pk.Encode(nil)
	return p, nil
}

// prepareWrite validates a create, upsert or replace of body: the
// document itself (prepare), that a replace's body names the item it
// replaces (id), and that the document's partition key is the one the
// request names (hdr; nil when the request names none).
func (c *container) prepareWrite(kind WriteKind, body []byte, id string, hdr document.PartitionKey) (prepared, error) {
	p, err := c.prepare(body)
	if err != nil {
		return prepared{}, err
	}
	if kind == Replace && p.id != id {
		return prepared{}, dberr.BadRequest("The id '%s' in the request body does not match the id '%s' in the URL.", p.id, id)
	}
	if len(hdr) > 0 && !hdr.Equal(p.pk) {
		return prepared{}, dberr.BadRequest("PartitionKey extracted from document doesn't match the one specified in the header. The document's partition key is %s; the header says %s.", p.pk.AppendJSON(nil), hdr.AppendJSON(nil))
	}
	return p, nil
}

// WriteItem creates, upserts or replaces an item. For Replace, ref.ID is
// the id in the URL. ifMatch is the If-Match header ("" for none).
func (e *Engine) WriteItem(ctx context.Context, ref ItemRef, kind WriteKind, body []byte, ifMatch string) (Resource, error) {
	return retrySplit(ctx, e, func() (Resource, error) { return e.writeItem(ctx, ref, kind, body, ifMatch) })
}

// writeItem is WriteItem, run again by retrySplit when it finds its
// partition split.
func (e *Engine) writeItem(ctx context.Context, ref ItemRef, kind WriteKind, body []byte, ifMatch string) (Resource, error) {
	c, err := e.resolve(ref)
	if err != nil {
		return Resource{}, err
	}
	var hdr document.PartitionKey
	if ref.HasPK {
		if hdr, err = document.ParsePKHeader(ref.PK); err != nil {
			return Resource{}, err
		}
	}
	p, err := c.prepareWrite(kind, body, ref.ID, hdr)
	if err != nil {
		return Resource{}, err
	}
	if ref.Triggers.named() {
		return e.writeWithTriggers(ctx, c, ref, kind, p, ifMatch)
	}
	key := keyspace.DocKey(c.rid, p.pkEnc, p.id)
	var w written
	err = e.updateItem(ctx, c, key, func(t *itemTx) error {
		var err error
		w, err = t.write(kind, key, p, ifMatch)
		return err
	})
	if err != nil {
		return Resource{}, err
	}
	res := c.resource(w.doc, w.hdr, throughput.Write(len(w.doc)))
	res.Created = w.created
	return res, nil
}

// itemTx is one storage transaction over a container's items. The
// single-item requests and the batch run the same operations on it
// (write, patch, delete, read), so each rule is written once. Every
// change takes the next LSN from st, which updateItems stores once at
// the end; each keeps the expiry index, the latest-version index and,
// when the container keeps one, the change log in step with the item.
//
// REQUIRES of every operation: any error the client caused is returned
// before the operation's first write, so a failed operation in a bulk
// request leaves nothing behind in the transaction it shares.
type itemTx struct {
	w  storage.Writer
	c  *container
	st collState
	// items reads c's items at the operation's one instant; now is that
	// instant in epoch seconds, at the instant itself (for the query
	// environment of patch conditions).
	items itemReader
	now   int64
	at    time.Time
	// logged: the container keeps the all-versions-and-deletes log.
	logged bool
	// wrote are the versions written, for the purger's deadlines.
	wrote []document.ItemHeader
}

// updateItems runs fn in one storage transaction over the items of c's
// physical partition p, with one "now" for every operation in it, and
// stores the partition's state.
func (e *Engine) updateItems(ctx context.Context, c *container, p int, fn func(t *itemTx) error) error {
	return e.updateItemsAt(ctx, c, p, e.now(), nil, fn)
}

// updateItem is updateItems for operations on the item at doc key key.
func (e *Engine) updateItem(ctx context.Context, c *container, key []byte, fn func(t *itemTx) error) error {
	p, err := c.partitionOfKey(key[docPrefixLen:])
	if err != nil {
		return err
	}
	var ahead [][]byte // read ahead only where a read is a round trip
	if e.shared {
		ahead = [][]byte{key}
		// One item's operation reads and writes a few keys: the shared
		// store may run it with other partitions' (storage.Brief).
		ctx = storage.Brief(ctx)
	}
	return e.updateItemsAt(ctx, c, p, e.now(), ahead, fn)
}

// updateItemsAt is updateItems at instant at, for operations on the
// items at docKeys (nil if not known ahead). The purger's batches run at
// the purge instant, which is never ahead of a request's.
//
// On a shared store, the transaction's first round trip reads the
// partition's state, the index state and the items at docKeys with the
// lock, so a point write holds the lock for two round trips (this one,
// and its writes with COMMIT) rather than one per read.
func (e *Engine) updateItemsAt(ctx context.Context, c *container, p int, at time.Time, docKeys [][]byte, fn func(t *itemTx) error) error {
	var t *itemTx
	lock := c.partitionLock(p)
	err := e.store.UpdateLocked(ctx, lock, func(tx storage.Writer) error { // updatePartition's
		if e.shared {
			// The lock statement reads the state itself.
			ahead := append([][]byte{keyspace.IndexStateKey(c.rid)}, docKeys...)
			var err error
			if tx, err = storage.Prefetch(tx, ahead); err != nil {
				return err
			}
		}
		w := index.WithPolicyMemo(tx)
		st, err := readWritableState(w, c.rid, p)
		if err != nil {
			return err
		}
		// fn may run again after a conflict: start from nothing.
		t = newItemTx(w, c, st, at)
		if err := fn(t); err != nil {
			return err
		}
		if t.st.equal(st) {
			return nil // only reads
		}
		return w.Set(lock[0], t.st.encode())
	})
	if err != nil {
		return err
	}
	e.committed(c, p, t)
	return nil
}

// committed tells the background work what item transaction t, of
// c's partition p, committed: the purger each item version it wrote,
// which may bring its container's deadline forward, and the partition
// grower that it left p's documents past the split size, unless p was
// found unsplittable (splitsize.go).
func (e *Engine) committed(c *container, p int, t *itemTx) {
	for _, h := range t.wrote {
		e.noteWrite(c, h)
	}
	if e.splitSize > 0 && t.st.bytes > e.splitSize && !t.st.counting && !e.splitSkips.skip(partitionRef{c.rid, p}, t.st.bytes) {
		e.indexer.kick()
	}
}

// updateItemsIn runs fn in one storage transaction that holds the locks
// of c's partitions parts (all of them when nil), at instant at: fn gets
// the item transaction of each partition it writes from txFor, and the
// states of those it wrote are stored at the end. For work over several
// partitions at once: an import, which is atomic; a purge batch or a
// bulk request, which one transaction (one WAL sync on Pebble) serves
// better than one per partition.
func (e *Engine) updateItemsIn(ctx context.Context, c *container, at time.Time, parts []int, fn func(txFor func(p int) (*itemTx, error)) error) error {
	locks := c.partitionStateKeys()
	if parts != nil {
		locks = locks[:0:0]
		for _, p := range parts {
			locks = append(locks, c.partitionLock(p)[0])
		}
	}
	var txs map[int]*itemTx
	err := e.store.UpdateLocked(ctx, locks, func(tx storage.Writer) error {
		w := index.WithPolicyMemo(tx)
		txs = map[int]*itemTx{} // fn may run again: start from nothing
		began := map[int]collState{}
		err := fn(func(p int) (*itemTx, error) {
			if parts != nil && !slices.Contains(parts, p) {
				return nil, fmt.Errorf("engine: partition %d written in a transaction of partitions %v", p, parts)
			}
			if txs[p] == nil {
				st, err := readWritableState(w, c.rid, p)
				if err != nil {
					return nil, err
				}
				began[p], txs[p] = st, newItemTx(w, c, st, at)
			}
			return txs[p], nil
		})
		if err != nil {
			return err
		}
		for p, t := range txs {
			if t != nil && !t.st.equal(began[p]) {
				if err := w.Set(keyspace.PartitionStateKey(c.rid, p), t.st.encode()); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for p, t := range txs {
		if t != nil {
			e.committed(c, p, t)
		}
	}
	return nil
}

// newItemTx is a transaction over c's items in w, whose state was st
// when it began, at instant at.
func newItemTx(w storage.Writer, c *container, st collState, at time.Time) *itemTx {
	now := at.Unix()
	return &itemTx{w: w, c: c, st: st, items: itemReader{r: w, c: c, now: now}, now: now, at: at, logged: c.logRetention() > 0}
}

// write creates, upserts or replaces the item p at key with WriteItem's
// preconditions (ifMatch "" for none).
// The stored version is lent (itemReader.lend), not copied: put is done
// with it before the lend ends.
func (t *itemTx) write(kind WriteKind, key []byte, p prepared, ifMatch string) (written, error) {
	var w written
	err := t.items.lend(key, func(old storedItem, exists bool) error {
		switch {
		case kind == Create && exists:
			return ErrConflict
		case kind == Replace && !exists:
			return ErrNotFound
		case ifMatch != "" && kind != Create && !exists:
			return ErrNotFound
		case ifMatch != "" && kind != Create && ifMatch != "*" && ifMatch != itemEtag(old.h.LSN):
			return ErrPreconditionFailed
		}
		var err error
		w, err = t.put(key, p, old, exists)
		return err
	})
	return w, err
}

// delete deletes the visible item at key with DeleteItem's precondition
// and returns the size of what it deleted.
func (t *itemTx) delete(key, pkEnc []byte, id, ifMatch string) (int, error) {
	var n int
	err := t.lendMatching(key, ifMatch, func(old storedItem) error {
		n = len(old.doc)
		v := itemVersion{key: key, pkEnc: pkEnc, id: id, storedItem: old}
		return removeItem(t.w, t.c, &t.st, t.now, t.logged, v, false)
	})
	return n, err
}

// lendMatching lends fn the visible item at key, once it has passed
// ifMatch (the If-Match header, "" for none): 404 when there is none, 412
// when its etag differs. The item is valid only while fn runs.
func (t *itemTx) lendMatching(key []byte, ifMatch string, fn func(old storedItem) error) error {
	return t.items.lend(key, func(old storedItem, exists bool) error {
		switch {
		case !exists:
			return ErrNotFound
		case ifMatch != "" && ifMatch != "*" && ifMatch != itemEtag(old.h.LSN):
			return ErrPreconditionFailed
		}
		return fn(old)
	})
}

// written is what put stored.
type written struct {
	doc     []byte
	hdr     document.ItemHeader
	created bool
}

// version is a stored item version with its address.
type itemVersion struct {
	key   []byte
	pkEnc []byte
	id    string
	storedItem
}

// put stores p at key over old, the version stored there (old.doc nil:
// none), which is visible when exists.
func (t *itemTx) put(key []byte, p prepared, old storedItem, exists bool) (written, error) {
	c, st := t.c, &t.st
	if err := c.checkPartition(key, st); err != nil {
		return written{}, err
	}
	// Refuse a unique-key violation before anything is written: in a
	// bulk request the other operations still commit.
	claim, err := t.checkUnique(p.pkEnc, p.id, old, exists, p.body)
	if err != nil {
		return written{}, err
	}
	if old.doc != nil && !exists {
		// The stored version has expired but the purger has not reached
		// it. Purge it here, with its own LSN and delete record, so the
		// log shows every expiry exactly once and before the new version.
		v := itemVersion{key: key, pkEnc: p.pkEnc, id: p.id, storedItem: old}
		if err := removeItem(t.w, c, st, t.now, t.logged, v, !t.items.deletedByPartition(key, old.h)); err != nil {
			return written{}, err
		}
	}
	st.lsn++
	st.lastTs = max(st.lastTs, t.now)
	h := document.ItemHeader{Ts: cmp.Or(p.ts, t.now), TTL: p.ttl, LSN: st.lsn}
	var oldExpiry []byte
	if exists {
		h.Seq = old.h.Seq // replaced in place: _rid is stable
		st.account(key, -1, -len(old.doc))
		oldExpiry = itemExpiryKey(c, old.h, p.pkEnc, p.id)
		if err := t.w.Delete(keyspace.LatestKey(c.rid, old.h.LSN)); err != nil {
			return written{}, err
		}
	} else {
		st.seq++
		h.Seq = st.seq
	}
	rid := c.docRID(h.Seq)
	v := document.StoredItem(h, p.body, p.ms, document.SystemProps{
		RID: rid, Self: c.self + "docs/" + rid + "/", Etag: itemEtag(h.LSN), Ts: h.Ts,
		Extra: itemLinks,
	})
	if err := t.w.Set(key, v); err != nil {
		return written{}, err
	}
	if err := writeVectors(t.w, c, key, v[document.HeaderLen:]); err != nil {
		return written{}, err
	}
	if err := writeTextEntry(t.w, c, key, v); err != nil {
		return written{}, err
	}
	// An entry's value is empty, so a rewrite that keeps its expiry key
	// (the same second, the same ttl) keeps its entry as it is, rather
	// than deleting and setting it again: a row update on PostgreSQL,
	// two memtable entries on Pebble.
	if k := itemExpiryKey(c, h, p.pkEnc, p.id); !bytes.Equal(k, oldExpiry) {
		if oldExpiry != nil {
			if err := t.w.Delete(oldExpiry); err != nil {
				return written{}, err
			}
		}
		if k != nil {
			if err := t.w.Set(k, nil); err != nil {
				return written{}, err
			}
		}
	}
	doc := v[document.HeaderLen:]
	st.account(key, 1, len(doc))
	if err := claim.claim(t.w); err != nil {
		return written{}, err
	}
	if err := indexPut(t.w, c, p.pkEnc, p.id, old, exists, doc); err != nil {
		return written{}, err
	}
	if err := t.w.Set(keyspace.LatestKey(c.rid, h.LSN), feed.LatestValue(c.rid, key)); err != nil {
		return written{}, err
	}
	if t.logged {
		rec := feed.Record{LSN: h.LSN, Crts: h.Ts, Current: doc, PKEnc: p.pkEnc}
		if exists {
			rec.Op, rec.PreviousLSN = feed.OpReplace, old.h.LSN
		}
		if err := t.w.Set(keyspace.LogKey(c.rid, h.LSN), rec.Encode(c.pk)); err != nil {
			return written{}, err
		}
	}
	t.wrote = append(t.wrote, h)
	return written{doc: doc, hdr: h, created: !exists}, nil
}

// itemLinks are the resource links an item carries after its _etag.
var itemLinks = [][2]string{{"_attachments", "attachments/"}}

// resolvePoint finds the container, encoded partition key and storage
// key that a point request (read, delete, patch) addresses.
func (e *Engine) resolvePoint(ref ItemRef) (c *container, pkEnc, key []byte, err error) {
	if c, err = e.resolve(ref); err != nil {
		return nil, nil, nil, err
	}
	pk, err := c.pkFromRequest(ref)
	if err != nil {
		return nil, nil, nil, err
	}
	pkEnc = pk.Encode(nil)
	return c, pkEnc, keyspace.DocKey(c.rid, pkEnc, ref.ID), nil
}

// ReadItem returns an item. ifNoneMatch is the If-None-Match header; when
// it equals the item's etag the result is an error of KindNotModified,
// with the item's etag and session token.
func (e *Engine) ReadItem(ctx context.Context, ref ItemRef, ifNoneMatch string) (Resource, error) {
	var res Resource
	notModified, err := e.ReadItemTo(ctx, ref, ifNoneMatch, func(r Resource) error {
		res = r
		res.Body = bytes.Clone(r.Body)
		return nil
	})
	if err != nil {
		return notModified, err
	}
	return res, nil
}

// ReadItemTo is ReadItem for a caller that writes the item out and keeps
// nothing: it calls write with the item, whose Body is the store's own
// memory and valid only until write returns, so the document is not
// copied on its way out. write is called only when ReadItem would return
// the item; ReadItemTo then returns write's error. On KindNotModified it
// returns the item's etag and session token, as ReadItem does.
func (e *Engine) ReadItemTo(ctx context.Context, ref ItemRef, ifNoneMatch string, write func(Resource) error) (Resource, error) {
	c, _, key, err := e.resolvePoint(ref)
	if err != nil {
		return Resource{}, err
	}
	// A point read needs no snapshot: one consistent read.
	items := itemReader{r: storeReader{ctx, e.store}, c: c, now: e.now().Unix()}
	h, err := items.readTo(key, ifNoneMatch, func(it storedItem) error {
		return write(c.resource(it.doc, it.h, throughput.Read(len(it.doc))))
	})
	if IsKind(err, KindNotModified) {
		return c.resource(nil, h, 0), err
	}
	return Resource{}, err
}

// DeleteItem deletes an item.
func (e *Engine) DeleteItem(ctx context.Context, ref ItemRef, ifMatch string) (Resource, error) {
	return retrySplit(ctx, e, func() (Resource, error) { return e.deleteItem(ctx, ref, ifMatch) })
}

// deleteItem is DeleteItem, run again by retrySplit when it finds its
// partition split.
func (e *Engine) deleteItem(ctx context.Context, ref ItemRef, ifMatch string) (Resource, error) {
	c, pkEnc, key, err := e.resolvePoint(ref)
	if err != nil {
		return Resource{}, err
	}
	if ref.Triggers.named() {
		return e.deleteWithTriggers(ctx, c, ref, ifMatch)
	}
	var res Resource
	err = e.updateItem(ctx, c, key, func(t *itemTx) error {
		n, err := t.delete(key, pkEnc, ref.ID, ifMatch)
		if err == nil {
			res = c.resource(nil, document.ItemHeader{LSN: t.st.lsn}, throughput.Write(n))
		}
		return err
	})
	if err != nil {
		return Resource{}, err
	}
	return res, nil
}

// removeItem deletes the stored version v, with its expiry-index and
// latest-version entries, under the next LSN of st; when the container
// keeps the change log (logged), it records the delete there, marked as
// a TTL expiry when expired. The purger calls it too, so a purge is a
// delete in every index and in the feed.
// REQUIRES: called inside an Update; st was read in it and is stored by
// the caller.
func removeItem(w storage.Writer, c *container, st *collState, now int64, logged bool, v itemVersion, expired bool) error {
	if err := c.checkPartition(v.key, st); err != nil {
		return err
	}
	st.lsn++
	st.lastTs = max(st.lastTs, now)
	st.account(v.key, -1, -len(v.doc))
	if k := itemExpiryKey(c, v.h, v.pkEnc, v.id); k != nil {
		if err := w.Delete(k); err != nil {
			return err
		}
	}
	if err := w.Delete(keyspace.LatestKey(c.rid, v.h.LSN)); err != nil {
		return err
	}
	if err := w.Delete(v.key); err != nil {
		return err
	}
	if err := deleteVectors(w, c, v.key); err != nil {
		return err
	}
	if err := deleteTextEntry(w, c, v.key); err != nil {
		return err
	}
	if err := recordGone(w, c, st.lsn, v.key); err != nil {
		return err
	}
	if err := index.Remove(w, c.indexTarget(), v.pkEnc, v.id, v.doc); err != nil {
		return err
	}
	if err := releaseUniqueOf(w, c, v.pkEnc, v.id, v.doc); err != nil {
		return err
	}
	if !logged {
		return nil
	}
	rec := feed.Record{
		Op: feed.OpDelete, LSN: st.lsn, Crts: now, PreviousLSN: v.h.LSN, Previous: v.doc,
		Expired: expired, ID: v.id, PKEnc: v.pkEnc,
	}
	return w.Set(keyspace.LogKey(c.rid, st.lsn), rec.Encode(c.pk))
}
