package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/server"
)

// avadContainer creates a container with the all-versions-and-deletes
// log (retention minutes) and the given partition key paths and
// defaultTtl (nil: off).
func avadContainer(t *testing.T, e *env, rc *restClient, id string, retention int, def *int32, paths ...string) *azcosmos.ContainerClient {
	t.Helper()
	db := e.database(t, "db-"+id)
	props := map[string]any{
		"id":               id,
		"partitionKey":     map[string]any{"paths": paths, "kind": map[bool]string{true: "MultiHash", false: "Hash"}[len(paths) > 1], "version": 2},
		"changeFeedPolicy": map[string]any{"retentionDuration": retention},
	}
	if def != nil {
		props["defaultTtl"] = *def
	}
	res := rc.do(t, "POST", "/dbs/db-"+id+"/colls", nil, mustJSON(t, props))
	if res.status != http.StatusCreated {
		t.Fatalf("create container with changeFeedPolicy: %d %s", res.status, res.body)
	}
	c, err := db.NewContainer(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// docsPath is the items path of a container made by env.container or
// avadContainer (whose database is "db-" + its id).
func docsPath(c *azcosmos.ContainerClient) string {
	return "/dbs/db-" + c.ID() + "/colls/" + c.ID() + "/docs"
}

// feedPage is one page of a change feed read over REST.
type feedPage struct {
	status int
	etag   string
	docs   []map[string]any
}

// readFeed reads one change feed page over REST. aim is the A-IM mode.
func (rc *restClient) readFeed(t testing.TB, c *azcosmos.ContainerClient, aim string, hdr map[string]string) feedPage {
	t.Helper()
	h := map[string]string{"A-IM": aim}
	if aim == "Full-Fidelity Feed" {
		h["x-ms-cosmos-changefeed-wire-format-version"] = "2021-09-15"
	}
	for k, v := range hdr {
		h[k] = v
	}
	res := rc.do(t, "GET", docsPath(c), h, nil)
	p := feedPage{status: res.status, etag: res.header.Get("etag")}
	if res.status == http.StatusOK {
		var env struct{ Documents []map[string]any }
		if err := json.Unmarshal(res.body, &env); err != nil {
			t.Fatalf("feed body %s: %v", res.body, err)
		}
		p.docs = env.Documents
	} else if res.status != http.StatusNotModified {
		t.Fatalf("change feed (%s): %d %s", aim, res.status, res.body)
	}
	return p
}

// drainAVAD reads the all-versions feed from etag until 304 and returns
// the records and the etag to continue from.
func (rc *restClient) drainAVAD(t testing.TB, c *azcosmos.ContainerClient, etag string, hdr map[string]string) ([]map[string]any, string) {
	t.Helper()
	var out []map[string]any
	for range 1000 {
		h := map[string]string{"If-None-Match": etag, "x-ms-max-item-count": "3"}
		for k, v := range hdr {
			h[k] = v
		}
		p := rc.readFeed(t, c, "Full-Fidelity Feed", h)
		if p.etag == "" {
			t.Fatal("change feed response without etag")
		}
		etag = p.etag
		if p.status == http.StatusNotModified {
			return out, etag
		}
		out = append(out, p.docs...)
	}
	t.Fatal("the change feed never answered 304")
	return nil, ""
}

// drainSDK reads a container's latest-version feed with the Go SDK's
// pager, in pages of pageSize, until it answers 304; it returns the
// items and the composite continuation token.
func drainSDK(t *testing.T, e *env, c *azcosmos.ContainerClient, opts azcosmos.ChangeFeedOptions, pageSize int32) ([]map[string]any, string) {
	t.Helper()
	if opts.FeedRange == nil && opts.Continuation == nil {
		ranges, err := c.ReadFeedRanges(e.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		opts.FeedRange = &ranges[0]
	}
	opts.MaxItemCount = pageSize
	var out []map[string]any
	for range 10000 {
		resp, err := c.ReadChangeFeed(e.ctx, &opts)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ContinuationToken == "" {
			t.Fatal("change feed page without a continuation token")
		}
		token := resp.ContinuationToken
		opts.Continuation, opts.FeedRange = &token, nil
		if resp.Count == 0 {
			if resp.RawResponse.StatusCode != http.StatusNotModified {
				t.Fatalf("empty page: status %d, want 304", resp.RawResponse.StatusCode)
			}
			return out, token
		}
		if len(resp.Items) != resp.Count || resp.Count > int(pageSize) {
			t.Fatalf("page of %d items with _count %d (max %d)", len(resp.Items), resp.Count, pageSize)
		}
		for _, raw := range resp.Items {
			out = append(out, decode(t, raw))
		}
	}
	t.Fatal("the change feed never answered 304")
	return nil, ""
}

func lsnOf(t testing.TB, doc map[string]any) int64 {
	t.Helper()
	n, ok := doc["_lsn"].(float64)
	if !ok {
		t.Fatalf("change feed item without _lsn: %v", doc)
	}
	return int64(n)
}

func item(id, pk string, extra ...any) []byte {
	doc := map[string]any{"id": id, "pk": pk}
	for i := 0; i+1 < len(extra); i += 2 {
		doc[extra[i].(string)] = extra[i+1]
	}
	b, _ := json.Marshal(doc)
	return b
}

// TestChangeFeedLatestVersion drains the feed with the SDK's pager in
// pages, then continues from its token: each item appears once, at its
// latest version, in LSN order, deleted items not at all, and nothing
// new gives 304.
func TestChangeFeedLatestVersion(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("cf", "/pk"))
	for i := range 50 {
		pkv := fmt.Sprintf("p%d", i%7)
		if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString(pkv), item(fmt.Sprintf("i%d", i), pkv, "v", 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Change some items twice, delete two.
	for _, i := range []int{3, 10, 3} {
		pkv := fmt.Sprintf("p%d", i%7)
		if _, err := c.UpsertItem(e.ctx, azcosmos.NewPartitionKeyString(pkv), item(fmt.Sprintf("i%d", i), pkv, "v", 2), nil); err != nil {
			t.Fatal(err)
		}
	}
	ops := azcosmos.PatchOperations{}
	ops.AppendSet("/v", 3)
	if _, err := c.PatchItem(e.ctx, azcosmos.NewPartitionKeyString("p4"), "i4", ops, nil); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{5, 6} {
		if _, err := c.DeleteItem(e.ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", i%7)), fmt.Sprintf("i%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	docs, token := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{}, 10)
	if len(docs) != 48 {
		t.Fatalf("drained %d items, want 48 (50 created, 2 deleted)", len(docs))
	}
	seen := map[string]bool{}
	var last int64
	for _, d := range docs {
		id := d["id"].(string)
		if seen[id] {
			t.Fatalf("item %s delivered twice", id)
		}
		seen[id] = true
		if l := lsnOf(t, d); l <= last {
			t.Fatalf("item %s has _lsn %d after %d: not in LSN order", id, l, last)
		} else {
			last = l
		}
		want := 1.0
		switch id {
		case "i3", "i10":
			want = 2
		case "i4":
			want = 3
		case "i5", "i6":
			t.Fatalf("deleted item %s delivered", id)
		}
		if d["v"] != want {
			t.Errorf("item %s has v=%v, want its latest version %v", id, d["v"], want)
		}
		for _, p := range []string{"_rid", "_etag", "_ts", "_self"} {
			if d[p] == nil {
				t.Errorf("item %s lacks %s", id, p)
			}
		}
	}
	// The last changes come last: i3 (upserted last) then i4 (patched).
	if docs[46]["id"] != "i3" || docs[47]["id"] != "i4" {
		t.Errorf("last two items %v, %v; want i3, i4", docs[46]["id"], docs[47]["id"])
	}

	// Nothing new: 304 again, and the token still works after writes.
	again, token := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{Continuation: &token}, 10)
	if len(again) != 0 {
		t.Fatalf("%d items after a full drain, want none", len(again))
	}
	if _, err := c.UpsertItem(e.ctx, azcosmos.NewPartitionKeyString("p0"), item("i0", "p0", "v", 9), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("new"), item("n", "new"), nil); err != nil {
		t.Fatal(err)
	}
	more, _ := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{Continuation: &token}, 10)
	if len(more) != 2 || more[0]["id"] != "i0" || more[0]["v"] != 9.0 || more[1]["id"] != "n" {
		t.Fatalf("after the token: %v, want i0 (v 9) then n", more)
	}

	// The response envelope carries the container's _rid.
	props, err := c.Read(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ranges, _ := c.ReadFeedRanges(e.ctx, nil)
	resp, err := c.ReadChangeFeed(e.ctx, &azcosmos.ChangeFeedOptions{FeedRange: &ranges[0], MaxItemCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ResourceID != props.ContainerProperties.ResourceID || resp.Count != 1 {
		t.Fatalf("envelope _rid %q _count %d, want %q and 1", resp.ResourceID, resp.Count, props.ContainerProperties.ResourceID)
	}
}

// TestChangeFeedScopes reads the feed of one logical partition, of a
// hierarchical key prefix, from a point in time and from now.
func TestChangeFeedScopes(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	c := e.container(t, pkProps("scopes", "/pk"))
	for i := range 12 {
		pkv := []string{"a", "b", "c"}[i%3]
		if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString(pkv), item(strconv.Itoa(i), pkv), nil); err != nil {
			t.Fatal(err)
		}
	}
	pkB := azcosmos.NewPartitionKeyString("b")
	docs, _ := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{PartitionKey: &pkB}, 2)
	if len(docs) != 4 {
		t.Fatalf("partition b: %d items, want 4", len(docs))
	}
	for _, d := range docs {
		if d["pk"] != "b" {
			t.Fatalf("partition b's feed delivered %v", d)
		}
	}

	// From a point in time: the SDK writes it with zone "UTC".
	e.clock.Advance(10 * time.Second)
	since := e.clock.Now()
	if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("a"), item("late", "a"), nil); err != nil {
		t.Fatal(err)
	}
	docs, _ = drainSDK(t, e, c, azcosmos.ChangeFeedOptions{StartFrom: &since}, 100)
	if len(docs) != 1 || docs[0]["id"] != "late" {
		t.Fatalf("from %v: %v, want only the item written then", since, docs)
	}
	future := since.Add(time.Hour)
	docs, _ = drainSDK(t, e, c, azcosmos.ChangeFeedOptions{StartFrom: &future}, 100)
	if len(docs) != 0 {
		t.Fatalf("from the future: %d items, want none", len(docs))
	}
	// JS writes the zone as GMT.
	p := rc.readFeed(t, c, "Incremental Feed", map[string]string{"If-Modified-Since": since.UTC().Format(http.TimeFormat)})
	if p.status != http.StatusOK || len(p.docs) != 1 || p.docs[0]["id"] != "late" {
		t.Fatalf("If-Modified-Since in GMT: status %d, %v", p.status, p.docs)
	}

	// From now: 304 with an etag, then only what is written after.
	now := rc.readFeed(t, c, "Incremental Feed", map[string]string{"If-None-Match": "*"})
	if now.status != http.StatusNotModified || now.etag == "" {
		t.Fatalf("start from now: status %d etag %q, want 304 with an etag", now.status, now.etag)
	}
	if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("c"), item("after", "c"), nil); err != nil {
		t.Fatal(err)
	}
	p = rc.readFeed(t, c, "Incremental Feed", map[string]string{"If-None-Match": now.etag})
	if p.status != http.StatusOK || len(p.docs) != 1 || p.docs[0]["id"] != "after" {
		t.Fatalf("after start-from-now: status %d, %v", p.status, p.docs)
	}
	if p2 := rc.readFeed(t, c, "Incremental Feed", map[string]string{"If-None-Match": p.etag}); p2.status != http.StatusNotModified || p2.etag != p.etag {
		t.Fatalf("nothing new: status %d etag %q, want 304 with %q", p2.status, p2.etag, p.etag)
	}

	// A range that does not exist is gone; a bad continuation is a 400.
	res := rc.do(t, "GET", docsPath(c), map[string]string{"A-IM": "Incremental Feed", "x-ms-documentdb-partitionkeyrangeid": "1"}, nil)
	if res.status != http.StatusGone || res.header.Get("x-ms-substatus") != "1002" {
		t.Fatalf("range 1: %d substatus %q, want 410/1002", res.status, res.header.Get("x-ms-substatus"))
	}
	res = rc.do(t, "GET", docsPath(c), map[string]string{"A-IM": "Incremental Feed", "If-None-Match": `"abc"`}, nil)
	if res.status != http.StatusBadRequest {
		t.Fatalf("bad continuation: %d, want 400", res.status)
	}

	// A hierarchical key: the feed of a prefix.
	h := e.container(t, pkProps("hier", "/t", "/u"))
	for i, tu := range [][2]string{{"x", "1"}, {"x", "2"}, {"y", "1"}} {
		pk := azcosmos.NewPartitionKeyString(tu[0]).AppendString(tu[1])
		body := mustJSON(t, map[string]any{"id": strconv.Itoa(i), "t": tu[0], "u": tu[1]})
		if _, err := h.CreateItem(e.ctx, pk, body, nil); err != nil {
			t.Fatal(err)
		}
	}
	p = rc.readFeed(t, h, "Incremental Feed", map[string]string{"x-ms-documentdb-partitionkey": `["x"]`})
	if p.status != http.StatusOK || len(p.docs) != 2 {
		t.Fatalf("prefix [x]: status %d, %v", p.status, p.docs)
	}
}

// TestChangeFeedSkipsExpired: an expired item is never delivered, purged
// or not, and a re-created one is delivered again.
func TestChangeFeedSkipsExpired(t *testing.T) {
	e := startWith(t, server.Config{Memory: true, DisablePurger: true})
	c := ttlContainer(t, e, "exp", int32p(-1))
	for _, body := range []string{`{"id":"short","pk":"p","ttl":5}`, `{"id":"long","pk":"p","ttl":50}`} {
		if _, err := c.CreateItem(e.ctx, pk, []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(5 * time.Second)
	docs, _ := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{}, 10)
	if len(docs) != 1 || docs[0]["id"] != "long" {
		t.Fatalf("feed after short expired: %v, want only long", docs)
	}
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"short","pk":"p"}`), nil); err != nil {
		t.Fatalf("create over the expired item: %v", err)
	}
	docs, _ = drainSDK(t, e, c, azcosmos.ChangeFeedOptions{}, 10)
	if len(docs) != 2 || docs[1]["id"] != "short" {
		t.Fatalf("feed after re-create: %v, want long then short", docs)
	}
}

// metadata returns a record's metadata.
func metadata(t testing.TB, rec map[string]any) map[string]any {
	t.Helper()
	m, ok := rec["metadata"].(map[string]any)
	if !ok {
		t.Fatalf("record without metadata: %v", rec)
	}
	return m
}

// TestAllVersionsAndDeletes checks the records of every kind of change,
// TTL purges included, and their order.
func TestAllVersionsAndDeletes(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	c := avadContainer(t, e, rc, "avad", 60, int32p(-1), "/pk")
	head := rc.readFeed(t, c, "Full-Fidelity Feed", map[string]string{"If-None-Match": "*"})
	if head.status != http.StatusNotModified {
		t.Fatalf("start from now: %d, want 304", head.status)
	}
	p := azcosmos.NewPartitionKeyString("p")
	mustDo := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := c.CreateItem(e.ctx, p, item("a", "p", "v", 1), nil)
	mustDo("create a", err)
	_, err = c.UpsertItem(e.ctx, p, item("a", "p", "v", 2), nil)
	mustDo("upsert a", err)
	ops := azcosmos.PatchOperations{}
	ops.AppendIncrement("/v", 1)
	_, err = c.PatchItem(e.ctx, p, "a", ops, nil)
	mustDo("patch a", err)
	_, err = c.DeleteItem(e.ctx, p, "a", nil)
	mustDo("delete a", err)
	_, err = c.CreateItem(e.ctx, p, []byte(`{"id":"b","pk":"p","ttl":5}`), nil)
	mustDo("create b", err)
	e.clock.Advance(5 * time.Second)
	clocktest.WaitUntil(t, "purge of b", func() bool { return e.srv.Engine.StoredItems() == 0 })
	_, err = c.CreateItem(e.ctx, p, item("b", "p", "again", true), nil)
	mustDo("re-create b", err)

	recs, _ := rc.drainAVAD(t, c, head.etag, nil)
	want := []struct {
		op, id  string
		v       float64
		expired bool
	}{
		{"create", "a", 1, false}, {"replace", "a", 2, false}, {"replace", "a", 3, false},
		{"delete", "a", 3, false}, {"create", "b", 0, false}, {"delete", "b", 0, true}, {"create", "b", 0, false},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %v", len(recs), len(want), recs)
	}
	var last, prevLSN float64
	for i, w := range want {
		r := recs[i]
		m := metadata(t, r)
		if m["operationType"] != w.op {
			t.Fatalf("record %d: operationType %v, want %s (%v)", i, m["operationType"], w.op, r)
		}
		lsn, _ := m["lsn"].(float64)
		if lsn <= last {
			t.Fatalf("record %d: lsn %v after %v", i, lsn, last)
		}
		last = lsn
		if crts, _ := m["crts"].(float64); crts <= 0 {
			t.Errorf("record %d: crts %v, want epoch seconds", i, m["crts"])
		}
		switch w.op {
		case "create", "replace":
			cur, _ := r["current"].(map[string]any)
			if cur["id"] != w.id || cur["_lsn"] != lsn {
				t.Errorf("record %d: current %v, want item %s with _lsn %v", i, cur, w.id, lsn)
			}
			if w.v != 0 && cur["v"] != w.v {
				t.Errorf("record %d: current v=%v, want %v", i, cur["v"], w.v)
			}
			if w.op == "replace" && m["previousImageLSN"] != prevLSN {
				t.Errorf("record %d: previousImageLSN %v, want %v", i, m["previousImageLSN"], prevLSN)
			}
		case "delete":
			if m["id"] != w.id || m["timeToLiveExpired"] != w.expired || m["previousImageLSN"] != prevLSN {
				t.Errorf("record %d: %v, want delete of %s with timeToLiveExpired %v and previousImageLSN %v", i, m, w.id, w.expired, prevLSN)
			}
			if pk, _ := m["partitionKey"].(map[string]any); pk["pk"] != "p" {
				t.Errorf("record %d: partitionKey %v, want {pk: p}", i, m["partitionKey"])
			}
			if prev, _ := r["previous"].(map[string]any); prev["id"] != w.id {
				t.Errorf("record %d: previous %v, want the deleted item", i, r["previous"])
			}
		}
		prevLSN = lsn
	}

	// Scoped to a partition key; without a policy the mode is refused.
	if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("q"), item("q1", "q"), nil); err != nil {
		t.Fatal(err)
	}
	scoped, _ := rc.drainAVAD(t, c, head.etag, map[string]string{"x-ms-documentdb-partitionkey": `["q"]`})
	if len(scoped) != 1 || metadata(t, scoped[0])["operationType"] != "create" {
		t.Fatalf("partition q: %v, want its one create", scoped)
	}
	plain := e.container(t, pkProps("plain", "/pk"))
	res := rc.do(t, "GET", docsPath(plain), map[string]string{"A-IM": "Full-Fidelity Feed", "If-None-Match": "*"}, nil)
	if res.status != http.StatusBadRequest || !bytes.Contains(res.body, []byte("changeFeedPolicy.retentionDuration")) {
		t.Fatalf("all versions without a policy: %d %s, want 400 naming changeFeedPolicy.retentionDuration", res.status, res.body)
	}
}

// TestAllVersionsTTLHierarchical: a purge of an item under a
// hierarchical key records every level of its key, and an expired item
// re-created before the purger reaches it still gets its one delete
// record, before the create.
func TestAllVersionsTTLHierarchical(t *testing.T) {
	e := startWith(t, server.Config{Memory: true, DisablePurger: true})
	rc := newRest(t, e)
	c := avadContainer(t, e, rc, "hier", 60, int32p(5), "/tenant", "/user")
	head := rc.readFeed(t, c, "Full-Fidelity Feed", map[string]string{"If-None-Match": "*"})
	pk := azcosmos.NewPartitionKeyString("t1").AppendString("u1")
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"x","tenant":"t1","user":"u1"}`), nil); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(5 * time.Second)
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"x","tenant":"t1","user":"u1","n":2}`), nil); err != nil {
		t.Fatalf("create over the expired item: %v", err)
	}
	recs, _ := rc.drainAVAD(t, c, head.etag, nil)
	if len(recs) != 3 {
		t.Fatalf("%d records, want create, TTL delete, create: %v", len(recs), recs)
	}
	del := metadata(t, recs[1])
	if del["operationType"] != "delete" || del["timeToLiveExpired"] != true {
		t.Fatalf("second record %v, want a TTL delete", del)
	}
	if pkObj, _ := del["partitionKey"].(map[string]any); pkObj["tenant"] != "t1" || pkObj["user"] != "u1" {
		t.Fatalf("partitionKey %v, want every level {tenant: t1, user: u1}", del["partitionKey"])
	}
	if metadata(t, recs[2])["operationType"] != "create" {
		t.Fatalf("third record %v, want the create", recs[2])
	}
}

// TestAllVersionsRetention: the log is trimmed by the retention in the
// background, and a continuation from before the trim is refused.
func TestAllVersionsRetention(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	c := avadContainer(t, e, rc, "ret", 1, nil, "/pk")
	head := rc.readFeed(t, c, "Full-Fidelity Feed", map[string]string{"If-None-Match": "*"})
	if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("p"), item("old", "p"), nil); err != nil {
		t.Fatal(err)
	}
	if recs, _ := rc.drainAVAD(t, c, head.etag, nil); len(recs) != 1 {
		t.Fatalf("%d records before the retention passed, want 1", len(recs))
	}
	e.clock.Advance(61 * time.Second)
	if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("p"), item("new", "p"), nil); err != nil {
		t.Fatal(err)
	}
	feed := docsPath(c)
	hdr := map[string]string{"A-IM": "Full-Fidelity Feed", "If-None-Match": head.etag}
	clocktest.WaitUntil(t, "the trim of the expired record", func() bool {
		return rc.do(t, "GET", feed, hdr, nil).status == http.StatusBadRequest
	})
	res := rc.do(t, "GET", feed, hdr, nil)
	if !bytes.Contains(res.body, []byte("retention")) {
		t.Fatalf("continuation before the trim: %s, want a message about the retention", res.body)
	}
}
