package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

const excludeA = `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/?"}]}}`

func replaceContainer(t testing.TB, e *Engine, body string) {
	t.Helper()
	if _, err := e.ReplaceContainer(context.Background(), "db", "c", []byte(body), ""); err != nil {
		t.Fatal(err)
	}
}

func loadItems(t *testing.T, e *Engine, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		write(t, e, "c", fmt.Sprintf(`{"id":"%03d","pk":"p","a":%d,"b":%d}`, i, i%7, i%5))
	}
}

func countEntries(t testing.TB, e *Engine, path string) int {
	n := 0
	for _, s := range indexPaths(t, e, "c", false) {
		if s == path {
			n++
		}
	}
	return n
}

// query runs q across partitions and returns its ids sorted, and whether
// an index served it.
func queryIDs(t testing.TB, e *Engine, q string) ([]string, bool) {
	t.Helper()
	rows, indexed := drainQuery(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(q), MaxItemCount: 7, CrossPartition: true, RangeID: "0"}, false)
	slices.Sort(rows)
	return rows, indexed
}

func TestIndexRebuild(t *testing.T) {
	e, _ := openEngine(t, memStore(t), Options{indexBatch: 16})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	loadItems(t, e, 100)
	want, indexed := queryIDs(t, e, "SELECT VALUE c.id FROM c WHERE c.a = 3")
	if !indexed || len(want) != 14 {
		t.Fatalf("before: %d rows, index %v", len(want), indexed)
	}

	// Excluding /a drops its entries; queries on it scan.
	replaceContainer(t, e, excludeA)
	waitUntil(t, "rebuild without /a", func() bool { return indexReady(t, e, "c") })
	checkConsistent(t, e)
	if n := countEntries(t, e, "/a"); n != 0 {
		t.Fatalf("%d /a entries after excluding /a", n)
	}
	if n := countEntries(t, e, "/b"); n != 100 {
		t.Fatalf("%d /b entries, want 100", n)
	}
	got, indexed := queryIDs(t, e, "SELECT VALUE c.id FROM c WHERE c.a = 3")
	if indexed || !slices.Equal(got, want) {
		t.Fatalf("after excluding /a: index %v, rows %v", indexed, got)
	}
	res, err := e.QueryItems(context.Background(), QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c WHERE c.a = 3"), CrossPartition: true, RangeID: "0"})
	if err != nil || !strings.Contains(res.IndexMetrics, "PotentialSingleIndexes%22%3A%5B%7B") || !strings.Contains(res.IndexMetrics, "%2Fa%2F%3F") {
		t.Fatalf("index metrics do not suggest /a/?: %s (%v)", res.IndexMetrics, err)
	}

	// Back to the default: rebuilt, used again.
	replaceContainer(t, e, containerBodyWith(""))
	waitUntil(t, "rebuild with /a", func() bool { return indexReady(t, e, "c") })
	checkConsistent(t, e)
	got, indexed = queryIDs(t, e, "SELECT VALUE c.id FROM c WHERE c.a = 3")
	if !indexed || !slices.Equal(got, want) {
		t.Fatalf("after the rebuild: index %v, rows %v", indexed, got)
	}

	// A replace that keeps the policy (only TTL changes) rebuilds nothing.
	replaceContainer(t, e, containerBodyWith(`,"defaultTtl":-1`))
	if !indexReady(t, e, "c") {
		t.Fatal("an unchanged policy started a rebuild")
	}

	// indexingMode none drops everything at once.
	replaceContainer(t, e, `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"indexingMode":"none"}}`)
	if !indexReady(t, e, "c") || len(indexPaths(t, e, "c", true)) != 0 {
		t.Fatal("indexing none left entries or a rebuild")
	}
	got, indexed = queryIDs(t, e, "SELECT VALUE c.id FROM c WHERE c.a = 3")
	if indexed || !slices.Equal(got, want) {
		t.Fatalf("indexing none: index %v, rows %v", indexed, got)
	}
	checkConsistent(t, e)
}

// TestIndexRebuildWithWrites interleaves writes, replaces and deletes
// (before and after the cursor) with the rebuild's batches, and queries
// while it runs.
func TestIndexRebuildWithWrites(t *testing.T) {
	var e *Engine
	var batches atomic.Int32
	hook := func(c *container) bool {
		n := int(batches.Add(1))
		ctx := context.Background()
		ref := func(id string) ItemRef { return ItemRef{DB: "db", Coll: "c", ID: id, PK: `["p"]`, HasPK: true} }
		// Around the cursor: early ids are indexed already, late ones not.
		for _, id := range []int{n * 3, 99 - n*3, 200 + n} {
			body := fmt.Sprintf(`{"id":"%03d","pk":"p","a":%d,"b":%d}`, id, (id+n)%7, n)
			if _, err := e.WriteItem(ctx, ref(""), Upsert, []byte(body), ""); err != nil {
				t.Error(err)
			}
		}
		e.DeleteItem(ctx, ref(fmt.Sprintf("%03d", 50+n)), "")
		e.DeleteItem(ctx, ref(fmt.Sprintf("%03d", n*3+1)), "")
		// Mid-build the index is not used, and the rows are right.
		got, indexed := queryIDs(t, e, "SELECT VALUE c.id FROM c WHERE c.b = 1")
		if indexed {
			t.Error("a query used an index while it was building")
		}
		if err := e.CheckConsistency(ctx); err != nil {
			t.Error(err)
		}
		_ = got
		return true
	}
	e, _ = openEngine(t, memStore(t), Options{indexBatch: 8, indexHook: hook})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	loadItems(t, e, 100)
	replaceContainer(t, e, excludeA)
	waitUntil(t, "rebuild", func() bool { return indexReady(t, e, "c") })
	if batches.Load() < 5 {
		t.Fatalf("only %d batches", batches.Load())
	}
	checkConsistent(t, e)
	// Every query agrees with a scan.
	for _, q := range []string{"SELECT VALUE c.id FROM c WHERE c.b = 1", "SELECT VALUE c.id FROM c WHERE c.b > 2", "SELECT VALUE c.id FROM c WHERE c.a = 3"} {
		req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(q), MaxItemCount: 5, CrossPartition: true, RangeID: "0"}
		got, _ := drainQuery(t, e, req, false)
		want, _ := drainQuery(t, e, req, true)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s:\n index %v\n scan  %v", q, got, want)
		}
	}
}

// TestIndexRebuildResumes stops a rebuild part way, restarts the engine
// on the same store, and checks that the new engine finishes it.
func TestIndexRebuildResumes(t *testing.T) {
	store := memStore(t)
	var batches atomic.Int32
	e1, _ := openEngine(t, store, Options{indexBatch: 10, indexHook: func(*container) bool { return batches.Add(1) < 3 }})
	mustCreate(t, e1, "db", "c", containerBodyWith(""))
	loadItems(t, e1, 100)
	replaceContainer(t, e1, excludeA)
	waitUntil(t, "three batches", func() bool { return batches.Load() >= 3 })
	e1.Close()
	c, _ := e1.container("db", "c")
	var st index.State
	store.View(context.Background(), func(r storage.Reader) error {
		st, _, _ = index.ReadState(r, c.rid)
		return nil
	})
	if !st.Building() || st.Cursor() == nil {
		t.Fatalf("state after the interrupted rebuild: building %v, cursor %q", st.Building(), st.Cursor())
	}
	if err := e1.CheckConsistency(context.Background()); err != nil {
		t.Fatalf("mid-rebuild: %v", err)
	}

	e2, _ := openEngine(t, store, Options{})
	waitUntil(t, "the resumed rebuild", func() bool { return indexReady(t, e2, "c") })
	checkConsistent(t, e2)
	if n := countEntries(t, e2, "/b"); n != 100 {
		t.Fatalf("%d /b entries after the resumed rebuild, want 100", n)
	}
	if _, indexed := queryIDs(t, e2, "SELECT VALUE c.id FROM c WHERE c.b = 1"); !indexed {
		t.Fatal("no index use after the resumed rebuild")
	}
}

// TestIndexUpgrade opens a store written before Ebb had indexes (no
// index state, no entries) and checks that the index gets built.
func TestIndexUpgrade(t *testing.T) {
	store := memStore(t)
	e1, _ := openEngine(t, store, Options{})
	mustCreate(t, e1, "db", "c", containerBodyWith(""))
	loadItems(t, e1, 50)
	e1.Close()
	c, _ := e1.container("db", "c")
	err := store.Update(context.Background(), func(w storage.Writer) error {
		p := keyspace.IndexPrefix(c.rid)
		if err := w.DeleteRange(p, append(p[:len(p):len(p)], 0xff)); err != nil {
			return err
		}
		return w.Delete(keyspace.IndexStateKey(c.rid))
	})
	if err != nil {
		t.Fatal(err)
	}
	e2, _ := openEngine(t, store, Options{})
	waitUntil(t, "the upgrade's build", func() bool { return indexReady(t, e2, "c") })
	checkConsistent(t, e2)
	if n := countEntries(t, e2, "/a"); n != 50 {
		t.Fatalf("%d /a entries, want 50", n)
	}
}

// TestIndexStaleCatalog writes through a container snapshot taken before
// a policy change, as a request in flight during ReplaceContainer (or
// another node with an older catalog) does: the write must index under
// the stored policy, not its snapshot's.
func TestIndexStaleCatalog(t *testing.T) {
	e, _ := openEngine(t, memStore(t), Options{indexHook: func(*container) bool { return false }, indexBatch: 1})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	loadItems(t, e, 5)
	stale, _ := e.container("db", "c")
	replaceContainer(t, e, excludeA)
	ctx := context.Background()
	for i, body := range []string{`{"id":"001","pk":"p","a":9,"b":9}`, `{"id":"new","pk":"p","a":1,"b":1}`} {
		p, err := stale.prepare([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		err = e.updateItems(ctx, stale, 0, func(tx *itemTx) error {
			_, err := tx.write(Upsert, keyspace.DocKey(stale.rid, p.pkEnc, p.id), p, "")
			return err
		})
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	err := e.updateItems(ctx, stale, 0, func(tx *itemTx) error {
		_, err := tx.delete(keyspace.DocKey(stale.rid, document.PartitionKey{{Kind: document.PKString, Str: "p"}}.Encode(nil), "002"), document.PartitionKey{{Kind: document.PKString, Str: "p"}}.Encode(nil), "002", "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range indexPaths(t, e, "c", false) {
		if s == "/a" {
			t.Errorf("a write through a stale catalog indexed /a: %s", s)
		}
	}
	checkConsistent(t, e)
}

// TestIndexContinuationAfterPolicyChange: an index plan's continuation is
// refused once the policy it was issued under changed, as an invalid
// token in the service's words.
func TestIndexContinuationAfterPolicyChange(t *testing.T) {
	e, _ := openEngine(t, memStore(t), Options{})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	loadItems(t, e, 30)
	req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c WHERE c.a = 3"), MaxItemCount: 1, CrossPartition: true, RangeID: "0"}
	res, err := e.QueryItems(context.Background(), req)
	if err != nil || res.Continuation == "" {
		t.Fatalf("first page: continuation %q, %v", res.Continuation, err)
	}
	replaceContainer(t, e, excludeA)
	req.Continuation = res.Continuation
	_, err = e.QueryItems(context.Background(), req)
	if !IsKind(err, KindBadRequest) || !strings.HasPrefix(err.Error(), "Invalid Continuation Token") {
		t.Fatalf("next page after the policy change: %v, want 400 Invalid Continuation Token", err)
	}
}
