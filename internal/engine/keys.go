package engine

import "github.com/ebbdb/ebb/internal/keys"

// Storage keyspaces. Every key starts with one of these bytes; the rest
// is a tuple in the keys package's encoding. RIDs are fixed width (a
// database 4 bytes, a container 8), so they need no escaping.
//
//	catDB     0x01 <db-id>                               database resource JSON
//	catColl   0x02 <db-rid:4> <coll-id>                  container resource JSON
//	catOffer  0x03 <offer-id>                            offer resource JSON
//	counter   0x04                                       next resource number (uint64)
//	collMeta  0x05 <coll-rid:8>                          container write state (collState)
//	idxState  0x07 <coll-rid:8>                          index state: policy, building/ready, rebuild cursor
//	doc       0x10 <coll-rid:8> <pk> <id>                itemHeader + document JSON
//	expOwn    0x11 <coll-rid:8> <expireAt:int64> <pk> <id>  items with their own ttl > 0
//	expTs     0x12 <coll-rid:8> <_ts:int64> <pk> <id>       items without a ttl
//	latest    0x13 <coll-rid:8> <lsn:uint64>             <pk> <id> of the item version written at lsn
//	log       0x14 <coll-rid:8> <lsn:uint64>             change record (all-versions-and-deletes feed)
//	logTrim   0x15 <coll-rid:8>                          first LSN the log still holds (uint64)
//	index     0x16 <coll-rid:8> <path> <value> <pk> <id>  secondary index entry, empty value
//
// Items with ttl = -1 are in neither expiry keyspace. Because items
// without their own ttl are kept in _ts order, the due ones under a
// defaultTtl of n are exactly those with _ts <= now-n, so changing
// defaultTtl needs no backfill.
//
// The latest-version index has one entry per stored item version, keyed
// by the LSN that wrote it: a write deletes the entry of the version it
// replaces and adds its own, a delete or purge removes it. Reading the
// latest-version change feed from an LSN is therefore a range scan with
// nothing to deduplicate. The log holds a record for every create,
// replace and delete (TTL purges included), only on containers with a
// changeFeedPolicy.retentionDuration, and is trimmed by that retention.
//
// The secondary index (index.go) has one entry per indexed value of each
// stored item version: <path> is the value's path as text ("/a/b",
// "/tags/[]"), <value> its type-tagged order-preserving encoding (the
// partition-key encoding, plus tags for arrays and objects). An entry's
// <pk> <id> is the item's key after the doc prefix, so the item is one
// Get away.
const (
	spaceCatDB    = 0x01
	spaceCatColl  = 0x02
	spaceCatOffer = 0x03
	spaceCounter  = 0x04
	spaceCollMeta = 0x05
	spaceIdxState = 0x07
	spaceDoc      = 0x10
	spaceExpOwn   = 0x11
	spaceExpTs    = 0x12
	spaceLatest   = 0x13
	spaceLog      = 0x14
	spaceLogTrim  = 0x15
	spaceIndex    = 0x16
)

// collSpaces are the keyspaces holding a container's data, all prefixed
// by its RID; deleting a container deletes these ranges.
var collSpaces = []byte{spaceCollMeta, spaceIdxState, spaceDoc, spaceExpOwn, spaceExpTs, spaceLatest, spaceLog, spaceLogTrim, spaceIndex}

func catDBKey(id string) []byte {
	return keys.AppendString([]byte{spaceCatDB}, id)
}

func catCollPrefix(dbRID [4]byte) []byte {
	return append([]byte{spaceCatColl}, dbRID[:]...)
}

func catCollKey(dbRID [4]byte, id string) []byte {
	return keys.AppendString(catCollPrefix(dbRID), id)
}

func catOfferKey(id string) []byte {
	return keys.AppendString([]byte{spaceCatOffer}, id)
}

func collPrefix(space byte, rid [8]byte) []byte {
	k := make([]byte, 0, 64)
	return append(append(k, space), rid[:]...)
}

func collMetaKey(rid [8]byte) []byte { return collPrefix(spaceCollMeta, rid) }

// docKey is the key of an item; pk is the encoded partition key.
func docKey(rid [8]byte, pk []byte, id string) []byte {
	return keys.AppendString(append(collPrefix(spaceDoc, rid), pk...), id)
}

func expOwnKey(rid [8]byte, expireAt int64, pk []byte, id string) []byte {
	k := keys.AppendInt64(collPrefix(spaceExpOwn, rid), expireAt)
	return keys.AppendString(append(k, pk...), id)
}

func expTsKey(rid [8]byte, ts int64, pk []byte, id string) []byte {
	k := keys.AppendInt64(collPrefix(spaceExpTs, rid), ts)
	return keys.AppendString(append(k, pk...), id)
}

// latestKey is the latest-version index entry of the item version written
// at lsn; its value is the item's key after the doc prefix (<pk> <id>).
func latestKey(rid [8]byte, lsn uint64) []byte {
	return keys.AppendUint64(collPrefix(spaceLatest, rid), lsn)
}

// logKey is the change-log record written at lsn.
func logKey(rid [8]byte, lsn uint64) []byte {
	return keys.AppendUint64(collPrefix(spaceLog, rid), lsn)
}

func logTrimKey(rid [8]byte) []byte { return collPrefix(spaceLogTrim, rid) }
