package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/feed"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// The change feed.
//
// A continuation is an LSN: the etag of a feed response is the next LSN
// to read ("42", quoted like any etag), so a client that sends it back in
// If-None-Match gets exactly the changes made after the page it has.
//
// Latest-version mode scans the latest-version index from that LSN: one
// entry per stored item version, in LSN order, so a changed item appears
// once, at its last change, and a deleted one not at all. Expired items
// are skipped with the same TTL predicate as every read path, at the
// request's one "now". All-versions-and-deletes mode scans the change log
// instead (see changelog.go).

// ChangeFeedMode is the A-IM of a change feed request.
type ChangeFeedMode int

const (
	// LatestVersion is "A-IM: Incremental Feed".
	LatestVersion ChangeFeedMode = iota
	// AllVersionsAndDeletes is "A-IM: Full-Fidelity Feed".
	AllVersionsAndDeletes
)

// ChangeFeedRequest is one page request of a container's change feed.
type ChangeFeedRequest struct {
	// Ref names the container; Ref.PK scopes the feed to one logical
	// partition (or a prefix of a hierarchical key).
	Ref  ItemRef
	Mode ChangeFeedMode
	// IfNoneMatch is "" to start from the beginning, "*" to start from
	// now, or the etag of an earlier page to continue after it.
	IfNoneMatch string
	// Since is If-Modified-Since: only items changed at or after it (the
	// zero time: no bound).
	Since time.Time
	// MaxItemCount is x-ms-max-item-count (<= 0: the default).
	MaxItemCount int
	// RangeID is x-ms-documentdb-partitionkeyrangeid.
	RangeID string
	// StartEPK and EndEPK are x-ms-start-epk and x-ms-end-epk.
	StartEPK, EndEPK string
}

// ChangeFeedResult is one page of a change feed.
type ChangeFeedResult struct {
	Rows [][]byte
	// RID is the container's _rid, the envelope's.
	RID string
	// ETag is the continuation: pass it back as If-None-Match.
	ETag    string
	Charge  float64
	Session string
	// NotModified: nothing changed after the continuation (HTTP 304).
	NotModified bool
}

const (
	// defaultFeedPage is a page's size when the client sets none.
	defaultFeedPage = 100
	// maxFeedPageBytes ends a page early, as the service's response size
	// limit does, so one request never holds an unbounded result.
	maxFeedPageBytes = 4 << 20
)

// ChangeFeed returns one page of a container's change feed.
func (e *Engine) ChangeFeed(ctx context.Context, req ChangeFeedRequest) (ChangeFeedResult, error) {
	c, err := e.resolve(req.Ref)
	if err != nil {
		return ChangeFeedResult{}, err
	}
	if req.Mode == AllVersionsAndDeletes {
		if err := checkAllVersionsRequest(c, req); err != nil {
			return ChangeFeedResult{}, err
		}
	}
	src, err := e.scope(ctx, QueryRequest{Ref: req.Ref, RangeID: req.RangeID}, c, false)
	if err != nil {
		return ChangeFeedResult{}, err
	}
	inRange, err := c.pk.EPKFilter(req.StartEPK, req.EndEPK)
	if err != nil {
		return ChangeFeedResult{}, err
	}
	start, err := parseFeedContinuation(req.IfNoneMatch)
	if err != nil {
		return ChangeFeedResult{}, err
	}
	f := feedScan{
		c:     c,
		pk:    src.prefix[len(keyspace.CollPrefix(keyspace.Doc, c.rid)):],
		epk:   inRange,
		now:   src.at.Unix(),
		since: -1 << 63,
		max:   req.MaxItemCount,
	}
	if !req.Since.IsZero() {
		f.since = req.Since.Unix()
		if req.Since.Nanosecond() > 0 {
			f.since++ // _ts has whole seconds: "at or after" rounds up
		}
	}
	if f.max <= 0 {
		f.max = defaultFeedPage
	}
	res := ChangeFeedResult{RID: c.ridStr}
	err = e.store.View(ctx, func(r storage.Reader) error {
		st, err := readCollState(r, c.rid)
		if err != nil {
			return err
		}
		res.Session = sessionToken(st.lsn)
		next := st.lsn + 1
		switch {
		case req.IfNoneMatch == "*":
			start = next
		case start == 0:
			start = 1
		}
		if req.Mode == AllVersionsAndDeletes {
			if err := checkNotTrimmed(r, c, start); err != nil {
				return err
			}
			next, err = f.scanLog(r, start, next)
		} else {
			next, err = f.scanLatest(r, start, next)
		}
		res.ETag = feedEtag(max(next, start))
		return err
	})
	if err != nil {
		return ChangeFeedResult{}, err
	}
	res.Rows = f.rows
	res.Charge = chargeQuery(f.loaded, f.loadedBytes, f.outBytes)
	res.NotModified = len(f.rows) == 0
	return res, nil
}

// feedScan collects one page of a change feed.
type feedScan struct {
	c *container
	// pk is the encoded partition key (or prefix) the feed is scoped to;
	// empty for the whole container.
	pk []byte
	// epk, when set, tests an encoded key against an EPK sub-range.
	epk func(pkEnc []byte) bool
	// now is the request's instant for TTL visibility; since is the
	// earliest _ts it serves.
	now, since int64
	max        int

	rows                          [][]byte
	loaded, loadedBytes, outBytes int
}

// scoped reports whether an item (by its encoded key, which may go on
// with the id) is in the feed's scope.
func (f *feedScan) scoped(key []byte) bool {
	return bytes.HasPrefix(key, f.pk) && (f.epk == nil || f.epk(key))
}

// full reports whether the page has reached its size.
func (f *feedScan) full() bool {
	return len(f.rows) >= f.max || f.outBytes >= maxFeedPageBytes
}

// scanLatest reads the latest-version index from LSN start and returns
// the continuation: the LSN after the last one read, or end (the
// container's next LSN) when it read to the end.
func (f *feedScan) scanLatest(r storage.Reader, start, end uint64) (uint64, error) {
	prefix := keyspace.CollPrefix(keyspace.Latest, f.c.rid)
	it := r.Scan(keyspace.LatestKey(f.c.rid, start), keys.PrefixEnd(prefix), false)
	defer it.Close()
	docPrefix := keyspace.CollPrefix(keyspace.Doc, f.c.rid)
	items := itemReader{r: r, c: f.c, now: f.now}
	for it.Next() {
		lsn, _, err := keys.DecodeUint64(it.Key()[len(prefix):])
		if err != nil {
			return 0, err
		}
		if !f.scoped(it.Value()) {
			continue
		}
		item, visible, err := items.lookup(append(docPrefix, it.Value()...))
		if err == nil && item.doc == nil {
			err = storage.ErrNotFound // by construction every entry has its item version
		}
		if err != nil {
			return 0, fmt.Errorf("engine: latest-version entry %d: %w", lsn, err)
		}
		f.loaded++
		f.loadedBytes += len(item.doc)
		if !visible || item.h.Ts < f.since {
			continue
		}
		row := feed.AppendWithLSN(make([]byte, 0, len(item.doc)+24), item.doc, item.h.LSN)
		f.rows = append(f.rows, row)
		f.outBytes += len(row)
		if f.full() {
			return lsn + 1, nil
		}
	}
	return end, it.Err()
}

// scanLog reads the change log from LSN start; it returns the
// continuation as scanLatest does.
func (f *feedScan) scanLog(r storage.Reader, start, end uint64) (uint64, error) {
	prefix := keyspace.CollPrefix(keyspace.Log, f.c.rid)
	it := r.Scan(keyspace.LogKey(f.c.rid, start), keys.PrefixEnd(prefix), false)
	defer it.Close()
	for it.Next() {
		lsn, _, err := keys.DecodeUint64(it.Key()[len(prefix):])
		if err != nil {
			return 0, err
		}
		_, pkEnc, rec, err := feed.DecodeRecord(it.Value())
		if err != nil {
			return 0, err
		}
		f.loaded++
		f.loadedBytes += len(rec)
		if !f.scoped(pkEnc) {
			continue
		}
		f.rows = append(f.rows, bytes.Clone(rec))
		f.outBytes += len(rec)
		if f.full() {
			return lsn + 1, nil
		}
	}
	return end, it.Err()
}

// checkAllVersionsRequest applies the rules of all-versions-and-deletes
// mode that do not depend on stored state.
func checkAllVersionsRequest(c *container, req ChangeFeedRequest) error {
	if c.logRetention() == 0 {
		return dberr.BadRequest("The all versions and deletes change feed (A-IM: Full-Fidelity Feed) needs a change feed policy: set the container's changeFeedPolicy.retentionDuration (minutes), e.g. {\"changeFeedPolicy\": {\"retentionDuration\": 60}}, then read changes made after that.")
	}
	if !req.Since.IsZero() {
		return dberr.BadRequest("The all versions and deletes change feed cannot start from a point in time (If-Modified-Since); start from now (If-None-Match: *) or from a continuation.")
	}
	if req.IfNoneMatch == "" {
		return dberr.BadRequest("The all versions and deletes change feed cannot start from the beginning; start from now (If-None-Match: *) or from a continuation.")
	}
	return nil
}

// checkNotTrimmed fails a continuation that points before the oldest
// change the log still holds.
func checkNotTrimmed(r storage.Reader, c *container, start uint64) error {
	first, err := logStart(r, c.rid)
	if err != nil || start >= first {
		return err
	}
	return dberr.BadRequest("The change feed continuation (LSN %d) is older than the container's change feed retention of %d minutes: changes before LSN %d were removed. Start again from now (If-None-Match: *).", start, c.logRetention(), first)
}

// logStart is the first LSN the change log still holds: everything
// before it was trimmed (1 if nothing was).
func logStart(r storage.Reader, rid [8]byte) (uint64, error) {
	v, err := r.Get(keyspace.LogTrimKey(rid))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return 1, nil
	case err != nil:
		return 0, err
	case len(v) != 8:
		return 0, errors.New("engine: corrupt change log trim mark")
	}
	return binary.BigEndian.Uint64(v), nil
}

// logRetention returns c's changeFeedPolicy.retentionDuration in minutes.
func (c *container) logRetention() int64 { return c.retention }

func feedEtag(lsn uint64) string { return `"` + strconv.FormatUint(lsn, 10) + `"` }

// parseFeedContinuation reads an If-None-Match continuation: 0 for none
// (or "*", which the caller handles), else the LSN to read from.
func parseFeedContinuation(s string) (uint64, error) {
	if s == "" || s == "*" {
		return 0, nil
	}
	v := strings.TrimPrefix(s, "W/")
	v = strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return 0, dberr.BadRequest("The change feed continuation If-None-Match %q is not one this server issued: send the etag of an earlier change feed response, or * to start from now.", document.Truncate([]byte(s), 64))
	}
	return n, nil
}
