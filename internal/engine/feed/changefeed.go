package feed

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Mode is the A-IM of a change feed request.
type Mode int

const (
	// LatestVersion is "A-IM: Incremental Feed".
	LatestVersion Mode = iota
	// AllVersionsAndDeletes is "A-IM: Full-Fidelity Feed".
	AllVersionsAndDeletes
)

// Request is what the feed reads of a page request; the engine resolves
// the container and partition it addresses.
type Request struct {
	Mode Mode
	// IfNoneMatch: "" from the beginning, "*" from now, else an earlier
	// page's etag.
	IfNoneMatch string
	// Since is If-Modified-Since (zero: no bound).
	Since time.Time
	// MaxItemCount is the page size (<= 0: the default).
	MaxItemCount int
	// StartEPK and EndEPK bound the effective partition keys served.
	StartEPK, EndEPK string
	// Partition is the physical partition read: a feed follows one
	// partition's log sequence, and its continuations count in it.
	Partition int
	// Ancestors are the partitions Partition was split from, oldest
	// first, with the last count each wrote; the feed reads their logs,
	// only the entries InRange says are Partition's, before its own,
	// whose counts continue after them.
	Ancestors []Ancestor
	InRange   func(pkEnc []byte) bool
	// Step, when set, is called for every entry the page reads, in scope
	// or not, and stops the page with its error: it bounds a page that
	// walks many entries of other partition keys or ranges.
	Step func() error
}

// Ancestor is a partition a feed's partition was split from.
type Ancestor struct {
	Partition int
	Final     uint64
}

// Items reads item versions in one storage snapshot as the engine's
// visible-items reader does at the request's instant. The latest-version
// feed reads items only through it and never decides visibility itself.
type Items interface {
	// Lookup reads the version stored at key (an item key): found is
	// false when none is stored, visible whether the request sees it.
	Lookup(key []byte) (doc []byte, h document.ItemHeader, found, visible bool, err error)
}

// Page is one page of a change feed.
type Page struct {
	Rows [][]byte
	// ETag is the continuation: the next LSN to read, quoted.
	ETag string
	// Loaded counts the entries the page read and LoadedBytes their
	// size; OutBytes is the size of Rows. The engine charges for them.
	Loaded, LoadedBytes, OutBytes int
}

const (
	// defaultPage is a page's size when the client sets none.
	defaultPage = 100
	// maxPageBytes ends a page early, as the service's response size
	// limit does, so one request never holds an unbounded result.
	maxPageBytes = 4 << 20
)

// CheckRequest applies the rules of all-versions-and-deletes mode that
// depend neither on stored state nor on the request's scope.
func CheckRequest(c Container, req Request) error {
	if req.Mode != AllVersionsAndDeletes {
		return nil
	}
	if c.Retention == 0 {
		return dberr.BadRequest("The all versions and deletes change feed (A-IM: Full-Fidelity Feed) needs a change feed policy: set the container's changeFeedPolicy.retentionDuration (minutes), e.g. {\"changeFeedPolicy\": {\"retentionDuration\": 60}}, then read changes made after that.")
	}
	if !req.Since.IsZero() {
		return dberr.BadRequest("The all versions and deletes change feed cannot start from a point in time (If-Modified-Since); start from now (If-None-Match: *) or from a continuation.")
	}
	if req.IfNoneMatch == "" {
		// The service's words, status 400: the JS SDK's own tests expect
		// them for ChangeFeedStartFrom.Beginning() in this mode
		// (azure-sdk-for-js, sdk/cosmosdb/cosmos/test/public/integration/
		// changeFeedIterator.spec.ts, "startFromBeginning is not supported").
		return dberr.BadRequest("%s The all versions and deletes change feed cannot start from the beginning; start from now (If-None-Match: *) or from a continuation.", outsideRetention)
	}
	return nil
}

// Scan collects one page of a change feed.
type Scan struct {
	c    Container
	mode Mode
	// fromNow: the request starts from now (If-None-Match: *); else start
	// is its continuation (0: none), a count of partition part's log
	// (which goes on from its ancestors').
	fromNow   bool
	start     uint64
	part      int
	ancestors []Ancestor
	inRange   func(pkEnc []byte) bool
	step      func() error
	// own is false while the page reads an ancestor's log, whose entries
	// inRange filters.
	own bool
	// pk is the encoded partition key (or prefix) the feed is scoped to;
	// empty for the whole container.
	pk []byte
	// epk, when set, tests an encoded key against an EPK sub-range.
	epk func(pkEnc []byte) bool
	// since is the earliest _ts the page serves.
	since int64
	max   int
	// items reads item versions in the snapshot being scanned.
	items func(storage.Reader) Items

	page Page
}

// NewScan prepares the page req asks of container c, scoped to the
// encoded partition key (or prefix) pk, before anything is read; items
// gives the latest-version feed the engine's reader over a snapshot.
func NewScan(c Container, req Request, pk []byte, items func(storage.Reader) Items) (*Scan, error) {
	inRange, err := c.PK.EPKFilter(req.StartEPK, req.EndEPK)
	if err != nil {
		return nil, err
	}
	start, err := ParseContinuation(req.IfNoneMatch)
	if err != nil {
		return nil, err
	}
	if start > keyspace.LSNCount(^uint64(0)) {
		return nil, badContinuation(req.IfNoneMatch)
	}
	s := &Scan{
		c:         c,
		mode:      req.Mode,
		fromNow:   req.IfNoneMatch == "*",
		start:     start,
		part:      req.Partition,
		ancestors: req.Ancestors,
		inRange:   req.InRange,
		step:      req.Step,
		pk:        pk,
		epk:       inRange,
		since:     -1 << 63,
		max:       req.MaxItemCount,
		items:     items,
	}
	if !req.Since.IsZero() {
		s.since = req.Since.Unix()
		if req.Since.Nanosecond() > 0 {
			s.since++ // _ts has whole seconds: "at or after" rounds up
		}
	}
	if s.max <= 0 {
		s.max = defaultPage
	}
	return s, nil
}

// Read reads the page from snapshot r, in which next is the next LSN
// of the partition read. The page reads the logs of the partition's
// ancestors, then its own, from the continuation's count on: the counts
// go on from each log to the next, so one count says where a page
// stopped in any of them.
func (s *Scan) Read(r storage.Reader, next uint64) (Page, error) {
	s.page = Page{}
	nextCount := keyspace.LSNCount(next)
	start := s.start
	switch {
	case s.fromNow:
		start = nextCount
	case start == 0:
		start = 1
	}
	type segment struct {
		part int
		end  uint64 // the count after the segment's last
		own  bool
	}
	var segs []segment
	for _, a := range s.ancestors {
		segs = append(segs, segment{a.Partition, a.Final + 1, false})
	}
	segs = append(segs, segment{s.part, nextCount, true})
	for _, seg := range segs {
		if start >= seg.end {
			continue
		}
		from, to := keyspace.PartitionLSN(seg.part, start), keyspace.PartitionLSN(seg.part, seg.end)
		s.own = seg.own
		var stop uint64
		var err error
		if s.mode == AllVersionsAndDeletes {
			if err := checkNotTrimmed(r, s.c, seg.part, from); err != nil {
				return Page{}, err
			}
			stop, err = s.scanLog(r, from, to)
		} else {
			stop, err = s.scanLatest(r, from, to)
		}
		if err != nil {
			return Page{}, err
		}
		start = keyspace.LSNCount(stop)
		if stop != to || s.full() {
			// The page is full: it goes on from start.
			s.page.ETag = etag(start)
			return s.page, nil
		}
	}
	s.page.ETag = etag(max(nextCount, start))
	return s.page, nil
}

// scoped reports whether an item (by its encoded key, which may go on
// with the id) is in the feed's scope.
func (s *Scan) scoped(key []byte) bool {
	return bytes.HasPrefix(key, s.pk) && (s.epk == nil || s.epk(key)) &&
		(s.own || s.inRange == nil || s.inRange(key))
}

// stepped counts one entry read against the request's budget (Step).
func (s *Scan) stepped() error {
	if s.step == nil {
		return nil
	}
	return s.step()
}

// full reports whether the page has reached its size.
func (s *Scan) full() bool {
	return len(s.page.Rows) >= s.max || s.page.OutBytes >= maxPageBytes
}

// scanLatest reads the latest-version index from LSN start to end (one
// partition's) and returns the continuation: the LSN after the last one
// read, or end when it read to the end.
func (s *Scan) scanLatest(r storage.Reader, start, end uint64) (uint64, error) {
	prefix := keyspace.CollPrefix(keyspace.Latest, s.c.RID)
	it := r.Scan(keyspace.LatestKey(s.c.RID, start), keyspace.LatestKey(s.c.RID, end), false)
	defer it.Close()
	docPrefix := keyspace.CollPrefix(keyspace.Doc, s.c.RID)
	items := s.items(r)
	for it.Next() {
		lsn, _, err := keys.DecodeUint64(it.Key()[len(prefix):])
		if err != nil {
			return 0, err
		}
		if err := s.stepped(); err != nil {
			return 0, err
		}
		if !s.scoped(it.Value()) {
			continue
		}
		doc, h, found, visible, err := items.Lookup(append(docPrefix, it.Value()...))
		if err == nil && !found {
			err = storage.ErrNotFound // by construction every entry has its item version
		}
		if err != nil {
			return 0, fmt.Errorf("feed: latest-version entry %d: %w", lsn, err)
		}
		s.page.Loaded++
		s.page.LoadedBytes += len(doc)
		if !visible || h.Ts < s.since {
			continue
		}
		row := appendWithLSN(make([]byte, 0, len(doc)+24), doc, h.LSN)
		s.page.Rows = append(s.page.Rows, row)
		s.page.OutBytes += len(row)
		if s.full() {
			return lsn + 1, nil
		}
	}
	return end, it.Err()
}

// scanLog reads the change log from LSN start; it returns the
// continuation as scanLatest does.
func (s *Scan) scanLog(r storage.Reader, start, end uint64) (uint64, error) {
	prefix := keyspace.CollPrefix(keyspace.Log, s.c.RID)
	it := r.Scan(keyspace.LogKey(s.c.RID, start), keyspace.LogKey(s.c.RID, end), false)
	defer it.Close()
	for it.Next() {
		lsn, _, err := keys.DecodeUint64(it.Key()[len(prefix):])
		if err != nil {
			return 0, err
		}
		_, pkEnc, rec, err := decodeRecord(it.Value())
		if err != nil {
			return 0, err
		}
		if err := s.stepped(); err != nil {
			return 0, err
		}
		s.page.Loaded++
		s.page.LoadedBytes += len(rec)
		if !s.scoped(pkEnc) {
			continue
		}
		s.page.Rows = append(s.page.Rows, bytes.Clone(rec))
		s.page.OutBytes += len(rec)
		if s.full() {
			return lsn + 1, nil
		}
	}
	return end, it.Err()
}

// checkNotTrimmed fails a continuation that points before the oldest
// change the log still holds.
func checkNotTrimmed(r storage.Reader, c Container, p int, start uint64) error {
	first, err := logStart(r, c.RID, p)
	if err != nil || start >= first {
		return err
	}
	return dberr.BadRequest("%s The change feed continuation (LSN %d) is older than the container's change feed retention of %d minutes: changes before LSN %d were removed. Start again from now (If-None-Match: *).", outsideRetention, keyspace.LSNCount(start), c.Retention, keyspace.LSNCount(first))
}

// outsideRetention begins the message of an all-versions-and-deletes
// read that starts before what the log keeps: the service's sentence for
// a read from the beginning (CheckRequest), and by the same rule for a
// continuation the trimmer has passed.
const outsideRetention = "You must read the change feed from within the retention period."

// logStart is the first LSN partition p's change log still holds:
// everything before it was trimmed (its first LSN if nothing was).
func logStart(r storage.Reader, rid [8]byte, p int) (uint64, error) {
	v, err := r.Get(keyspace.LogTrimKey(rid, p))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return keyspace.PartitionLSN(p, 1), nil
	case err != nil:
		return 0, err
	case len(v) != 8:
		return 0, errors.New("feed: corrupt change log trim mark")
	}
	return binary.BigEndian.Uint64(v), nil
}

func etag(lsn uint64) string { return `"` + strconv.FormatUint(lsn, 10) + `"` }

// ParseContinuation reads an If-None-Match continuation: 0 for none (or
// "*", which means from now), else the LSN to read from.
func ParseContinuation(s string) (uint64, error) {
	if s == "" || s == "*" {
		return 0, nil
	}
	v := strings.TrimPrefix(s, "W/")
	v = strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return 0, badContinuation(s)
	}
	return n, nil
}

func badContinuation(s string) error {
	return dberr.BadRequest("Invalid Continuation Token: the change feed continuation If-None-Match %q is not one this server issued; send the etag of an earlier change feed response, or * to start from now.", document.Truncate([]byte(s), 64))
}
