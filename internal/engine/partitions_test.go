package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/postgres"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
)

// partitionedEngine opens an engine with container db/c of n physical
// partitions (and a defaultTtl of 100 s) holding items i0 … i(items-1),
// each in its own logical partition.
func partitionedEngine(t *testing.T, n, items int) (*Engine, func(time.Duration)) {
	t.Helper()
	e, clk := newTestEngine(t)
	ctx := context.Background()
	mustCreateWith(t, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":100}`, ThroughputHeaders{Partitions: fmt.Sprint(n)})
	for i := range items {
		ref := ItemRef{DB: "db", Coll: "c", PK: fmt.Sprintf(`["k%d"]`, i), HasPK: true}
		if _, err := e.WriteItem(ctx, ref, Create, fmt.Appendf(nil, `{"id":"i%d","pk":"k%d"}`, i, i), ""); err != nil {
			t.Fatal(err)
		}
	}
	return e, clk.Advance
}

// rowIDs reads the ids of rows, sorted.
func rowIDs(t *testing.T, rows []string) []string {
	t.Helper()
	var out []string
	for _, r := range rows {
		var doc struct{ ID string }
		if err := json.Unmarshal([]byte(r), &doc); err != nil {
			t.Fatal(err)
		}
		out = append(out, doc.ID)
	}
	slices.Sort(out)
	return out
}

// TestPartitions: a container of four physical partitions spreads its
// items over them by EPK, each with its own log sequence, usage and
// session tokens; a query or feed addressed to a range sees exactly that
// range's items; and everything adds up to the container.
func TestPartitions(t *testing.T) {
	const n, items = 4, 200
	e, advance := partitionedEngine(t, n, items)
	ctx := context.Background()
	c, _ := e.container("db", "c")
	if len(c.layout.live) != n {
		t.Fatalf("%d partitions", len(c.layout.live))
	}

	// The ranges tile the key space.
	ranges, _, _, err := e.PartitionKeyRanges(ctx, "db", "c")
	if err != nil || len(ranges) != n {
		t.Fatalf("pkranges: %d ranges, %v", len(ranges), err)
	}
	prev := ""
	for p, raw := range ranges {
		var r struct {
			ID                         string
			MinInclusive, MaxExclusive string
		}
		json.Unmarshal(raw, &r)
		if r.ID != fmt.Sprint(p) || r.MinInclusive != prev || r.MinInclusive >= r.MaxExclusive {
			t.Fatalf("range %d: %s", p, raw)
		}
		prev = r.MaxExclusive
	}
	if prev != "FF" {
		t.Fatalf("the last range ends at %q", prev)
	}

	// Every partition holds some items, each under its own LSNs.
	counts := make([]int, n)
	err = e.store.View(ctx, func(r storage.Reader) error {
		for p := range n {
			st, err := readPartitionState(r, c.rid, p)
			if err != nil {
				return err
			}
			counts[p] = int(st.items)
			if keyspace.LSNPartition(st.lsn) != p || keyspace.LSNCount(st.lsn) != uint64(st.items) {
				t.Errorf("partition %d: lsn %x for %d items", p, st.lsn, st.items)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for p, k := range counts {
		if k == 0 {
			t.Errorf("partition %d holds no item of %d", p, items)
		}
		total += k
	}
	if total != items {
		t.Fatalf("the partitions hold %d items, want %d", total, items)
	}
	res, err := e.ReadContainer(ctx, "db", "c", true)
	if err != nil || res.Usage == nil || res.Usage.Items != items {
		t.Fatalf("usage: %+v, %v", res.Usage, err)
	}

	// A write answers with its partition's session token.
	pk := `["k7"]`
	key, err := document.ParsePKHeader(pk)
	if err != nil {
		t.Fatal(err)
	}
	p := c.partitionOf(key)
	w, err := e.WriteItem(ctx, ItemRef{DB: "db", Coll: "c", PK: pk, HasPK: true}, Upsert, []byte(`{"id":"i7","pk":"k7","v":1}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d:-1#%d", p, counts[p]+1); w.Session != want {
		t.Errorf("session token %q, want %q", w.Session, want)
	}

	// Queries and feeds addressed to a range see that range's items, and
	// together every item once.
	var all, feedAll []string
	for p := range n {
		rows := rowIDs(t, queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c"), RangeID: fmt.Sprint(p), MaxItemCount: 17}))
		if len(rows) != counts[p] {
			t.Errorf("range %d: query returned %d items, want %d", p, len(rows), counts[p])
		}
		all = append(all, rows...)
		fed, _ := drainFeed(t, e, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}, RangeID: fmt.Sprint(p), MaxItemCount: 13}, func(fr ChangeFeedResult) {
			if !strings.HasPrefix(fr.Session, fmt.Sprintf("%d:-1#", p)) {
				t.Errorf("range %d: feed session token %q", p, fr.Session)
			}
		})
		feed := stringRows(fed)
		if len(feed) != counts[p] {
			t.Errorf("range %d: change feed returned %d items, want %d", p, len(feed), counts[p])
		}
		feedAll = append(feedAll, rowIDs(t, feed)...)
	}
	slices.Sort(all)
	slices.Sort(feedAll)
	if len(all) != items || len(slices.Compact(slices.Clone(all))) != items || !slices.Equal(all, feedAll) {
		t.Fatalf("ranges' queries and feeds: %d and %d rows, want the %d items once each", len(all), len(feedAll), items)
	}
	// The whole container, as the gateway serves a cross-partition query.
	if rows := queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT VALUE c.id FROM c"), CrossPartition: true}); len(rows) != items {
		t.Errorf("cross-partition query: %d rows", len(rows))
	}
	// A feed for one partition key reads its partition; one without a
	// range or a key cannot say which log to follow.
	fr, err := e.ChangeFeed(ctx, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: pk, HasPK: true}})
	if err != nil || len(fr.Rows) != 1 {
		t.Fatalf("feed of %s: %d rows, %v", pk, len(fr.Rows), err)
	}
	if _, err := e.ChangeFeed(ctx, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}}); !IsKind(err, KindBadRequest) {
		t.Errorf("feed of the whole container: %v, want 400", err)
	}
	if _, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c"), RangeID: "4"}); !IsKind(err, KindGone) {
		t.Errorf("query of range 4: %v, want 410", err)
	}

	// A bulk request whose operations fall in several partitions, and a
	// delete by partition key.
	var ops []string
	for i := range 20 {
		ops = append(ops, fmt.Sprintf(`{"operationType":"Upsert","partitionKey":"[\"b%d\"]","resourceBody":{"id":"b%d","pk":"b%d"}}`, i, i, i))
	}
	br, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: "c"}, []byte("["+strings.Join(ops, ",")+"]"), BatchOptions{ContinueOnError: true})
	if err != nil || br.Failed {
		t.Fatalf("bulk across partitions: %+v, %v", br, err)
	}
	if _, err := e.DeletePartition(ctx, ItemRef{DB: "db", Coll: "c", PK: `["k3"]`, HasPK: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}

	// Everything expires, in every partition, and is purged.
	advance(101 * time.Second)
	waitUntil(t, "every partition purged", func() bool {
		res, err := e.ReadContainer(ctx, "db", "c", true)
		return err == nil && res.Usage != nil && res.Usage.Items == 0
	})
	if err := e.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionCount: the header's values that are refused.
func TestPartitionCount(t *testing.T) {
	e, _ := newTestEngine(t)
	ctx := context.Background()
	if _, err := e.CreateDatabase(ctx, []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"0", "257", "x", "2.5"} {
		_, err := e.CreateContainer(ctx, "db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`), ThroughputHeaders{Partitions: bad})
		if !IsKind(err, KindBadRequest) || !strings.Contains(err.Error(), "x-ebb-partition-count") {
			t.Errorf("x-ebb-partition-count %q: %v", bad, err)
		}
	}
	_, err := e.CreateContainer(ctx, "db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"version":1}}`), ThroughputHeaders{Partitions: "2"})
	if !IsKind(err, KindBadRequest) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("two partitions for a version 1 key: %v", err)
	}
}

// TestEPKSubRange: a query or read feed that names a range and an EPK
// range within it (x-ms-start-epk, x-ms-end-epk: a feed range narrower
// than a partition) sees that part of the range's items only; the EPK
// headers without a range are refused.
func TestEPKSubRange(t *testing.T) {
	e, _ := partitionedEngine(t, 2, 60)
	ctx := context.Background()
	c, _ := e.container("db", "c")
	quarter := epkBound(1, 4) // the middle of range 0
	var want []string
	for i := range 60 {
		if c.pk.EPK(document.PartitionKey{{Kind: document.PKString, Str: fmt.Sprintf("k%d", i)}}) < quarter {
			want = append(want, fmt.Sprintf("i%d", i))
		}
	}
	slices.Sort(want)
	if len(want) == 0 || len(want) == 60 {
		t.Fatalf("%d items below the quarter: the test needs some on each side", len(want))
	}
	ref := ItemRef{DB: "db", Coll: "c"}
	got := rowIDs(t, queryPages(t, e, QueryRequest{Ref: ref, Body: queryBody("SELECT * FROM c"), RangeID: "0", EndEPK: quarter}))
	if !slices.Equal(got, want) {
		t.Errorf("query of range 0 below %s: %v, want %v", quarter, got, want)
	}
	feed, err := e.ReadFeed(ctx, QueryRequest{Ref: ref, RangeID: "0", EndEPK: quarter, MaxItemCount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got := rowIDs(t, stringRows(feed.Rows())); !slices.Equal(got, want) {
		t.Errorf("read feed of range 0 below %s: %v, want %v", quarter, got, want)
	}
	if _, err := e.QueryItems(ctx, QueryRequest{Ref: ref, Body: queryBody("SELECT * FROM c"), CrossPartition: true, StartEPK: quarter}); !IsKind(err, KindBadRequest) {
		t.Errorf("x-ms-start-epk without a range: %v", err)
	}
}

// TestBulkRangeID: a bulk request grouped by a range the container no
// longer has is 410 with substatus 1002; grouped by a live one, its
// operations run.
func TestBulkRangeID(t *testing.T) {
	e, _ := partitionedEngine(t, 2, 0)
	ctx := context.Background()
	if _, err := e.SplitPartition(ctx, "db", "c", "0"); err != nil {
		t.Fatal(err)
	}
	body := []byte(`[{"operationType":"Upsert","resourceBody":{"id":"x","pk":"a"}}]`)
	_, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: "c"}, body, BatchOptions{RangeID: "0"})
	if e, ok := err.(*Error); !ok || e.Kind != KindGone || e.SubStatus != 1002 {
		t.Fatalf("bulk for the split range: %v", err)
	}
	br, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: "c"}, body, BatchOptions{RangeID: "1"})
	if err != nil || br.Failed {
		t.Fatalf("bulk for a live range: %+v, %v", br, err)
	}
}

// TestScopedScanSkipsRuns: a scan addressed to one range passes over
// other ranges' logical partitions by seeking past their runs of keys,
// forwards and backwards (a descending ORDER BY walks the documents that
// lack its path backwards), and still sees exactly its range's items.
// Over the strict store, a skip must hand the store a key of the scan's
// own, not the one the iterator lent, which the skip ends.
func TestScopedScanSkipsRuns(t *testing.T) {
	e, _ := newTestEngine(t)
	testScopedScanSkipsRuns(t, e)
}

// TestScopedScanSkipsRunsPostgres is TestScopedScanSkipsRuns on
// PostgreSQL, whose paged scans skip within a page and start the next
// page past a run. It needs EBB_TEST_POSTGRES_URL.
func TestScopedScanSkipsRunsPostgres(t *testing.T) {
	store, err := postgres.Open(context.Background(), pgtest.FreshSchema(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, _ := openEngine(t, store, Options{})
	testScopedScanSkipsRuns(t, e)
}

func testScopedScanSkipsRuns(t *testing.T, e *Engine) {
	ctx := context.Background()
	mustCreateWith(t, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, ThroughputHeaders{Partitions: "4"})
	const pks, perPK = 12, 3 * skipAfter
	for p := range pks {
		for i := range perPK {
			pk := fmt.Sprintf("k%d", p)
			body := fmt.Sprintf(`{"id":"%s-%d","pk":%q}`, pk, i, pk)
			if i%3 == 0 { // the others lack /x
				body = fmt.Sprintf(`{"id":"%s-%d","pk":%q,"x":%d}`, pk, i, pk, i)
			}
			ref := ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true}
			if _, err := e.WriteItem(ctx, ref, Create, []byte(body), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := mustContainer(t, e, "c")
	for _, q := range []string{"SELECT * FROM c", "SELECT * FROM c ORDER BY c.x DESC", "SELECT * FROM c ORDER BY c.x"} {
		seen := map[string]bool{}
		for _, r := range rangeIDs(t, e, "c") {
			rows := queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(q), RangeID: r, MaxItemCount: 7})
			for _, row := range rows {
				var doc struct{ ID, PK string }
				if err := json.Unmarshal([]byte(row), &doc); err != nil {
					t.Fatal(err)
				}
				pk := document.PartitionKey{{Kind: document.PKString, Str: doc.PK}}
				if got := strconv.Itoa(c.partitionOf(pk)); got != r {
					t.Fatalf("%s: range %s returned %s of range %s", q, r, doc.ID, got)
				}
				if seen[doc.ID] {
					t.Fatalf("%s: %s returned twice", q, doc.ID)
				}
				seen[doc.ID] = true
			}
		}
		if len(seen) != pks*perPK {
			t.Fatalf("%s: the ranges returned %d items, want %d", q, len(seen), pks*perPK)
		}
	}
}
