package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSizeSplits: a partition whose documents grow past the split size
// is split in the background at the EPK that halves its bytes, and a
// child still past it is split again, until every partition holds less:
// the halves are about even, and every item is still read once, in
// exactly one range.
func TestSizeSplits(t *testing.T) {
	const splitSize = 32 << 10
	e, _ := openEngine(t, memStore(t), Options{SplitSize: splitSize})
	ctx := context.Background()
	mustCreateWith(t, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{})
	const items = 200 // about 190 KB
	for i := range items {
		writePadded(t, e, "c", fmt.Sprintf(`["k%d"]`, i), fmt.Sprintf("i%d", i), fmt.Sprintf(`"pk":"k%d"`, i))
	}
	var sts []collState
	waitUntil(t, "every partition counted and within the split size", func() bool {
		sts = partitionStates(t, e, "c")
		for _, st := range sts {
			if st.counting || st.bytes > splitSize {
				return false
			}
		}
		return true
	})
	if len(sts) < 6 {
		t.Fatalf("%d partitions hold 190 KB under a split size of 32 KB", len(sts))
	}
	for i, st := range sts {
		// Each is half of a partition past the split size, within an
		// item.
		if st.bytes < splitSize/2-1024 {
			t.Errorf("partition %d holds %d bytes: the split that made it was not even", i, st.bytes)
		}
	}
	var all []string
	for _, p := range rangeIDs(t, e, "c") {
		all = append(all, rowIDs(t, queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT c.id FROM c"), RangeID: p}))...)
	}
	if len(all) != items || len(slices.Compact(slices.Sorted(slices.Values(all)))) != items {
		t.Fatalf("the ranges hold %d items, want each of %d once", len(all), items)
	}
	waitCounted(t, e, "the children counted", items)

	st, err := e.Partitions(ctx, "db", "c")
	ps := st.Partitions
	if err != nil || st.SplitSize != splitSize || len(ps) != len(sts) {
		t.Fatalf("Partitions: %d of them, split size %d, %v", len(ps), st.SplitSize, err)
	}
	sum := int64(0)
	for i, p := range ps {
		sum += p.Items
		if !p.Counted || p.Bytes != sts[i].bytes || len(p.Parents) == 0 || p.Parents[0] != "0" || (i > 0 && p.MinInclusive != ps[i-1].MaxExclusive) {
			t.Errorf("partition %d: %+v", i, p)
		}
	}
	if sum != items || ps[0].MinInclusive != "" || ps[len(ps)-1].MaxExclusive != "FF" {
		t.Errorf("Partitions: %d items in all, ranges from %q to %q", sum, ps[0].MinInclusive, ps[len(ps)-1].MaxExclusive)
	}
}

// TestSizeSplitOneKey: as on the service, a partition past the split
// size whose items all have one partition key is not split, and the
// grower leaves it until it has grown by a quarter; one whose bytes are
// mostly one key's is split once, that key's items on one side.
func TestSizeSplitOneKey(t *testing.T) {
	const splitSize = 16 << 10
	e, _ := openEngine(t, memStore(t), Options{SplitSize: splitSize})
	ctx := context.Background()
	write := func(coll, pk string, n int) {
		t.Helper()
		for i := range n {
			writePadded(t, e, coll, fmt.Sprintf(`[%q]`, pk), fmt.Sprintf("%s-%d", pk, i), fmt.Sprintf(`"pk":%q`, pk))
		}
	}
	mustCreateWith(t, e, "db", `{"id":"one","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{})
	write("one", "same", 40)
	c := mustContainer(t, e, "one")
	if split, err := e.growPartitions(ctx, c); err != nil || split {
		t.Fatalf("the grower split a partition of one key (%v)", err)
	}
	// The size it was found unsplittable at (the background pass may
	// have looked last).
	ref := partitionRef{c.rid, c.layout.live[0].id}
	e.splitSkips.mu.Lock()
	at := e.splitSkips.size[ref]
	e.splitSkips.mu.Unlock()
	if size := partitionStates(t, e, "one")[0].bytes; at <= splitSize || at > size {
		t.Errorf("a partition of one key of %d bytes was last found unsplittable at %d", size, at)
	}
	if !e.splitSkips.skip(ref, at) || !e.splitSkips.skip(ref, at+at/4-1) || e.splitSkips.skip(ref, at+at/4) {
		t.Errorf("a partition of one key found unsplittable at %d bytes: skipped until a quarter more", at)
	}
	if n := len(rangeIDs(t, e, "one")); n != 1 {
		t.Fatalf("%d ranges, want 1", n)
	}

	mustCreateWith(t, e, "db", `{"id":"two","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{})
	write("two", "small", 1)
	write("two", "big", 40)
	waitUntil(t, "two's partition split", func() bool { return len(rangeIDs(t, e, "two")) == 2 })
	c = mustContainer(t, e, "two")
	waitUntil(t, "its children counted", func() bool {
		sts := partitionStates(t, e, "two")
		return !sts[0].counting && !sts[1].counting
	})
	if split, err := e.growPartitions(ctx, c); err != nil || split {
		t.Fatalf("the grower split a child of one key (%v)", err)
	}
	for _, p := range rangeIDs(t, e, "two") {
		rows := rowIDs(t, queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "two"}, Body: queryBody("SELECT c.id FROM c"), RangeID: p}))
		if len(rows) != 1 && len(rows) != 40 {
			t.Errorf("range %s holds %d items, want one key's: 1 or 40", p, len(rows))
		}
	}
}

// TestHalvingEPK: the boundary that halves a sample's bytes, between two
// of its EPKs; past the sample's one EPK when the partition has others.
func TestHalvingEPK(t *testing.T) {
	s := func(epk string, size int) epkSample { return epkSample{epk, size} }
	for _, tt := range []struct {
		samples []epkSample
		lo, hi  string
		want    string
	}{
		{[]epkSample{s("30", 1), s("10", 1), s("20", 1), s("40", 1)}, "10", "40", "30"},
		{[]epkSample{s("10", 5), s("20", 1), s("30", 1), s("40", 1)}, "10", "40", "20"},
		{[]epkSample{s("10", 1), s("20", 1), s("20", 1), s("20", 1), s("30", 1)}, "10", "30", "20"},
		{[]epkSample{s("20", 1), s("20", 1)}, "10", "20", "20"},
		{[]epkSample{s("20", 1), s("20", 1)}, "20", "30", "30"},
		{[]epkSample{s("20", 1), s("20", 1)}, "20", "20", ""},
	} {
		if got := halvingEPK(slices.Clone(tt.samples), tt.lo, tt.hi); got != tt.want {
			t.Errorf("halvingEPK(%v, %s, %s) = %q, want %q", tt.samples, tt.lo, tt.hi, got, tt.want)
		}
	}
}

// writePadded upserts into db/coll the item id, under the partition key
// header pk, with the members fields and about 900 bytes of padding.
func writePadded(t *testing.T, e *Engine, coll, pk, id, fields string) {
	t.Helper()
	ref := ItemRef{DB: "db", Coll: coll, PK: pk, HasPK: true}
	body := fmt.Appendf(nil, `{"id":%q,%s,"pad":%q}`, id, fields, strings.Repeat("x", 900))
	if _, err := e.WriteItem(context.Background(), ref, Upsert, body, ""); err != nil {
		t.Fatal(err)
	}
}

// partitionStates reads the write states of coll's live partitions.
func partitionStates(t *testing.T, e *Engine, coll string) []collState {
	t.Helper()
	sts, err := e.partitionStates(context.Background(), mustContainer(t, e, coll))
	if err != nil {
		t.Fatal(err)
	}
	return sts
}

// TestSizeSplitHierarchical: a container of a hierarchical key splits
// between its first-level values, and not within one (Ebb's boundaries
// are whole first-level hashes).
func TestSizeSplitHierarchical(t *testing.T) {
	const splitSize = 16 << 10
	e, _ := openEngine(t, memStore(t), Options{SplitSize: splitSize})
	ctx := context.Background()
	write := func(coll, tenant string, n int) {
		t.Helper()
		for i := range n {
			writePadded(t, e, coll, fmt.Sprintf(`[%q,"u%d"]`, tenant, i), fmt.Sprintf("%s-%d", tenant, i), fmt.Sprintf(`"tenant":%q,"user":"u%d"`, tenant, i))
		}
	}
	const def = `"partitionKey":{"paths":["/tenant","/user"],"kind":"MultiHash","version":2}`
	mustCreateWith(t, e, "db", `{"id":"tenants",`+def+`}`, ThroughputHeaders{})
	for i := range 8 {
		write("tenants", fmt.Sprintf("t%d", i), 8)
	}
	// Each tenant's items take about 8 KB.
	waitUntil(t, "the tenants' partitions counted and within the split size", func() bool {
		sts := partitionStates(t, e, "tenants")
		for _, st := range sts {
			if st.counting || st.bytes > splitSize {
				return false
			}
		}
		return len(sts) >= 4
	})
	var all []string
	for _, p := range rangeIDs(t, e, "tenants") {
		all = append(all, rowIDs(t, queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "tenants"}, Body: queryBody("SELECT c.id FROM c"), RangeID: p}))...)
	}
	if len(all) != 64 || len(slices.Compact(slices.Sorted(slices.Values(all)))) != 64 {
		t.Fatalf("the ranges hold %d items, want each of 64 once", len(all))
	}

	mustCreateWith(t, e, "db", `{"id":"one",`+def+`}`, ThroughputHeaders{})
	write("one", "only", 40)
	if split, err := e.growPartitions(ctx, mustContainer(t, e, "one")); err != nil || split {
		t.Fatalf("the grower split a partition of one first-level value (%v)", err)
	}
	if n := len(rangeIDs(t, e, "one")); n != 1 {
		t.Fatalf("%d ranges, want 1", n)
	}
}
