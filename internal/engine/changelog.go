package engine

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
)

// The change log: what the all-versions-and-deletes change feed serves.
//
// A container with changeFeedPolicy.retentionDuration > 0 keeps one
// record per change under the change's LSN, written in the same storage
// transaction as the change itself, so the log and the items can never
// disagree: a create, a replace (upserts and patches included) and a
// delete (explicit, or a TTL purge marked timeToLiveExpired). Records are
// stored already rendered as the wire JSON, so serving the feed copies
// bytes; what the trimmer and the scoped feeds need is in a small header
// in front:
//
//	version:1 | crts:int64 | len(pk):uvarint | pk (encoded) | record JSON
//
// crts never decreases with the LSN (a change's crts is the container's
// last _ts, which never goes back), so the records older than the
// retention are always a prefix of the log.

// maxLogRetention caps changeFeedPolicy.retentionDuration (minutes); it
// keeps retention arithmetic far from overflow.
const maxLogRetention = 1 << 31

// parseChangeFeedPolicy reads a container's changeFeedPolicy and returns
// its retentionDuration in minutes (0: the container keeps no log).
func parseChangeFeedPolicy(raw []byte) (int64, error) {
	if raw == nil || string(raw) == "null" {
		return 0, nil
	}
	ms, ok := document.ObjectMembers(raw)
	if !ok {
		return 0, dberr.BadRequest("The changeFeedPolicy must be an object such as {\"retentionDuration\": 60} (minutes).")
	}
	v := document.Lookup(ms, "retentionDuration")
	if v == nil || string(v) == "null" {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 || n > maxLogRetention {
		return 0, dberr.BadRequest("The changeFeedPolicy.retentionDuration %s is invalid; it is a whole number of minutes from 0 to %d, e.g. {\"retentionDuration\": 60}.", document.Truncate(v, 40), int64(maxLogRetention))
	}
	return n, nil
}

// logRetention returns c's changeFeedPolicy.retentionDuration in minutes.
func (c *container) logRetention() int64 { return c.retention }

// changeOp is a change record's operationType.
type changeOp int

const (
	opCreate changeOp = iota
	opReplace
	opDelete
)

func (op changeOp) String() string {
	return [...]string{"create", "replace", "delete"}[op]
}

// changeRecord is one change as the log stores it.
type changeRecord struct {
	op   changeOp
	lsn  uint64
	crts int64
	// previousLSN is the LSN of the version this change replaced or
	// deleted (0 for a create).
	previousLSN uint64
	// current is the new version's document (create, replace); previous
	// is the deleted version's (delete). Stored documents, without _lsn.
	current, previous []byte
	expired           bool
	id                string
	pkEnc             []byte
}

const logRecordVersion = 1

// encode renders the record: header, then the wire JSON.
func (r changeRecord) encode(c *container) []byte {
	n := 1 + 8 + binary.MaxVarintLen64 + len(r.pkEnc) + len(r.current) + len(r.previous) + 256
	b := make([]byte, 0, n)
	b = append(b, logRecordVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(r.crts))
	b = binary.AppendUvarint(b, uint64(len(r.pkEnc)))
	b = append(b, r.pkEnc...)
	b = append(b, '{')
	if r.current != nil {
		b = append(b, `"current":`...)
		b = appendWithLSN(b, r.current, r.lsn)
		b = append(b, ',')
	}
	if r.previous != nil {
		b = append(b, `"previous":`...)
		b = appendWithLSN(b, r.previous, r.previousLSN)
		b = append(b, ',')
	}
	b = append(b, `"metadata":{"operationType":"`...)
	b = append(b, r.op.String()...)
	b = append(b, `","lsn":`...)
	b = strconv.AppendUint(b, r.lsn, 10)
	b = append(b, `,"crts":`...)
	b = strconv.AppendInt(b, r.crts, 10)
	if r.previousLSN != 0 {
		b = append(b, `,"previousImageLSN":`...)
		b = strconv.AppendUint(b, r.previousLSN, 10)
	}
	if r.op == opDelete {
		b = append(b, `,"timeToLiveExpired":`...)
		b = strconv.AppendBool(b, r.expired)
		b = append(b, `,"id":`...)
		b = document.AppendQuoted(b, r.id)
		b = append(b, `,"partitionKey":`...)
		b = appendPKObject(b, c.pk, r.pkEnc)
	}
	return append(b, "}}"...)
}

// decodeLogRecord splits a stored record into its header fields and JSON.
func decodeLogRecord(v []byte) (crts int64, pkEnc, doc []byte, err error) {
	if len(v) < 9 || v[0] != logRecordVersion {
		return 0, nil, nil, fmt.Errorf("engine: corrupt change record (%d bytes)", len(v))
	}
	crts = int64(binary.BigEndian.Uint64(v[1:]))
	n, w := binary.Uvarint(v[9:])
	if w <= 0 || uint64(len(v)-9-w) < n {
		return 0, nil, nil, fmt.Errorf("engine: corrupt change record (%d bytes)", len(v))
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
	dst = strconv.AppendUint(dst, lsn, 10)
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

// latestSuffix is the value of a latest-version entry: the item's key
// after its container's doc prefix.
func latestSuffix(c *container, key []byte) []byte {
	return key[len(keyspace.CollPrefix(keyspace.Doc, c.rid)):]
}
