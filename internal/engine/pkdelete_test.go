package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// pkRig is an engine whose real clock is manual too, so the deleter's
// pacing can be stepped, over a store that outlives it (for restarts).
type pkRig struct {
	t     *testing.T
	ctx   context.Context
	store storage.Store
	clk   *clock.Manual
	real  *clock.Manual
	e     *Engine
}

func newPKRig(t *testing.T) *pkRig {
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	r := &pkRig{t: t, ctx: context.Background(), store: store,
		clk:  clock.NewManual(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)),
		real: clock.NewManual(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))}
	t.Cleanup(func() {
		r.e.Close()
		store.Close()
	})
	r.open()
	return r
}

func (r *pkRig) open() {
	if r.e != nil {
		r.e.Close()
	}
	e, err := Open(r.ctx, r.store, Options{Clock: r.clk, RealClock: r.real})
	if err != nil {
		r.t.Fatal(err)
	}
	r.e = e
}

func (r *pkRig) ref(pk string) ItemRef {
	return ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true}
}

func (r *pkRig) write(pk string, n int, from int) {
	r.t.Helper()
	for i := from; i < from+n; i++ {
		body := fmt.Sprintf(`{"id":"%s-%d","pk":%q,"kind":"k","n":%d}`, pk, i, pk, i)
		if _, err := r.e.WriteItem(r.ctx, r.ref(pk), Create, []byte(body), ""); err != nil {
			r.t.Fatal(err)
		}
	}
}

// visible returns the ids each read path shows, failing if they differ.
func (r *pkRig) visible() []string {
	t := r.t
	t.Helper()
	all := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: 7, CrossPartition: true, RangeID: "0"}
	paths := map[string][]string{}
	for name, q := range map[string]string{
		"scan":     "SELECT * FROM c",
		"filter":   "SELECT * FROM c WHERE c.kind = 'k'",
		"order by": "SELECT * FROM c ORDER BY c.n",
	} {
		req := all
		req.Body = queryBody(q)
		rows, _ := drainQuery(t, r.e, req, name == "scan")
		paths[name] = idsOfRows(t, rows)
	}
	res, err := r.e.ChangeFeed(r.ctx, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	paths["change feed"] = ids(t, res.Rows)
	var read []string
	for _, id := range paths["scan"] {
		pk := id[:strings.IndexByte(id, '-')]
		if _, err := r.e.ReadItem(r.ctx, ItemRef{DB: "db", Coll: "c", ID: id, PK: `["` + pk + `"]`, HasPK: true}, ""); err == nil {
			read = append(read, id)
		}
	}
	paths["point read"] = read
	want := paths["scan"]
	slices.Sort(want)
	for name, got := range paths {
		slices.Sort(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s shows %v; the scan shows %v", name, got, want)
		}
	}
	return want
}

func idsOfRows(t *testing.T, rows []string) []string {
	var out []string
	for _, row := range rows {
		var d struct{ ID string }
		if err := json.Unmarshal([]byte(row), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.ID)
	}
	return out
}

// TestDeletePartition: the items of the partition are invisible on every
// read path when the call returns, items written afterwards are not
// deleted, the deleter removes the rest (recording each delete in the
// all-versions feed) and drops the record.
func TestDeletePartition(t *testing.T) {
	r := newPKRig(t)
	mustCreate(t, r.e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"changeFeedPolicy":{"retentionDuration":60}}`)
	r.write("a", 3, 0)
	r.write("b", 2, 0)
	start, err := r.e.ChangeFeed(r.ctx, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Mode: AllVersionsAndDeletes, IfNoneMatch: "*"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.DeletePartition(r.ctx, r.ref("a")); err != nil {
		t.Fatal(err)
	}
	if got := r.visible(); strings.Join(got, ",") != "b-0,b-1" {
		t.Fatalf("after the delete: %v", got)
	}
	if _, err := r.e.ReadItem(r.ctx, ItemRef{DB: "db", Coll: "c", ID: "a-0", PK: `["a"]`, HasPK: true}, ""); !IsKind(err, KindNotFound) {
		t.Fatalf("point read of a deleted item: %v", err)
	}
	r.write("a", 1, 10) // after the delete: kept
	waitUntil(t, "the deleter", func() bool { return r.e.StoredItems() == 3 })
	if got := r.visible(); strings.Join(got, ",") != "a-10,b-0,b-1" {
		t.Fatalf("after the deleter: %v", got)
	}
	// The deleter pauses after its batch on the real clock; it may set
	// its timer only after a single advance, so each poll moves it on.
	waitUntil(t, "the record dropped", func() bool {
		r.real.Advance(100 * time.Millisecond)
		ds, err := r.e.PartitionDeletes(r.ctx, "db", "c")
		return err == nil && len(ds) == 0
	})
	res, err := r.e.ChangeFeed(r.ctx, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Mode: AllVersionsAndDeletes, IfNoneMatch: start.ETag, MaxItemCount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	deletes := 0
	for _, row := range res.Rows {
		if strings.Contains(string(row), `"operationType":"delete"`) {
			deletes++
		}
	}
	if deletes != 3 || len(res.Rows) != 4 {
		t.Fatalf("the all-versions feed has %d deletes in %d changes, want the 3 deletes and the create:\n%s", deletes, len(res.Rows), res.Rows)
	}
	checkConsistent(t, r.e)
}

// TestDeletePartitionPacedAndResumed: on a 400 RU/s container the deleter
// spends a tenth of the offer, so it waits on the real clock between
// batches; an engine restarted mid-way resumes from the stored record.
func TestDeletePartitionPacedAndResumed(t *testing.T) {
	r := newPKRig(t)
	mustCreate(t, r.e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
	r.write("a", 250, 0)
	if _, err := r.e.DeletePartition(r.ctx, r.ref("a")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the first batch", func() bool { return r.e.StoredItems() == 250-pkDeleteBatch })
	// 100 small items cost 571 RU; at 40 RU/s that is about 14 s.
	r.real.Advance(10 * time.Second)
	if n := r.e.StoredItems(); n != 250-pkDeleteBatch {
		t.Fatalf("%d items stored 10 s after the first batch, want %d: the deleter spends at most a tenth of the offer", n, 250-pkDeleteBatch)
	}
	r.open() // a restart mid-way
	if got := r.visible(); len(got) != 0 {
		t.Fatalf("after a restart the deleted partition shows %v", got)
	}
	waitUntil(t, "the resumed deleter's first batch", func() bool { return r.e.StoredItems() == 250-2*pkDeleteBatch })
	waitUntil(t, "the rest", func() bool {
		r.real.Advance(time.Second) // the pause's timer may be set after any one advance
		return r.e.StoredItems() == 0
	})
	checkConsistent(t, r.e)
}
