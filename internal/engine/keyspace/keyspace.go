// Package keyspace is the layout of everything the engine stores: the
// table below, one constructor per key, and the one codec of the expiry
// keys. Every package of the engine builds its keys here, so the layout
// is written down once and two subsystems cannot disagree on it.
package keyspace

import (
	"fmt"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/keys"
)

// Storage keyspaces. Every key starts with one of these bytes; the rest
// is a tuple in the keys package's encoding. RIDs are fixed width (a
// database 4 bytes, a container 8), so they need no escaping.
//
//	CatDB     0x01 <db-id>                               database resource JSON
//	CatColl   0x02 <db-rid:4> <coll-id>                  container resource JSON
//	CatOffer  0x03 <offer-id>                            offer resource JSON
//	Counter   0x04                                       next resource number (uint64)
//	CollMeta  0x05 <coll-rid:8>                          container write state (collState): LSN, _ts, seq, usage
//	Lease     0x06 <coll-rid:8>                          purge lease on a shared store: expiry + node id
//	IdxState  0x07 <coll-rid:8>                          index state: policy, building/ready, rebuild cursor and count
//	ClockMark 0x08                                       latest _ts written under a manual clock (int64; MaxInt64 while one runs)
//	Doc       0x10 <coll-rid:8> <pk> <id>                ItemHeader + document JSON
//	ExpOwn    0x11 <coll-rid:8> <expireAt:int64> <pk> <id>  items with their own ttl > 0
//	ExpTs     0x12 <coll-rid:8> <_ts:int64> <pk> <id>       items without a ttl
//	Latest    0x13 <coll-rid:8> <lsn:uint64>             <pk> <id> of the item version written at lsn
//	Log       0x14 <coll-rid:8> <lsn:uint64>             change record (all-versions-and-deletes feed)
//	LogTrim   0x15 <coll-rid:8>                          first LSN the log still holds (uint64)
//	Index     0x16 <coll-rid:8> <path> <value> <pk> <id>  secondary index entry, empty value
//	Unique    0x17 <coll-rid:8> <key#:1> <pk> <values>   unique-key entry: the holder's id
//	PKDelete  0x18 <coll-rid:8> <pk>                     a partition-key delete in progress: LSN (uint64) + request _ts (int64)
//	Script    0x19 <coll-rid:8> <kind:1> <id>            stored procedure, trigger or user-defined function resource JSON
//	CatUser   0x1A <db-rid:4> <user-id>                  user resource JSON
//	CatPerm   0x1B <user-rid:8> <perm-id>                permission resource JSON (without _token); a user's _rid starts with its database's
//	Vec       0x1C <coll-rid:8> <path#:1> <pk> <id>      the item's vector at the container's embedding path number path#: float32s, little-endian
//	Txt       0x1D <coll-rid:8> <pk> <id>                the item's full-text entry: its header, and per fullTextPolicy path its analyzed length and terms (engine/textindex.go)
//	Gone      0x1E <coll-rid:8> <lsn:uint64>             <pk> <id> of the item removed at lsn, in a container with a vector or full-text policy (engine/gone.go)
//	Parts     0x1F <coll-rid:8>                          the container's partition layout (engine.partitionLayout), when it has more than one partition or was pinned
//
// A container's items are spread over its physical partitions by the
// effective partition key (EPK) of their partition key, as on the
// service. Each partition has its own write state (CollMeta, the
// container's key for partition 0 and the container's key followed by
// the partition's number, uint16, for the others), and so its own log
// sequence: an LSN holds its partition's number in its top 16 bits
// (PartitionLSN), so the LSN-keyed keyspaces (Latest, Log, Gone) keep
// each partition's entries together and in its order, and a container
// written before it had partitions is partition 0 as it stands. Clients
// see an LSN without its partition (LSNCount), next to the partition's
// range id.
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
// The secondary index (package index) has one entry per indexed value
// of each stored item version: <path> is the value's path as text
// ("/a/b", "/tags/[]"), <value> its type-tagged order-preserving
// encoding (the partition-key encoding, plus tags for arrays and
// objects). An entry's <pk> <id> is the item's key after the doc prefix,
// so the item is one Get away.
const (
	CatDB    = 0x01
	CatColl  = 0x02
	CatOffer = 0x03
	Counter  = 0x04
	CollMeta = 0x05
	Lease    = 0x06
	IdxState = 0x07
	// ClockMark records that data was written under a manual clock
	// (--clock-control), whose _ts may lie ahead of the real clock and so
	// must not hold a real clock back after a restart.
	ClockMark = 0x08
	Doc       = 0x10
	ExpOwn    = 0x11
	ExpTs     = 0x12
	Latest    = 0x13
	Log       = 0x14
	LogTrim   = 0x15
	Index     = 0x16
	Unique    = 0x17
	PKDelete  = 0x18
	Script    = 0x19
	CatUser   = 0x1A
	CatPerm   = 0x1B
	Vec       = 0x1C
	Txt       = 0x1D
	Gone      = 0x1E
	Parts     = 0x1F
)

// MaxPartitions bounds a container's physical partitions.
const MaxPartitions = 256

// partitionShift is where an LSN's partition number starts.
const partitionShift = 48

// PartitionLSN is LSN n of partition p: PartitionLSN(p, 0) is the LSN a
// partition's log starts after.
func PartitionLSN(p int, n uint64) uint64 { return uint64(p)<<partitionShift | n }

// LSNPartition is the partition an LSN belongs to.
func LSNPartition(lsn uint64) int { return int(lsn >> partitionShift) }

// LSNCount is an LSN's number within its partition, which clients see.
func LSNCount(lsn uint64) uint64 { return lsn & (1<<partitionShift - 1) }

// CollSpaces are the keyspaces holding a container's data, all prefixed
// by its RID; deleting a container deletes these ranges.
var CollSpaces = []byte{CollMeta, IdxState, Doc, ExpOwn, ExpTs, Latest, Log, LogTrim, Index, Unique, PKDelete, Script, Vec, Txt, Gone, Parts}

// ScriptPrefix is the prefix of a container's scripts of one kind.
func ScriptPrefix(rid [8]byte, kind byte) []byte {
	return append(CollPrefix(Script, rid), kind)
}

// ScriptKey is the key of the script id of one kind.
func ScriptKey(rid [8]byte, kind byte, id string) []byte {
	return keys.AppendString(ScriptPrefix(rid, kind), id)
}

// CatUserPrefix is the prefix of a database's users.
func CatUserPrefix(dbRID [4]byte) []byte { return append([]byte{CatUser}, dbRID[:]...) }

// CatUserKey is the key of user id of a database.
func CatUserKey(dbRID [4]byte, id string) []byte {
	return keys.AppendString(CatUserPrefix(dbRID), id)
}

// CatPermPrefix is the prefix of a user's permissions; of every
// permission of a database's users when rid is the database's 4 bytes.
func CatPermPrefix(rid []byte) []byte { return append([]byte{CatPerm}, rid...) }

// CatPermKey is the key of permission id of a user.
func CatPermKey(userRID [8]byte, id string) []byte {
	return keys.AppendString(CatPermPrefix(userRID[:]), id)
}

func CatDBKey(id string) []byte {
	return keys.AppendString([]byte{CatDB}, id)
}

func CatCollPrefix(dbRID [4]byte) []byte {
	return append([]byte{CatColl}, dbRID[:]...)
}

func CatCollKey(dbRID [4]byte, id string) []byte {
	return keys.AppendString(CatCollPrefix(dbRID), id)
}

func CatOfferKey(id string) []byte {
	return keys.AppendString([]byte{CatOffer}, id)
}

func CollPrefix(space byte, rid [8]byte) []byte {
	return collPrefix(space, rid, 64)
}

// collPrefix is CollPrefix with room for n bytes in all: the keys every
// item write builds are allocated at their size.
func collPrefix(space byte, rid [8]byte, n int) []byte {
	k := make([]byte, 0, max(n, collPrefixLen))
	return append(append(k, space), rid[:]...)
}

const collPrefixLen = 1 + 8

// stringLen is the length of s as keys.AppendString writes it when it
// holds nothing to escape.
func stringLen(s string) int { return len(s) + 2 }

func CollMetaKey(rid [8]byte) []byte { return collPrefix(CollMeta, rid, collPrefixLen) }

// PartitionStateKey is the key of the write state of physical partition
// p of container rid: the container's own for partition 0.
func PartitionStateKey(rid [8]byte, p int) []byte {
	return partitionSuffix(collPrefix(CollMeta, rid, collPrefixLen+2), p)
}

// partitionSuffix appends partition p's number to a key of the
// container's, for the partitions after partition 0, whose keys are the
// container's own (as they were before partitions).
func partitionSuffix(k []byte, p int) []byte {
	if p == 0 {
		return k
	}
	return append(k, byte(p>>8), byte(p))
}

// PartsKey is the key of container rid's number of physical partitions.
func PartsKey(rid [8]byte) []byte { return CollPrefix(Parts, rid) }

// DocPartitionPrefix is the prefix of the keys of the items of the
// logical partition pk (encoded).
func DocPartitionPrefix(rid [8]byte, pk []byte) []byte {
	return append(CollPrefix(Doc, rid), pk...)
}

// PKDeleteKey is the key of the partition-key delete of the logical
// partition pk (encoded).
func PKDeleteKey(rid [8]byte, pk []byte) []byte {
	return append(CollPrefix(PKDelete, rid), pk...)
}

// UniqueKey is the key of unique key number n's entry for the encoded
// values in the logical partition pk (encoded): unique keys are unique
// within a logical partition.
func UniqueKey(rid [8]byte, n int, pk, values []byte) []byte {
	k := append(CollPrefix(Unique, rid), byte(n))
	return append(append(k, pk...), values...)
}

// VecPrefix is the prefix of the vectors at a container's embedding
// path number path, in the scope of docPrefix (a prefix of its items'
// keys: the container's, or a partition's).
func VecPrefix(rid [8]byte, path byte, docPrefix []byte) []byte {
	return append(append(CollPrefix(Vec, rid), path), docPrefix[collPrefixLen:]...)
}

// VecKey is the key of the vector of the item at docKey at embedding
// path number path.
func VecKey(rid [8]byte, path byte, docKey []byte) []byte {
	return VecPrefix(rid, path, docKey)
}

// DocKeyOfVec is the key of the item whose vector is at key.
func DocKeyOfVec(key []byte) []byte {
	return append([]byte{Doc}, append(key[1:collPrefixLen:collPrefixLen], key[collPrefixLen+1:]...)...)
}

// TxtKey is the key of the full-text entry of the item at docKey.
func TxtKey(rid [8]byte, docKey []byte) []byte {
	return append(CollPrefix(Txt, rid), docKey[collPrefixLen:]...)
}

// DocKeyOfTxt is the key of the item whose full-text entry is at key.
func DocKeyOfTxt(key []byte) []byte {
	return append([]byte{Doc}, key[1:]...)
}

// DocKey is the key of an item; pk is the encoded partition key.
func DocKey(rid [8]byte, pk []byte, id string) []byte {
	return keys.AppendString(append(collPrefix(Doc, rid, collPrefixLen+len(pk)+stringLen(id)), pk...), id)
}

// The two expiry keyspaces share one layout, <space> <coll-rid:8>
// <time:int64> <pk> <id>, whose time is the expiry instant (expOwn) or
// the _ts (expTs). expiryKey writes it and decodeExpiry reads it back;
// nothing else knows the layout.

// ExpiryKey is the key of an item in expiry keyspace space at time t; pk
// is the encoded partition key.
func ExpiryKey(space byte, rid [8]byte, t int64, pk []byte, id string) []byte {
	k := keys.AppendInt64(collPrefix(space, rid, collPrefixLen+8+len(pk)+stringLen(id)), t)
	return keys.AppendString(append(k, pk...), id)
}

// ExpiryBound is the first key of a container's expiry keyspace whose
// time is after through: the end of the range due by through.
func ExpiryBound(space byte, rid [8]byte, through int64) []byte {
	return keys.AppendInt64(CollPrefix(space, rid), through+1)
}

// ExpiryEntry is a decoded expiry key.
type ExpiryEntry struct {
	Time int64  // the expiry instant (ExpOwn) or the _ts (ExpTs)
	PK   []byte // the encoded partition key; aliases the key
	ID   []byte // aliases the key
}

// DecodeExpiry decodes a key of either expiry keyspace; pkLen is the
// number of components of the container's partition key. With pkLen 0
// only the time is decoded.
func DecodeExpiry(key []byte, pkLen int) (ExpiryEntry, error) {
	if len(key) < 1+8 {
		return ExpiryEntry{}, fmt.Errorf("keyspace: expiry key too short (%d bytes)", len(key))
	}
	t, rest, err := keys.DecodeInt64(key[1+8:])
	if err != nil || pkLen == 0 {
		return ExpiryEntry{Time: t}, err
	}
	_, afterPK, err := document.DecodePK(rest, pkLen)
	if err != nil {
		return ExpiryEntry{}, err
	}
	id, _, err := keys.DecodeBytes(afterPK)
	if err != nil {
		return ExpiryEntry{}, err
	}
	return ExpiryEntry{Time: t, PK: rest[:len(rest)-len(afterPK)], ID: id}, nil
}

// LatestKey is the latest-version index entry of the item version written
// at lsn; its value is the item's key after the doc prefix (<pk> <id>).
func LatestKey(rid [8]byte, lsn uint64) []byte {
	return keys.AppendUint64(collPrefix(Latest, rid, collPrefixLen+8), lsn)
}

// GoneKey is the record of the item removed at lsn.
func GoneKey(rid [8]byte, lsn uint64) []byte {
	return keys.AppendUint64(collPrefix(Gone, rid, collPrefixLen+8), lsn)
}

// LogKey is the change-log record written at lsn.
func LogKey(rid [8]byte, lsn uint64) []byte {
	return keys.AppendUint64(collPrefix(Log, rid, collPrefixLen+8), lsn)
}

// LogTrimKey is the key of the first LSN physical partition p's change
// log still holds.
func LogTrimKey(rid [8]byte, p int) []byte { return partitionSuffix(CollPrefix(LogTrim, rid), p) }

// LeaseKey is the key of the purge lease of physical partition p of
// container rid (shared stores only): the container's own key for
// partition 0. The lease keys are outside CollSpaces: deleting a
// container deletes them on its own (LeasePrefix).
func LeaseKey(rid [8]byte, p int) []byte { return partitionSuffix(CollPrefix(Lease, rid), p) }

// LeasePrefix is the start of container rid's lease keys.
func LeasePrefix(rid [8]byte) []byte { return CollPrefix(Lease, rid) }

// LeasePresenceKey is the key of node's presence among container rid's
// purgers: nodes share its partitions' leases among those present.
// Partition numbers stay below 0xFFFF (MaxPartitionID), so it is never a
// partition's lease key.
func LeasePresenceKey(rid [8]byte, node string) []byte {
	return append(append(CollPrefix(Lease, rid), 0xFF, 0xFF), node...)
}

// MaxPartitionID bounds the numbers partitions get, splits included.
const MaxPartitionID = 0xFFFE

// IndexPrefix is the start of a container's secondary index entries.
func IndexPrefix(rid [8]byte) []byte { return CollPrefix(Index, rid) }

// IndexStateKey is the key of a container's index state.
func IndexStateKey(rid [8]byte) []byte { return collPrefix(IdxState, rid, collPrefixLen) }
