package feed

import (
	"strconv"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
)

// Container is what the feed knows of a container.
type Container struct {
	RID [8]byte
	// Name names the container in logs: "<db>/<container>".
	Name string
	PK   document.PKDef
	// Retention is changeFeedPolicy.retentionDuration in minutes: how
	// long the log keeps a change. 0: the container keeps no log.
	Retention int64
	// Partitions are the physical partitions that have a log, each its
	// own sequence (keyspace.PartitionLSN): the live ones and those split
	// since (nil: partition 0 alone).
	Partitions []int
}

// maxRetention caps changeFeedPolicy.retentionDuration (minutes); it
// keeps retention arithmetic far from overflow.
const maxRetention = 1 << 31

// ParsePolicy reads a container's changeFeedPolicy and returns
// its retentionDuration in minutes (0: the container keeps no log).
func ParsePolicy(raw []byte) (int64, error) {
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
	if err != nil || n < 0 || n > maxRetention {
		return 0, dberr.BadRequest("The changeFeedPolicy.retentionDuration %s is invalid; it is a whole number of minutes from 0 to %d, e.g. {\"retentionDuration\": 60}.", document.Truncate(v, 40), int64(maxRetention))
	}
	return n, nil
}
