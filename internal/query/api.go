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
	// uses it to fill the durations in Stats and to measure the page
	// against PageRequest.Budget. Nil leaves the durations zero.
	Elapsed func() time.Duration
	// UDFs calls the user-defined functions the query names; nil when it
	// names none.
	UDFs UDFs
	// Vectors returns the distance function ("cosine", "dotproduct",
	// "euclidean") of the container's vector embedding at a path; nil
	// when the container has none.
	Vectors func(path string) (string, bool)
	// FullText reports whether the container's fullTextPolicy covers a
	// path; TextStats returns the statistics FullTextScore ranks a path
	// by (FullTextStats). Nil when the container has no full-text policy.
	FullText  func(path string) bool
	TextStats func(path string) *TextStats
}

// UDFs runs a container's user-defined functions. Call returns the
// function's result, or an error that fails the query (the function
// threw, or ran out of its budget). One UDFs serves one page, on one
// goroutine.
type UDFs interface {
	Call(name string, args []Value) (Value, error)
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
// one. When the SDK sends -1 ("as many as the server likes"), a page of a
// query whose rows stream in source order holds rows up to
// UnboundedPageBytes of output, as the service sizes its pages (one
// round trip for most results); a query that sorts or computes its
// result holds UnboundedMaxItemCount rows, which bounds its memory.
const (
	DefaultMaxItemCount   = 100
	UnboundedMaxItemCount = 1000
	UnboundedPageBytes    = 4 << 20
)

// PageRequest asks for one page of results.
type PageRequest struct {
	MaxItemCount int    // <= 0 means DefaultMaxItemCount; -1: see UnboundedPageBytes
	Continuation []byte // nil on the first page; else exactly what a previous Page returned as Next
	Env          Env
	// Budget bounds the page's execution time as Env.Elapsed measures it
	// (which must then be set); zero means no bound. A page whose budget
	// runs out returns the rows it has and a continuation that resumes
	// where it stopped, or a *BudgetError when it has nothing it may
	// return (see the package documentation).
	Budget time.Duration
}

// Page is one page of results.
type Page struct {
	// Body holds the rows; the caller releases it (Body.Release) once
	// it has sent them, or lets the garbage collector have it.
	Body  *Body
	Next  []byte // nil when the query is done; opaque otherwise
	Stats Stats
}

// Rows returns the page's rows, each its compact JSON; they are valid
// until the Body is released.
func (p Page) Rows() [][]byte { return p.Body.Rows() }

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

// OrderedSource is a Source that can also yield the documents of an ORDER
// BY query in (nearly) the query's order, as an index holds them. The
// executor uses ScanOrdered instead of Scan for a plan in ORDER BY mode,
// and reads only as far as the page needs.
//
// ScanOrdered yields documents in runs, each named by run (a byte string
// that changes exactly when a run ends). Runs come in sort order: every
// row of a document in one run sorts before every row of a document in
// a later run. Within a run documents come in no particular order unless
// sorted is true; then they come in the order the executor breaks ties,
// by storage key, descending if Descending reports so (the source then
// walks its keys backwards), which the source can promise only when the
// run's documents all have equal sort keys. after, if not nil, is the storage key of the last row of the
// previous page: the source may skip the runs before its run and, in a
// sorted run, the documents before it (never that document itself). A
// key the source cannot have issued is ErrBadContinuation.
type OrderedSource interface {
	Source
	ScanOrdered(after []byte, yield func(run []byte, sorted bool, key, doc []byte) bool) error
	Descending() bool
}

// Sorted reports whether the plan sorts its rows (ORDER BY, without
// aggregates or DISTINCT): a Source then serves it best by yielding each
// document's own storage key, which breaks ties between rows the same
// way whatever the access path.
func (p *Plan) Sorted() bool { return p.mode == modeOrderBy }

// OrderKey is one ORDER BY key that is a property path from the document
// root (c.a.b, c["x y"]).
type OrderKey struct {
	Path []string
	Desc bool
}

// OrderKeys returns the ORDER BY keys of a plan that sorts documents
// (modeOrderBy) by property paths of the document only; ok is false for
// any other plan, which no index can order.
func (p *Plan) OrderKeys() (keys []OrderKey, ok bool) {
	s := p.q.stmt
	if p.mode != modeOrderBy || len(s.From) == 0 || s.From[0].In {
		return nil, false
	}
	root := s.From[0]
	if id, isIdent := root.Expr.(*IdentExpr); !isIdent || id.slot != rootSlot {
		return nil, false
	}
	hc := hintCtx{c: &evalCtx{params: p.params}, slot: root.slot}
	for _, o := range s.OrderBy {
		path, isPath := hc.path(o.Expr)
		if !isPath {
			return nil, false
		}
		keys = append(keys, OrderKey{Path: path, Desc: o.Desc})
	}
	return keys, true
}
