package engine

import (
	"context"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/feed"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/storage"
)

// The change feed is package feed's; this file resolves a request's
// container and scope, hands the feed the visible-items reader, and
// charges for the page.

// ChangeFeedMode is the A-IM of a change feed request. The modes are
// feed's, named here too so the gateway speaks only to the engine.
type ChangeFeedMode = feed.Mode

const (
	LatestVersion         = feed.LatestVersion
	AllVersionsAndDeletes = feed.AllVersionsAndDeletes
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

// ChangeFeed returns one page of a container's change feed.
func (e *Engine) ChangeFeed(ctx context.Context, req ChangeFeedRequest) (ChangeFeedResult, error) {
	c, err := e.resolve(req.Ref)
	if err != nil {
		return ChangeFeedResult{}, err
	}
	fc := c.feedContainer()
	fr := feed.Request{
		Mode: req.Mode, IfNoneMatch: req.IfNoneMatch, Since: req.Since,
		MaxItemCount: req.MaxItemCount, StartEPK: req.StartEPK, EndEPK: req.EndEPK,
	}
	if err := feed.CheckRequest(fc, fr); err != nil {
		return ChangeFeedResult{}, err
	}
	src, err := e.scope(ctx, QueryRequest{Ref: req.Ref, RangeID: req.RangeID}, c, false)
	if err != nil {
		return ChangeFeedResult{}, err
	}
	now := src.at.Unix()
	pk := src.prefix[docPrefixLen:]
	if fr.Partition, err = c.feedPartition(src, pk, req.RangeID); err != nil {
		return ChangeFeedResult{}, err
	}
	fr.Step = src.meter("reading change feed entries of other partition keys or ranges to find this request's").step
	if r, _ := c.layout.byID(fr.Partition); len(r.ancestors) > 0 {
		part := fr.Partition
		for _, a := range r.ancestors {
			fr.Ancestors = append(fr.Ancestors, feed.Ancestor{Partition: a.id, Final: a.final})
		}
		fr.InRange = func(pkEnc []byte) bool {
			p, err := c.partitionOfKey(pkEnc)
			return err == nil && p == part
		}
	}
	scan, err := feed.NewScan(fc, fr, pk, func(r storage.Reader) feed.Items {
		return feedItems{itemReader{r: r, c: c, now: now}}
	})
	if err != nil {
		return ChangeFeedResult{}, err
	}
	res := ChangeFeedResult{RID: c.ridStr}
	var page feed.Page
	err = e.store.View(ctx, func(r storage.Reader) error {
		st, err := readPartitionState(r, c.rid, fr.Partition)
		if err != nil {
			return err
		}
		res.Session = sessionToken(st.lsn)
		page, err = scan.Read(r, st.lsn+1)
		return err
	})
	if err != nil {
		return ChangeFeedResult{}, err
	}
	res.Rows, res.ETag = page.Rows, page.ETag
	res.Charge = throughput.Query(page.Loaded, page.LoadedBytes, page.OutBytes)
	res.NotModified = len(page.Rows) == 0
	return res, nil
}

// feedItems is the visible-items reader as the feed reads it, so that
// TTL visibility stays decided in one place (reader.go).
type feedItems struct{ itemReader }

func (f feedItems) Lookup(key []byte) ([]byte, document.ItemHeader, bool, bool, error) {
	it, visible, err := f.lookup(key)
	return it.doc, it.h, it.doc != nil, visible, err
}

// startLogTrimmer starts the feed's log trimmer over e's catalog.
func startLogTrimmer(e *Engine) *feed.Trimmer {
	return feed.StartTrimmer(feed.TrimmerConfig{
		Store: e.store, Clock: e.clock, Log: e.log,
		Now: func() int64 { return e.now().Unix() },
		Containers: func(yield func(feed.Container) bool) {
			for _, db := range e.catalogSnapshot().dbs {
				for _, c := range db.colls {
					if !yield(c.feedContainer()) {
						return
					}
				}
			}
		},
		LastLSN: func(r storage.Reader, rid [8]byte, p int) (uint64, bool, error) {
			st, err := readPartitionState(r, rid, p)
			if IsKind(err, KindNotFound) {
				return 0, false, nil
			}
			return st.lsn, err == nil, err
		},
	})
}

// feedContainer is what package feed needs to know of c.
func (c *container) feedContainer() feed.Container {
	return feed.Container{RID: c.rid, Name: c.label(), PK: c.pk, Retention: c.retention, Partitions: c.layout.every()}
}

// logRetention returns c's changeFeedPolicy.retentionDuration in minutes.
func (c *container) logRetention() int64 { return c.retention }
