package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSplitPartition splits a partition of a container that holds items
// and has been read: the ranges, queries by range (old continuations
// included), change feeds (from the beginning, and from the parent's
// continuation), session tokens, usage and expiry all carry on in the
// children, and a child splits again.
func TestSplitPartition(t *testing.T) {
	const items = 100
	e, advance := partitionedEngine(t, 2, items)
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c"}

	// What range 0 holds, and a change feed read to its end.
	before := rowIDs(t, queryPages(t, e, QueryRequest{Ref: ref, Body: queryBody("SELECT * FROM c"), RangeID: "0"}))
	drainFeed := func(rangeID, from string) ([]string, string) {
		t.Helper()
		rows, cont := drainFeed(t, e, ChangeFeedRequest{Ref: ref, RangeID: rangeID, IfNoneMatch: from, MaxItemCount: 7}, nil)
		return rowIDs(t, stringRows(rows)), cont
	}
	feed0, token0 := drainFeed("0", "")
	slices.Sort(feed0)
	if !slices.Equal(feed0, before) {
		t.Fatalf("range 0: feed %d items, query %d", len(feed0), len(before))
	}
	// A query of range 0 stopped after its first page.
	first, err := e.QueryItems(ctx, QueryRequest{Ref: ref, Body: queryBody("SELECT * FROM c"), RangeID: "0", MaxItemCount: 10})
	if err != nil || first.Continuation == "" {
		t.Fatalf("first page: %v", err)
	}
	firstIDs := rowIDs(t, stringRows(first.Rows()))
	first.Body.Release()

	res, err := e.SplitPartition(ctx, "db", "c", "0")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Children, []string{"2", "3"}) {
		t.Fatalf("children %v", res.Children)
	}
	ranges, _, _, err := e.PartitionKeyRanges(ctx, "db", "c")
	if err != nil || len(ranges) != 3 {
		t.Fatalf("pkranges after the split: %d, %v", len(ranges), err)
	}
	var r0 struct {
		ID           string
		Parents      []string
		MaxExclusive string
	}
	json.Unmarshal(ranges[0], &r0)
	if r0.ID != "2" || !slices.Equal(r0.Parents, []string{"0"}) {
		t.Fatalf("first range after the split: %s", ranges[0])
	}

	// Range 0 is gone; its children hold its items between them.
	if _, err := e.QueryItems(ctx, QueryRequest{Ref: ref, Body: queryBody("SELECT * FROM c"), RangeID: "0"}); !IsKind(err, KindGone) {
		t.Fatalf("query of the split range: %v, want 410", err)
	}
	var after []string
	for _, id := range res.Children {
		after = append(after, rowIDs(t, queryPages(t, e, QueryRequest{Ref: ref, Body: queryBody("SELECT * FROM c"), RangeID: id}))...)
	}
	slices.Sort(after)
	if !slices.Equal(after, before) {
		t.Fatalf("the children hold %d items, the parent held %d", len(after), len(before))
	}
	// The first page's continuation goes on in each child.
	rest := slices.Clone(firstIDs)
	for _, id := range res.Children {
		rest = append(rest, rowIDs(t, queryPages(t, e, QueryRequest{Ref: ref, Body: queryBody("SELECT * FROM c"), RangeID: id, Continuation: first.Continuation}))...)
	}
	slices.Sort(rest)
	if !slices.Equal(rest, before) {
		t.Fatalf("the first page and the children's rest: %d items, want %d", len(rest), len(before))
	}

	// Change feeds: from the beginning the children list the parent's
	// items; from the parent's continuation, nothing until a write.
	var feedAfter []string
	childTokens := map[string]string{}
	for _, id := range res.Children {
		rows, _ := drainFeed(id, "")
		feedAfter = append(feedAfter, rows...)
		more, tok := drainFeed(id, token0)
		if len(more) != 0 {
			t.Errorf("child %s from the parent's continuation: %v", id, more)
		}
		childTokens[id] = tok
	}
	slices.Sort(feedAfter)
	if !slices.Equal(feedAfter, before) {
		t.Fatalf("the children's feeds: %d items, want %d", len(feedAfter), len(before))
	}
	written := 0
	for i := range items {
		pk := fmt.Sprintf(`["k%d"]`, i)
		w, err := e.WriteItem(ctx, ItemRef{DB: "db", Coll: "c", PK: pk, HasPK: true}, Upsert, fmt.Appendf(nil, `{"id":"i%d","pk":"k%d","v":2}`, i, i), "")
		if err != nil {
			t.Fatal(err)
		}
		if p, _, _ := strings.Cut(w.Session, ":"); p == "0" {
			t.Fatalf("a write after the split answered for range 0: %s", w.Session)
		}
		written++
	}
	var changed []string
	for _, id := range res.Children {
		rows, _ := drainFeed(id, childTokens[id])
		changed = append(changed, rows...)
	}
	slices.Sort(changed)
	if !slices.Equal(changed, before) {
		t.Fatalf("after rewriting every item the children's feeds list %d changes, want %d", len(changed), len(before))
	}

	// The children's usage is counted; the container's adds up.
	waitCounted(t, e, "the children counted", items)

	// A child splits again; its children read both ancestors' logs.
	res2, err := e.SplitPartition(ctx, "db", "c", "2")
	if err != nil || !slices.Equal(res2.Children, []string{"4", "5"}) {
		t.Fatalf("second split: %+v, %v", res2, err)
	}
	var all []string
	for _, id := range []string{"4", "5", "3", "1"} {
		rows, _ := drainFeed(id, "")
		all = append(all, rows...)
	}
	slices.Sort(all)
	if len(all) != items || len(slices.Compact(slices.Clone(all))) != items {
		t.Fatalf("the live ranges' feeds list %d items, want each of %d once", len(all), items)
	}
	if _, err := e.SplitPartition(ctx, "db", "c", "0"); !IsKind(err, KindGone) {
		t.Errorf("splitting a split range: %v, want 410", err)
	}

	// Everything still expires and is purged.
	advance(101 * time.Second)
	waitCounted(t, e, "every partition purged", 0)
}

// TestIndexRebuildAcrossPartitions: an indexing-policy change rebuilds
// the index of a container of several partitions, writes going on in
// them meanwhile, and then a split: queries by range read the index.
func TestIndexRebuildAcrossPartitions(t *testing.T) {
	const items = 60
	e, _ := partitionedEngine(t, 3, items)
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c"}
	body := `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":100,` +
		`"indexingPolicy":{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/pk/?"}]}}`
	if _, err := e.ReplaceContainer(ctx, "db", "c", []byte(body), ""); err != nil {
		t.Fatal(err)
	}
	for i := range items {
		pk := fmt.Sprintf(`["k%d"]`, i)
		if _, err := e.WriteItem(ctx, ItemRef{DB: "db", Coll: "c", PK: pk, HasPK: true}, Upsert, fmt.Appendf(nil, `{"id":"i%d","pk":"k%d","n":%d}`, i, i, i%6), ""); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the rebuild", func() bool { return indexReady(t, e, "c") })
	if _, err := e.SplitPartition(ctx, "db", "c", "1"); err != nil {
		t.Fatal(err)
	}
	if err := e.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, id := range []string{"0", "3", "4", "2"} {
		rows, indexed := drainQuery(t, e, QueryRequest{Ref: ref, Body: queryBody("SELECT * FROM c WHERE c.n = 2"), RangeID: id, MaxItemCount: 3}, false)
		if !indexed {
			t.Errorf("range %s: the query did not read the index", id)
		}
		got = append(got, rows...)
	}
	if len(got) != items/6 {
		t.Fatalf("the ranges hold %d items with n = 2, want %d", len(got), items/6)
	}
}

// TestSplitSurvivesRestart: a split container opens again as it was left:
// its ranges, its items in them, its children's log sequences.
func TestSplitSurvivesRestart(t *testing.T) {
	store := memStore(t)
	ctx := context.Background()
	e, _ := openEngine(t, store, Options{})
	mustCreateWith(t, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{Partitions: "2"})
	write := func(e *Engine, i int) string {
		t.Helper()
		w, err := e.WriteItem(ctx, ItemRef{DB: "db", Coll: "c", PK: fmt.Sprintf(`["k%d"]`, i), HasPK: true}, Upsert, fmt.Appendf(nil, `{"id":"i%d","pk":"k%d"}`, i, i), "")
		if err != nil {
			t.Fatal(err)
		}
		return w.Session
	}
	for i := range 40 {
		write(e, i)
	}
	if _, err := e.SplitPartition(ctx, "db", "c", "1"); err != nil {
		t.Fatal(err)
	}
	before, _, _, err := e.PartitionKeyRanges(ctx, "db", "c")
	if err != nil {
		t.Fatal(err)
	}
	e.Close()

	e2, _ := openEngine(t, store, Options{})
	after, _, _, err := e2.PartitionKeyRanges(ctx, "db", "c")
	if err != nil || len(after) != len(before) {
		t.Fatalf("ranges after a restart: %d, want %d (%v)", len(after), len(before), err)
	}
	for i := range before {
		if !bytes.Equal(before[i], after[i]) {
			t.Fatalf("range %d after a restart:\n%s\nwas\n%s", i, after[i], before[i])
		}
	}
	for i := range 40 {
		if s := write(e2, i); strings.HasPrefix(s, "1:") {
			t.Fatalf("a write after the restart answered for the split range: %s", s)
		}
	}
	if err := e2.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestThroughputSplits: raising a container's throughput past what its
// partitions serve splits them in the background, as on the service,
// until it has as many as the throughput asks for; lowering it merges
// nothing.
func TestThroughputSplits(t *testing.T) {
	e, _ := newTestEngine(t)
	ctx := context.Background()
	mustCreateWith(t, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{Offer: "400"})
	for i := range 50 {
		ref := ItemRef{DB: "db", Coll: "c", PK: fmt.Sprintf(`["k%d"]`, i), HasPK: true}
		if _, err := e.WriteItem(ctx, ref, Create, fmt.Appendf(nil, `{"id":"i%d","pk":"k%d"}`, i, i), ""); err != nil {
			t.Fatal(err)
		}
	}
	setThroughput(t, e, "c", 30_000) // five partitions of 6,000 RU/s
	waitUntil(t, "five partitions", func() bool { return len(rangeIDs(t, e, "c")) == 5 })
	var all []string
	for _, p := range rangeIDs(t, e, "c") {
		all = append(all, rowIDs(t, queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c"), RangeID: p}))...)
	}
	if len(all) != 50 || len(slices.Compact(slices.Sorted(slices.Values(all)))) != 50 {
		t.Fatalf("the five ranges hold %d items, want each of 50 once", len(all))
	}
	setThroughput(t, e, "c", 400)
	if n := len(rangeIDs(t, e, "c")); n != 5 {
		t.Fatalf("%d ranges after lowering the throughput, want 5", n)
	}
	waitCounted(t, e, "the children counted", 50)
}

// TestPinnedPartitions: a container created with x-ebb-partition-count
// keeps that many partitions whatever its throughput asks for, across a
// raise and a restart; the administrative split still splits it.
func TestPinnedPartitions(t *testing.T) {
	store := memStore(t)
	ctx := context.Background()
	e, _ := openEngine(t, store, Options{})
	// 60,000 RU/s would be ten partitions, and one if the count is 1.
	mustCreateWith(t, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{Offer: "60000", Partitions: "2"})
	mustCreateWith(t, e, "db", `{"id":"one","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{Offer: "60000", Partitions: "1"})
	mustCreateWith(t, e, "db", `{"id":"free","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{Offer: "400"})
	setThroughput(t, e, "c", 120_000)
	// The grower's work is visible on a container it may split: raising
	// "free" splits it, and by then it has passed the pinned ones.
	setThroughput(t, e, "free", 12_000)
	count := func(e *Engine, coll string) int { return len(rangeIDs(t, e, coll)) }
	waitUntil(t, "free grown to two", func() bool { return count(e, "free") == 2 })
	for _, p := range []*container{mustContainer(t, e, "c"), mustContainer(t, e, "one")} {
		if split, err := e.growPartitions(ctx, p); err != nil || split {
			t.Fatalf("%s: the grower split it (%v)", p.id, err)
		}
	}
	if n, m := count(e, "c"), count(e, "one"); n != 2 || m != 1 {
		t.Fatalf("pinned containers have %d and %d ranges, want 2 and 1", n, m)
	}
	if _, err := e.SplitPartition(ctx, "db", "one", "0"); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e2, _ := openEngine(t, store, Options{})
	for coll, want := range map[string]int{"c": 2, "one": 2} {
		p := mustContainer(t, e2, coll)
		if split, err := e2.growPartitions(ctx, p); err != nil || split || count(e2, coll) != want {
			t.Fatalf("%s after a restart: %d ranges, want %d; grower split %v (%v)", coll, count(e2, coll), want, split, err)
		}
	}
}

func mustContainer(t *testing.T, e *Engine, coll string) *container {
	t.Helper()
	c, err := e.container("db", coll)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBulkOfFailedOperationsAfterSplit: a bulk request none of whose
// operations gets as far as a key answers with each operation's error,
// also once the first partition has been split.
func TestBulkOfFailedOperationsAfterSplit(t *testing.T) {
	e, _ := partitionedEngine(t, 2, 0)
	ctx := context.Background()
	if _, err := e.SplitPartition(ctx, "db", "c", "0"); err != nil {
		t.Fatal(err)
	}
	br, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: "c"}, []byte(`[{"operationType":"Create","resourceBody":{"pk":"a"}}]`), BatchOptions{ContinueOnError: true})
	if err != nil {
		t.Fatalf("bulk: %v", err)
	}
	if len(br.Ops) != 1 || !IsKind(br.Ops[0].Err, KindBadRequest) {
		t.Fatalf("the operation without an id: %+v", br.Ops)
	}
}

// setThroughput replaces db/coll's own offer with ru RU/s.
func setThroughput(t *testing.T, e *Engine, coll string, ru int) {
	t.Helper()
	c := mustContainer(t, e, coll)
	body := fmt.Sprintf(`{"offerResourceId":%q,"content":{"offerThroughput":%d}}`, c.ridStr, ru)
	if _, err := e.ReplaceOffer(context.Background(), c.offerID, []byte(body), ""); err != nil {
		t.Fatal(err)
	}
}

// waitCounted waits until db/c's usage is counted and holds items items,
// and checks that its documents and their index entries agree.
func waitCounted(t *testing.T, e *Engine, what string, items int64) {
	t.Helper()
	ctx := context.Background()
	waitUntil(t, what, func() bool {
		r, err := e.ReadContainer(ctx, "db", "c", true)
		return err == nil && r.Usage != nil && r.Usage.Known && r.Usage.Items == items
	})
	if err := e.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
}
