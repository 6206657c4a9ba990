package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

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
// decrease; seq numbers each new item's _rid.
type collState struct {
	lsn    uint64
	lastTs int64
	seq    uint64
}

func (s collState) encode() []byte {
	b := make([]byte, 0, 24)
	b = binary.BigEndian.AppendUint64(b, s.lsn)
	b = binary.BigEndian.AppendUint64(b, uint64(s.lastTs))
	return binary.BigEndian.AppendUint64(b, s.seq)
}

// readCollState reads the state of container rid; a missing state means
// the container was deleted (after the request looked it up).
func readCollState(r storage.Reader, rid [8]byte) (collState, error) {
	v, err := r.Get(collMetaKey(rid))
	if errors.Is(err, storage.ErrNotFound) {
		return collState{}, notFound("Resource Not Found. The container was deleted.")
	}
	if err != nil {
		return collState{}, err
	}
	if len(v) != 24 {
		return collState{}, fmt.Errorf("engine: corrupt container state (%d bytes)", len(v))
	}
	return collState{
		lsn:    binary.BigEndian.Uint64(v),
		lastTs: int64(binary.BigEndian.Uint64(v[8:])),
		seq:    binary.BigEndian.Uint64(v[16:]),
	}, nil
}

// itemHeader precedes each stored document: what the engine needs to
// decide visibility and etags without parsing the JSON.
type itemHeader struct {
	ts  int64
	ttl ttl.ItemTTL
	lsn uint64
	seq uint64
}

const (
	headerVersion = 1
	headerLen     = 1 + 8 + 4 + 8 + 8
)

func (h itemHeader) append(dst []byte) []byte {
	dst = append(dst, headerVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.ts))
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(h.ttl)))
	dst = binary.BigEndian.AppendUint64(dst, h.lsn)
	return binary.BigEndian.AppendUint64(dst, h.seq)
}

// decodeItem splits a stored value into its header and document JSON.
func decodeItem(v []byte) (itemHeader, []byte, error) {
	if len(v) < headerLen || v[0] != headerVersion {
		return itemHeader{}, nil, fmt.Errorf("engine: corrupt item value (%d bytes)", len(v))
	}
	return itemHeader{
		ts:  int64(binary.BigEndian.Uint64(v[1:])),
		ttl: ttl.ItemTTL(int32(binary.BigEndian.Uint32(v[9:]))),
		lsn: binary.BigEndian.Uint64(v[13:]),
		seq: binary.BigEndian.Uint64(v[21:]),
	}, v[headerLen:], nil
}

// visible is the one TTL predicate of every read path.
func (c *container) visible(h itemHeader, now int64) bool {
	return ttl.Visible(h.ts, h.ttl, c.ttl, now)
}

// expiryKey returns the expiry-index key for an item version, nil for an
// item that can never expire (ttl = -1).
func expiryKey(c *container, h itemHeader, pk []byte, id string) []byte {
	switch {
	case h.ttl > 0:
		return expOwnKey(c.rid, h.ts+int64(h.ttl), pk, id)
	case h.ttl == ttl.Absent:
		return expTsKey(c.rid, h.ts, pk, id)
	}
	return nil
}

func sessionToken(lsn uint64) string { return "0:-1#" + strconv.FormatUint(lsn, 10) }

func (c *container) docRID(seq uint64) string {
	var b [16]byte
	copy(b[:8], c.rid[:])
	binary.LittleEndian.PutUint64(b[8:], seq)
	return ridString(b[:])
}

func (c *container) resource(body []byte, h itemHeader, charge float64) Resource {
	return Resource{
		Body: body, ETag: itemEtag(h.lsn), Charge: charge, Session: sessionToken(h.lsn),
		ContentPath: c.ridStr, AltContentPath: "dbs/" + c.dbID + "/colls/" + c.id,
	}
}

// resolve finds the container an item request addresses.
func (e *Engine) resolve(ref ItemRef) (*container, error) {
	return e.catalogSnapshot().container(ref.DB, ref.Coll)
}

// checkItemID applies the service's rules for item ids.
func checkItemID(raw []byte) (string, error) {
	if raw == nil {
		return "", badRequest("The input content is invalid because the required properties - 'id; ' - are missing")
	}
	if raw[0] != '"' {
		return "", badRequest("The item id must be a string; found %s.", truncate(raw, 64))
	}
	id := unquote(raw)
	switch {
	case id == "":
		return "", badRequest("The item id must not be empty.")
	case len(id) > maxIDBytes:
		return "", badRequest("The item id is %d bytes long; the maximum is %d.", len(id), maxIDBytes)
	case !utf8.ValidString(id):
		return "", badRequest("The item id is not valid UTF-8.")
	}
	return id, nil
}

// pkFromRequest resolves the partition key a point request names.
func (c *container) pkFromRequest(ref ItemRef) (PartitionKey, error) {
	if !ref.HasPK {
		if len(c.pk.paths) == 1 && c.pk.paths[0][0] == "_partitionKey" {
			return PartitionKey{{kind: pkNone}}, nil
		}
		return nil, badRequest("The partition key header x-ms-documentdb-partitionkey is required for this operation on a partitioned container.")
	}
	pk, err := parsePKHeader(ref.PK)
	if err != nil {
		return nil, err
	}
	if len(pk) == 0 {
		pk = make(PartitionKey, len(c.pk.paths))
		for i := range pk {
			pk[i] = pkComponent{kind: pkNone}
		}
	}
	if len(pk) != len(c.pk.paths) {
		return nil, badRequest("The partition key has %d values but the container's partition key %s has %d paths.", len(pk), pkPaths(c.pk), len(c.pk.paths))
	}
	return pk, nil
}

// prepared is a validated document ready to be stored.
type prepared struct {
	body  []byte
	ms    []member
	id    string
	pk    PartitionKey
	pkEnc []byte
	ttl   ttl.ItemTTL
}

// prepare validates a document for container c: its size, id,
// partition key and ttl.
func (c *container) prepare(body []byte) (prepared, error) {
	if len(body) > MaxDocumentSize {
		return prepared{}, &Error{Kind: KindTooLarge, Message: fmt.Sprintf("Request size is too large: the document is %d bytes; the maximum is %d.", len(body), MaxDocumentSize)}
	}
	ms, err := objectBody(body)
	if err != nil {
		return prepared{}, err
	}
	p := prepared{body: body, ms: ms}
	if p.id, err = checkItemID(lookup(ms, "id")); err != nil {
		return prepared{}, err
	}
	if p.pk, err = c.pk.fromDocument(body, ms); err != nil {
		return prepared{}, err
	}
	if p.ttl, err = ttl.CheckItemTTL(lookup(ms, "ttl"), c.ttl); err != nil {
		return prepared{}, &Error{Kind: KindBadRequest, Message: err.Error()}
	}
	p.pkEnc = p.pk.encode(nil)
	return p, nil
}

// WriteItem creates, upserts or replaces an item. For Replace, ref.ID is
// the id in the URL. ifMatch is the If-Match header ("" for none).
func (e *Engine) WriteItem(ctx context.Context, ref ItemRef, kind WriteKind, body []byte, ifMatch string) (Resource, error) {
	c, err := e.resolve(ref)
	if err != nil {
		return Resource{}, err
	}
	p, err := c.prepare(body)
	if err != nil {
		return Resource{}, err
	}
	if kind == Replace && p.id != ref.ID {
		return Resource{}, badRequest("The id '%s' in the request body does not match the id '%s' in the URL.", p.id, ref.ID)
	}
	if ref.HasPK {
		hdr, err := parsePKHeader(ref.PK)
		if err != nil {
			return Resource{}, err
		}
		if len(hdr) > 0 && !hdr.equal(p.pk) {
			return Resource{}, badRequest("PartitionKey extracted from document doesn't match the one specified in the header. The document's partition key is %s; the header says %s.", p.pk.appendJSON(nil), hdr.appendJSON(nil))
		}
	}
	now := e.nowSec()
	key := docKey(c.rid, p.pkEnc, p.id)
	var w written
	err = e.store.Update(ctx, func(tx storage.Writer) error {
		st, err := readCollState(tx, c.rid)
		if err != nil {
			return err
		}
		old, oldHdr, exists, err := getItem(tx, c, key, now)
		if err != nil {
			return err
		}
		switch {
		case kind == Create && exists:
			return ErrConflict
		case kind == Replace && !exists:
			return ErrNotFound
		case ifMatch != "" && kind != Create && !exists:
			return ErrNotFound
		case ifMatch != "" && kind != Create && ifMatch != "*" && ifMatch != itemEtag(oldHdr.lsn):
			return ErrPreconditionFailed
		}
		w, err = putItem(tx, c, st, key, p, old != nil, oldHdr, exists, now)
		return err
	})
	if err != nil {
		return Resource{}, err
	}
	e.purger.noteWrite(c, w.hdr)
	res := c.resource(w.doc, w.hdr, chargeWrite(len(w.doc)))
	res.Created = w.created
	return res, nil
}

// written is what putItem stored.
type written struct {
	doc     []byte
	hdr     itemHeader
	created bool
}

// putItem stores p at key over the version that is there (hadOld: one is
// stored, visible or not; exists: it is visible), keeping the expiry
// index and the container state in step.
// REQUIRES: called inside an Update; st was read in it.
func putItem(tx storage.Writer, c *container, st collState, key []byte, p prepared, hadOld bool, oldHdr itemHeader, exists bool, now int64) (written, error) {
	st.lsn++
	st.lastTs = max(st.lastTs, now)
	h := itemHeader{ts: st.lastTs, ttl: p.ttl, lsn: st.lsn}
	if exists {
		h.seq = oldHdr.seq // replaced in place: _rid is stable
	} else {
		st.seq++
		h.seq = st.seq
	}
	if hadOld {
		if k := expiryKey(c, oldHdr, p.pkEnc, p.id); k != nil {
			if err := tx.Delete(k); err != nil {
				return written{}, err
			}
		}
	}
	rid := c.docRID(h.seq)
	v := make([]byte, 0, headerLen+len(p.body)+160)
	v = h.append(v)
	v = withSystemProps(v, p.body, p.ms, systemProps{
		rid: rid, self: c.self + "docs/" + rid + "/", etag: itemEtag(h.lsn), ts: h.ts,
		extra: [][2]string{{"_attachments", "attachments/"}},
	})
	if err := tx.Set(key, v); err != nil {
		return written{}, err
	}
	if k := expiryKey(c, h, p.pkEnc, p.id); k != nil {
		if err := tx.Set(k, nil); err != nil {
			return written{}, err
		}
	}
	if err := tx.Set(collMetaKey(c.rid), st.encode()); err != nil {
		return written{}, err
	}
	return written{doc: v[headerLen:], hdr: h, created: !exists}, nil
}

// getItem reads the stored version at key. exists reports whether it is
// visible at now; old is non-nil whenever a version is stored, visible or
// not (an expired version still owns expiry-index entries).
func getItem(r storage.Reader, c *container, key []byte, now int64) (old []byte, h itemHeader, exists bool, err error) {
	v, err := r.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, itemHeader{}, false, nil
	}
	if err != nil {
		return nil, itemHeader{}, false, err
	}
	h, doc, err := decodeItem(v)
	if err != nil {
		return nil, itemHeader{}, false, err
	}
	return doc, h, c.visible(h, now), nil
}

// ReadItem returns an item. ifNoneMatch is the If-None-Match header; when
// it equals the item's etag the result is an error of KindNotModified.
func (e *Engine) ReadItem(ctx context.Context, ref ItemRef, ifNoneMatch string) (Resource, error) {
	c, err := e.resolve(ref)
	if err != nil {
		return Resource{}, err
	}
	pk, err := c.pkFromRequest(ref)
	if err != nil {
		return Resource{}, err
	}
	key := docKey(c.rid, pk.encode(nil), ref.ID)
	now := e.nowSec()
	var res Resource
	err = e.store.View(ctx, func(r storage.Reader) error {
		doc, h, exists, err := getItem(r, c, key, now)
		if err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		res = c.resource(doc, h, chargeRead(len(doc)))
		return nil
	})
	if err != nil {
		return Resource{}, err
	}
	if ifNoneMatch != "" && (ifNoneMatch == res.ETag || ifNoneMatch == "*") {
		return res, &Error{Kind: KindNotModified, Message: "Not modified."}
	}
	return res, nil
}

// DeleteItem deletes an item.
func (e *Engine) DeleteItem(ctx context.Context, ref ItemRef, ifMatch string) (Resource, error) {
	c, err := e.resolve(ref)
	if err != nil {
		return Resource{}, err
	}
	pk, err := c.pkFromRequest(ref)
	if err != nil {
		return Resource{}, err
	}
	pkEnc := pk.encode(nil)
	key := docKey(c.rid, pkEnc, ref.ID)
	now := e.nowSec()
	var res Resource
	err = e.store.Update(ctx, func(w storage.Writer) error {
		st, err := readCollState(w, c.rid)
		if err != nil {
			return err
		}
		doc, h, exists, err := getItem(w, c, key, now)
		switch {
		case err != nil:
			return err
		case !exists:
			return ErrNotFound
		case ifMatch != "" && ifMatch != "*" && ifMatch != itemEtag(h.lsn):
			return ErrPreconditionFailed
		}
		if err := removeItem(w, c, key, h, pkEnc, ref.ID); err != nil {
			return err
		}
		st.lsn++
		res = c.resource(nil, itemHeader{lsn: st.lsn}, chargeWrite(len(doc)))
		return w.Set(collMetaKey(c.rid), st.encode())
	})
	return res, err
}

// removeItem deletes an item version and its expiry-index entry.
func removeItem(w storage.Writer, c *container, key []byte, h itemHeader, pkEnc []byte, id string) error {
	if k := expiryKey(c, h, pkEnc, id); k != nil {
		if err := w.Delete(k); err != nil {
			return err
		}
	}
	return w.Delete(key)
}
