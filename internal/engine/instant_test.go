package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// TestOneInstantEveryReadPath steps the wall clock back, restores it, and
// then moves it forward (within the grace period) and checks that each read path shows exactly
// the items that the query environment's GetCurrentTimestamp() says are
// unexpired, and that a write's _ts is that same instant: visibility,
// _ts and the query clock are one instant per operation. It runs with
// the purger off (expired items stay stored, so only visibility hides
// them) and on (purges race the reads).
func TestOneInstantEveryReadPath(t *testing.T) {
	for _, purger := range []bool{false, true} {
		t.Run(fmt.Sprintf("purger=%v", purger), func(t *testing.T) { testOneInstant(t, !purger) })
	}
}

// instantRig is an engine on a manual clock over a store that outlives
// it (so tests can restart), with a model of the items it wrote: each
// one's partition key, _ts and ttl. Its check compares every read path
// with the model at the instant a query reports.
type instantRig struct {
	t     *testing.T
	ctx   context.Context
	store storage.Store
	clk   *clock.Manual
	opts  Options
	e     *Engine
	model map[string]*wroteItem
}

// wroteItem is what the rig wrote: ttl 0 means none (so never, as the
// container's default is -1).
type wroteItem struct {
	pk  string
	ts  int64
	ttl int64
}

func newInstantRig(t *testing.T, t0 time.Time, opts Options) *instantRig {
	t.Helper()
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	r := &instantRig{t: t, ctx: context.Background(), store: store, clk: clock.NewManual(t0), model: map[string]*wroteItem{}}
	t.Cleanup(func() {
		r.e.Close()
		store.Close()
	})
	r.restart(opts)
	mustCreate(t, r.e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1}`)
	return r
}

// restart closes the engine and opens another on the same store and
// clock with opts.
func (r *instantRig) restart(opts Options) {
	r.t.Helper()
	if r.e != nil {
		r.e.Close()
	}
	opts.Clock = r.clk
	e, err := Open(r.ctx, r.store, opts)
	if err != nil {
		r.t.Fatal(err)
	}
	r.e, r.opts = e, opts
}

// put upserts item id with ttl (0: none) and records it.
func (r *instantRig) put(id, pk string, ttl int64, n int) {
	r.t.Helper()
	body := fmt.Sprintf(`{"id":%q,"pk":%q,"kind":"k","n":%d`, id, pk, n)
	if ttl != 0 {
		body += fmt.Sprintf(`,"ttl":%d`, ttl)
	}
	res, err := r.e.WriteItem(r.ctx, ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true}, Upsert, []byte(body+"}"), "")
	if err != nil {
		r.t.Fatal(err)
	}
	r.model[id] = &wroteItem{pk: pk, ts: docTs(r.t, res.Body), ttl: ttl}
}

// nowQuery is GetCurrentTimestamp() of a query, in whole seconds.
func (r *instantRig) nowQuery() int64 {
	r.t.Helper()
	res, err := r.e.QueryItems(r.ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT VALUE GetCurrentTimestamp()"), CrossPartition: true, RangeID: "0"})
	if err != nil || len(res.Rows()) != 1 {
		r.t.Fatalf("GetCurrentTimestamp(): %v %q", err, res.Rows())
	}
	var ms int64
	if err := json.Unmarshal(res.Rows()[0], &ms); err != nil {
		r.t.Fatal(err)
	}
	return ms / 1000
}

// want is the model's visible items at now.
func (r *instantRig) want(now int64) []string {
	var ids []string
	for id, it := range r.model {
		if it.ttl <= 0 || it.ts+it.ttl > now {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// check compares every read path with the model at the instant a query
// reports, and checks that a patch writes that instant as _ts. It returns
// the instant. The patched item, if the model has it visible, is the one
// patched.
func (r *instantRig) check(step string) int64 {
	t, e, ctx := r.t, r.e, r.ctx
	t.Helper()
	now := r.nowQuery()
	expect := r.want(now)
	same := func(path string, got []string) {
		t.Helper()
		slices.Sort(got)
		if !slices.Equal(got, expect) {
			t.Errorf("%s: %s shows %v; at GetCurrentTimestamp() %d the visible items are %v", step, path, got, now, expect)
		}
	}

	var got []string
	for id, it := range r.model {
		if _, err := e.ReadItem(ctx, ItemRef{DB: "db", Coll: "c", ID: id, PK: `["` + it.pk + `"]`, HasPK: true}, ""); err == nil {
			got = append(got, id)
		} else if !IsKind(err, KindNotFound) {
			t.Fatal(err)
		}
	}
	same("point read", got)

	// Each row carries the query's own clock: an item it shows must
	// be unexpired by it.
	const sel = "SELECT c.id, c._ts, c.ttl, GetCurrentTimestamp() AS now FROM c"
	rowIDs := func(path string, rows []string) []string {
		t.Helper()
		var ids []string
		for _, r := range rows {
			var row struct {
				ID  string `json:"id"`
				Ts  int64  `json:"_ts"`
				TTL int64  `json:"ttl"`
				Now int64  `json:"now"`
			}
			if err := json.Unmarshal([]byte(r), &row); err != nil {
				t.Fatal(err)
			}
			if row.Now/1000 != now {
				t.Errorf("%s: %s evaluated GetCurrentTimestamp() at %d, another query at %d", step, path, row.Now/1000, now)
			}
			if row.TTL > 0 && row.Ts+row.TTL <= row.Now/1000 {
				t.Errorf("%s: %s shows %s (_ts %d + ttl %d) although its own GetCurrentTimestamp() is %d", step, path, row.ID, row.Ts, row.TTL, row.Now)
			}
			ids = append(ids, row.ID)
		}
		return ids
	}
	all := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: 2, CrossPartition: true, RangeID: "0"}
	scanReq := all
	scanReq.Body = queryBody(sel)
	rows, _ := drainQuery(t, e, scanReq, true)
	same("query scan", rowIDs("query scan", rows))

	filterReq := all
	filterReq.Body = queryBody(sel + " WHERE c.kind = 'k'")
	rows, indexed := drainQuery(t, e, filterReq, false)
	if !indexed {
		t.Fatalf("%s: the filter was not served by the index", step)
	}
	same("filter index", rowIDs("filter index", rows))

	orderReq := all
	orderReq.Body = queryBody(sel + " ORDER BY c.n")
	if !orderedPlan(t, e, orderReq) {
		t.Fatalf("%s: the ORDER BY was not served by the index", step)
	}
	rows, _ = drainQuery(t, e, orderReq, false)
	same("ORDER BY index", rowIDs("ORDER BY index", rows))

	got = nil
	feed := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: 2}
	for {
		res, err := e.ReadFeed(ctx, feed)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(t, res.Rows())...)
		if feed.Continuation = res.Continuation; feed.Continuation == "" {
			break
		}
	}
	same("read feed", got)

	res, err := e.ChangeFeed(ctx, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: 100})
	if err != nil {
		t.Fatal(err)
	}
	same("latest-version change feed", ids(t, res.Rows))

	got = nil
	for id, it := range r.model {
		body := fmt.Sprintf(`[{"operationType":"Read","id":%q}]`, id)
		br, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: "c", PK: `["` + it.pk + `"]`, HasPK: true}, []byte(body), BatchOptions{Atomic: true})
		switch {
		case err != nil:
			t.Fatal(err)
		case br.Ops[0].Err == nil:
			got = append(got, id)
		case !IsKind(br.Ops[0].Err, KindNotFound):
			t.Fatal(br.Ops[0].Err)
		}
	}
	same("batch read", got)

	// A patch's condition runs on the same clock as its TTL check
	// and the _ts it writes: an item never comes from the future.
	if !slices.Contains(expect, "patched") {
		return now
	}
	patch := `{"operations":[{"op":"incr","path":"/n","value":1}],"condition":"from c where c._ts <= GetCurrentTimestamp() / 1000"}`
	pr, err := e.PatchItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "patched", PK: `["` + r.model["patched"].pk + `"]`, HasPK: true}, []byte(patch), "")
	if err != nil {
		t.Fatalf("%s: patch with a _ts condition: %v", step, err)
	}
	if ts := docTs(t, pr.Body); ts != now {
		t.Errorf("%s: the patch wrote _ts %d; the instant is %d", step, ts, now)
	}
	r.model["patched"].ts = now
	return now
}

func testOneInstant(t *testing.T, disablePurger bool) {
	t0 := time.Date(2026, 11, 22, 6, 0, 0, 500_000_000, time.UTC)
	r := newInstantRig(t, t0, Options{DisablePurger: disablePurger})
	clk := r.clk
	r.put("a", "p1", 10, 1)
	r.put("b", "p2", 20, 2)
	r.put("forever", "p1", -1, 3)
	r.put("inherits", "p2", 0, 4)
	r.put("patched", "p1", 100_000, 5)
	clk.Advance(9 * time.Second) // a expires at +10
	r.check("before expiry")

	clk.StepWall(-time.Hour)
	r.check("wall clock an hour back")
	clk.Advance(time.Second) // the wall clock is still behind
	r.check("still behind")
	r.put("e", "p2", 5, 6)
	if got, want := r.model["e"].ts, t0.Unix()+9; got != want {
		t.Errorf("a write while the wall clock is behind got _ts %d, want the high-water mark %d", got, want)
	}

	clk.StepWall(time.Hour) // back on time: a has expired
	r.check("wall clock restored")

	clk.StepWall(2 * time.Minute) // ahead, within the grace: not believed
	r.check("wall clock two minutes ahead")
	if got, want := r.nowQuery(), t0.Unix()+10; got != want {
		t.Errorf("two minutes ahead within the grace, the instant is %d, want %d: a jump is believed only after the grace", got, want)
	}
	if _, err := r.e.ReadItem(r.ctx, ItemRef{DB: "db", Coll: "c", ID: "b", PK: `["p2"]`, HasPK: true}, ""); err != nil {
		t.Errorf("b (expiring at +20) is hidden while the wall clock is two minutes ahead within the grace: %v", err)
	}
}

// docTs returns a document's _ts.
func docTs(t testing.TB, doc []byte) int64 {
	t.Helper()
	var d struct {
		Ts int64 `json:"_ts"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	return d.Ts
}

// ids returns the ids of documents.
func ids(t testing.TB, docs [][]byte) []string {
	t.Helper()
	var out []string
	for _, doc := range docs {
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.ID)
	}
	return out
}
