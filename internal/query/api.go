package query

import (
	"errors"
	"time"
)

// Param is a query parameter; Name includes the '@'.
type Param struct {
	Name  string
	Value Value
}

// Env is what a query may learn about the world. All date and time
// functions in one query see Now; nothing in this package reads the clock.
type Env struct {
	Now time.Time
	// Elapsed, if set, reads a monotonic clock (clock.Clock.Elapsed); Page
	// uses it only to fill the durations in Stats. Nil leaves them zero.
	Elapsed func() time.Duration
}

// Source is what the engine hands the executor: the documents a query may
// see (already filtered for TTL visibility, already restricted to a
// partition when the request had one), in ascending storage-key order.
// Scan starts strictly after `after` (nil = from the start) and calls
// yield(key, doc) until yield returns false or the documents end. key is
// the storage key (an opaque, ordered byte string); doc is the raw JSON of
// the document. Both are only valid during the yield call. Scan may be
// called more than once per page.
type Source interface {
	Scan(after []byte, yield func(key, doc []byte) bool) error
}

// DefaultMaxItemCount is the page size when the request does not ask for
// one; UnboundedMaxItemCount is used when the SDK sends -1 ("as many as the
// server likes").
const (
	DefaultMaxItemCount   = 100
	UnboundedMaxItemCount = 1000
)

// PageRequest asks for one page of results.
type PageRequest struct {
	MaxItemCount int    // <= 0 means DefaultMaxItemCount; -1 means UnboundedMaxItemCount
	Continuation []byte // nil on the first page; else exactly what a previous Page returned as Next
	Env          Env
}

// Page is one page of results.
type Page struct {
	Rows  [][]byte // each row's compact JSON
	Next  []byte   // nil when the query is done; opaque otherwise
	Stats Stats
}

// Stats are the query metrics of one page.
type Stats struct {
	RetrievedDocumentCount int64 // documents read from the Source
	RetrievedDocumentSize  int64 // their total size in bytes
	OutputDocumentCount    int64 // rows returned
	OutputDocumentSize     int64 // their total size in bytes
	// TotalExecutionTime covers the whole Page call; zero unless
	// Env.Elapsed was set.
	TotalExecutionTime time.Duration
}

// ErrBadContinuation is returned (possibly wrapped) for a continuation
// token that is malformed or belongs to another query or parameter set.
var ErrBadContinuation = errors.New("query: invalid continuation token")
