package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

// readUsage reads container c's usage as a container read with
// x-ms-documentdb-populatequotainfo does.
func readUsage(t testing.TB, e *Engine, coll string) Usage {
	t.Helper()
	res, err := e.ReadContainer(context.Background(), "db", coll, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage == nil {
		t.Fatal("a container read with quota info has no usage")
	}
	return *res.Usage
}

// stored tracks what a test has stored: each item's document size.
type stored map[string]int

func (s stored) want(t testing.TB, e *Engine, what string) {
	t.Helper()
	var bytes int64
	for _, n := range s {
		bytes += int64(n)
	}
	u := readUsage(t, e, "c")
	if !u.Known || u.Items != int64(len(s)) || u.Bytes != bytes {
		t.Fatalf("%s: usage %+v, want %d items of %d bytes", what, u, len(s), bytes)
	}
	checkConsistent(t, e)
}

// TestUsage follows a container's item count and document bytes through
// creates, replaces that grow and shrink a document, patches, deletes and
// a batch.
func TestUsage(t *testing.T) {
	e, _ := openEngine(t, memStore(t), Options{})
	ctx := context.Background()
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	s := stored{}
	s.want(t, e, "empty")
	ref := func(id string) ItemRef { return ItemRef{DB: "db", Coll: "c", ID: id, PK: `["p"]`, HasPK: true} }
	put := func(kind WriteKind, id, extra string) {
		t.Helper()
		res, err := e.WriteItem(ctx, ref(id), kind, []byte(`{"id":"`+id+`","pk":"p"`+extra+`}`), "")
		if err != nil {
			t.Fatal(err)
		}
		s[id] = len(res.Body)
	}
	for i := range 5 {
		put(Create, fmt.Sprint(i), "")
	}
	s.want(t, e, "five creates")
	put(Replace, "1", `,"pad":"`+strings.Repeat("x", 500)+`"`)
	put(Upsert, "2", `,"pad":"y"`)
	s.want(t, e, "a replace and an upsert")
	put(Replace, "1", "")
	s.want(t, e, "a replace that shrinks")
	res, err := e.PatchItem(ctx, ref("3"), []byte(`[{"op":"add","path":"/n","value":12345}]`), "")
	if err != nil {
		t.Fatal(err)
	}
	s["3"] = len(res.Body)
	s.want(t, e, "a patch")
	if _, err := e.DeleteItem(ctx, ref("0"), ""); err != nil {
		t.Fatal(err)
	}
	delete(s, "0")
	s.want(t, e, "a delete")
	batch := `[{"operationType":"Create","resourceBody":{"id":"b1","pk":"p"}},{"operationType":"Delete","id":"4"}]`
	br, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}, []byte(batch), BatchOptions{Atomic: true})
	if err != nil || br.Ops[0].Err != nil || br.Ops[1].Err != nil {
		t.Fatalf("batch: %+v, %v", br, err)
	}
	delete(s, "4")
	got, err := e.ReadItem(ctx, ref("b1"), "")
	if err != nil {
		t.Fatal(err)
	}
	s["b1"] = len(got.Body)
	s.want(t, e, "a batch")
	if u := readUsage(t, e, "c"); u.IndexProgress != 100 {
		t.Fatalf("index progress %d with the index up to date", u.IndexProgress)
	}
}

// TestUsageLegacyState opens a container whose state predates the usage
// counters (24 bytes): its usage is unknown until the one-time count
// passes the last item, writes before and after the count's cursor keep
// the counters right meanwhile, and a restart resumes the count.
func TestUsageLegacyState(t *testing.T) {
	store := memStore(t)
	// The builder does not count here: the test counts batch by batch.
	e, _ := openEngine(t, store, Options{countGate: func(*container) bool { return false }})
	ctx := context.Background()
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	for i := range 30 {
		write(t, e, "c", fmt.Sprintf(`{"id":"%02d","pk":"p"}`, i))
	}
	c, err := e.container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	err = store.Update(ctx, func(w storage.Writer) error {
		st, err := readPartitionState(w, c.rid, 0)
		if err != nil {
			return err
		}
		return w.Set(keyspace.CollMetaKey(c.rid), st.encode()[:legacyStateLen])
	})
	if err != nil {
		t.Fatal(err)
	}
	if u := readUsage(t, e, "c"); u.Known {
		t.Fatalf("usage of a legacy state: %+v, want unknown", u)
	}
	checkConsistent(t, e)
	write(t, e, "c", `{"id":"05","pk":"p","pad":"grown"}`) // before any cursor: left to the count
	checkConsistent(t, e)

	more, err := e.countBatch(ctx, c, 10) // counts 00-09
	if err != nil || !more {
		t.Fatalf("first batch: more %v, %v", more, err)
	}
	write(t, e, "c", `{"id":"03","pk":"p","pad":"behind the cursor"}`)
	write(t, e, "c", `{"id":"20","pk":"p","pad":"ahead of it"}`)
	write(t, e, "c", `{"id":"00a","pk":"p"}`) // a new item behind it
	if _, err := e.DeleteItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "07", PK: `["p"]`, HasPK: true}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DeleteItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "25", PK: `["p"]`, HasPK: true}, ""); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, e)
	if u := readUsage(t, e, "c"); u.Known {
		t.Fatalf("usage mid-count: %+v, want unknown", u)
	}

	// A restart resumes the count from its cursor and finishes it.
	e.Close()
	e2, _ := openEngine(t, store, Options{})
	waitUntil(t, "the count", func() bool { return readUsage(t, e2, "c").Known })
	u := readUsage(t, e2, "c")
	if u.Items != 29 {
		t.Fatalf("usage after the count: %+v, want 29 items", u)
	}
	checkConsistent(t, e2)
}

// TestIndexProgress reads a rebuild's progress from the container:
// the share of the items the builder has indexed, 100 when done.
func TestIndexProgress(t *testing.T) {
	// The hook holds the builder after its first batch until the test has
	// read the progress.
	batches := make(chan struct{}, 64)
	resume := make(chan struct{})
	e, _ := openEngine(t, memStore(t), Options{indexBatch: 16, indexHook: func(*container) bool {
		batches <- struct{}{}
		<-resume
		return true
	}})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	loadItems(t, e, 100)
	replaceContainer(t, e, excludeA)
	<-batches
	u := readUsage(t, e, "c")
	close(resume)
	if u.IndexProgress != 16 {
		t.Fatalf("progress after one batch of 16 of 100 items: %d", u.IndexProgress)
	}
	waitUntil(t, "the rebuild", func() bool { return indexReady(t, e, "c") })
	if u := readUsage(t, e, "c"); u.IndexProgress != 100 {
		t.Fatalf("progress after the rebuild: %d", u.IndexProgress)
	}
}

func TestRebuildProgress(t *testing.T) {
	for _, tc := range []struct {
		indexed uint64
		u       Usage
		want    int
	}{
		{0, Usage{Items: 10, Known: true}, 0},
		{5, Usage{Items: 10, Known: true}, 50},
		{10, Usage{Items: 10, Known: true}, 99}, // done only when the state says so
		{12, Usage{Items: 10, Known: true}, 99}, // items written behind the cursor meanwhile
		{5, Usage{Items: 0, Known: true}, 0},
		{5, Usage{Items: 10}, 0}, // the item count is unknown
	} {
		if got := rebuildProgress(tc.indexed, tc.u); got != tc.want {
			t.Errorf("rebuildProgress(%d, %+v) = %d, want %d", tc.indexed, tc.u, got, tc.want)
		}
	}
}

func TestCollStateEncoding(t *testing.T) {
	for _, st := range []collState{
		{lsn: 7, lastTs: 100, seq: 3, items: 2, bytes: 90},
		{lsn: 7, lastTs: 100, seq: 3, items: 2, bytes: 90, counting: true},
		{lsn: 7, lastTs: 100, seq: 3, items: 2, bytes: 90, counting: true, cursor: []byte{6, 'a', 0, 1}},
	} {
		got, err := decodeCollState(st.encode())
		if err != nil || !got.equal(st) {
			t.Errorf("round trip of %+v: %+v, %v", st, got, err)
		}
	}
	legacy := collState{lsn: 7, lastTs: 100, seq: 3}.encode()[:legacyStateLen]
	if st, err := decodeCollState(legacy); err != nil || !st.counting || st.cursor != nil || st.lsn != 7 || st.lastTs != 100 || st.seq != 3 {
		t.Errorf("legacy state read as %+v, %v; want counting from the start", st, err)
	}
	full := collState{counting: true, cursor: []byte("k")}.encode()
	for _, bad := range [][]byte{nil, make([]byte, 23), make([]byte, 30), append(full[:stateLen:stateLen], 2, 'k')} {
		if _, err := decodeCollState(bad); err == nil {
			t.Errorf("decodeCollState(%d bytes) succeeded", len(bad))
		}
	}
}

// TestCheckConsistencyUsage: the check notices counters that disagree
// with the stored items.
func TestCheckConsistencyUsage(t *testing.T) {
	e, _ := openEngine(t, memStore(t), Options{})
	ctx := context.Background()
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	write(t, e, "c", `{"id":"a","pk":"p"}`)
	c, _ := e.container("db", "c")
	err := e.store.Update(ctx, func(w storage.Writer) error {
		st, err := readPartitionState(w, c.rid, 0)
		if err != nil {
			return err
		}
		st.items++
		return w.Set(keyspace.CollMetaKey(c.rid), st.encode())
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CheckConsistency(ctx); err == nil || !strings.Contains(err.Error(), "partition 0's state counts 2 items") {
		t.Fatalf("CheckConsistency: %v, want the counters reported", err)
	}
}
