package feed

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
)

// A record is stored already rendered as the wire JSON, so serving the
// all-versions-and-deletes feed copies bytes; what the trimmer and the
// scoped feeds need is in a small header in front:
//
//	version:1 | crts:int64 | len(pk):uvarint | pk (encoded) | record JSON

// Op is a change record's operationType.
type Op int

const (
	OpCreate Op = iota
	OpReplace
	OpDelete
)

// String is the operationType as the record JSON spells it.
func (op Op) String() string {
	return [...]string{"create", "replace", "delete"}[op]
}

// Record is one change as the log stores it.
type Record struct {
	Op Op
	// LSN is the change's; Crts is its _ts (the container's last _ts
	// when the change was made).
	LSN  uint64
	Crts int64
	// PreviousLSN is the LSN of the version this change replaced or
	// deleted (0 for a create).
	PreviousLSN uint64
	// Current is the new version's document (create, replace); Previous
	// is the deleted version's (delete). Stored documents, without _lsn.
	Current, Previous []byte
	// Expired marks a delete that is a TTL purge.
	Expired bool
	// ID and PKEnc (the encoded partition key) name the item.
	ID    string
	PKEnc []byte
}

const recordVersion = 1

// Encode renders the record: header, then the wire JSON.
func (r Record) Encode(def document.PKDef) []byte {
	n := 1 + 8 + binary.MaxVarintLen64 + len(r.PKEnc) + len(r.Current) + len(r.Previous) + 256
	b := make([]byte, 0, n)
	b = append(b, recordVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Crts))
	b = binary.AppendUvarint(b, uint64(len(r.PKEnc)))
	b = append(b, r.PKEnc...)
	b = append(b, '{')
	if r.Current != nil {
		b = append(b, `"current":`...)
		b = appendWithLSN(b, r.Current, r.LSN)
		b = append(b, ',')
	}
	if r.Previous != nil {
		b = append(b, `"previous":`...)
		b = appendWithLSN(b, r.Previous, r.PreviousLSN)
		b = append(b, ',')
	}
	b = append(b, `"metadata":{"operationType":"`...)
	b = append(b, r.Op.String()...)
	b = append(b, `","lsn":`...)
	b = strconv.AppendUint(b, keyspace.LSNCount(r.LSN), 10)
	b = append(b, `,"crts":`...)
	b = strconv.AppendInt(b, r.Crts, 10)
	if r.PreviousLSN != 0 {
		b = append(b, `,"previousImageLSN":`...)
		b = strconv.AppendUint(b, keyspace.LSNCount(r.PreviousLSN), 10)
	}
	if r.Op == OpDelete {
		b = append(b, `,"timeToLiveExpired":`...)
		b = strconv.AppendBool(b, r.Expired)
		b = append(b, `,"id":`...)
		b = document.AppendQuoted(b, r.ID)
		b = append(b, `,"partitionKey":`...)
		b = appendPKObject(b, def, r.PKEnc)
	}
	return append(b, "}}"...)
}

// decodeRecord splits a stored record into its header fields and JSON.
func decodeRecord(v []byte) (crts int64, pkEnc, doc []byte, err error) {
	if len(v) < 9 || v[0] != recordVersion {
		return 0, nil, nil, fmt.Errorf("feed: corrupt change record (%d bytes)", len(v))
	}
	crts = int64(binary.BigEndian.Uint64(v[1:]))
	n, w := binary.Uvarint(v[9:])
	if w <= 0 || uint64(len(v)-9-w) < n {
		return 0, nil, nil, fmt.Errorf("feed: corrupt change record (%d bytes)", len(v))
	}
	rest := v[9+w:]
	return crts, rest[:n], rest[n:], nil
}

// appendWithLSN appends a stored document with "_lsn" added, as the
// change feeds serve items.
// REQUIRES: doc is a JSON object (stored documents end with '}').
func appendWithLSN(dst, doc []byte, lsn uint64) []byte {
	dst = append(dst, doc[:len(doc)-1]...)
	if len(doc) > 2 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_lsn":`...)
	dst = strconv.AppendUint(dst, keyspace.LSNCount(lsn), 10)
	return append(dst, '}')
}

// appendPKObject appends a partition key as the all-versions feed shows
// it: an object from each path (without its leading '/', nested paths
// joined by '/') to its value, every level of a hierarchical key present.
// A level the item lacks ("None") is left out.
func appendPKObject(dst []byte, def document.PKDef, pkEnc []byte) []byte {
	pk, _, err := document.DecodePK(pkEnc, len(def.Paths))
	dst = append(dst, '{')
	if err != nil {
		return append(dst, '}')
	}
	first := true
	for i, c := range pk {
		if c.Kind == document.PKNone {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = document.AppendQuoted(dst, strings.Join(def.Paths[i], "/"))
		dst = append(dst, ':')
		v := document.PartitionKey{c}.AppendJSON(nil) // "[value]"
		dst = append(dst, v[1:len(v)-1]...)
	}
	return append(dst, '}')
}

// LatestValue is the value of the latest-version entry of the item
// stored at key in container rid: the key after the container's doc
// prefix (<pk> <id>).
func LatestValue(rid [8]byte, key []byte) []byte {
	return key[len(keyspace.CollPrefix(keyspace.Doc, rid)):]
}
