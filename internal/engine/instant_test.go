package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// TestOneInstantEveryReadPath steps the wall clock back and then forward
// (within the grace period) and checks that each read path shows exactly
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

func testOneInstant(t *testing.T, disablePurger bool) {
	ctx := context.Background()
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 22, 6, 0, 0, 500_000_000, time.UTC)
	clk := clock.NewManual(t0)
	e, err := Open(ctx, store, Options{Clock: clk, DisablePurger: disablePurger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); store.Close() })
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1}`)

	// The model: each item's _ts and ttl (0: none, so never under -1).
	type item struct {
		pk  string
		ts  int64
		ttl int64
	}
	model := map[string]*item{}
	put := func(id, pk string, ttl int64, n int) {
		t.Helper()
		body := fmt.Sprintf(`{"id":%q,"pk":%q,"kind":"k","n":%d`, id, pk, n)
		if ttl != 0 {
			body += fmt.Sprintf(`,"ttl":%d`, ttl)
		}
		res, err := e.WriteItem(ctx, ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true}, Upsert, []byte(body+"}"), "")
		if err != nil {
			t.Fatal(err)
		}
		model[id] = &item{pk: pk, ts: docTs(t, res.Body), ttl: ttl}
	}
	put("a", "p1", 10, 1)
	put("b", "p2", 20, 2)
	put("forever", "p1", -1, 3)
	put("inherits", "p2", 0, 4)
	put("patched", "p1", 100_000, 5)

	// nowQuery is GetCurrentTimestamp() of a query, in whole seconds.
	nowQuery := func() int64 {
		t.Helper()
		res, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT VALUE GetCurrentTimestamp()"), CrossPartition: true})
		if err != nil || len(res.Rows) != 1 {
			t.Fatalf("GetCurrentTimestamp(): %v %q", err, res.Rows)
		}
		var ms int64
		if err := json.Unmarshal(res.Rows[0], &ms); err != nil {
			t.Fatal(err)
		}
		return ms / 1000
	}
	want := func(now int64) []string {
		var ids []string
		for id, it := range model {
			if it.ttl <= 0 || it.ts+it.ttl > now {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}

	check := func(step string) {
		t.Helper()
		now := nowQuery()
		expect := want(now)
		same := func(path string, got []string) {
			t.Helper()
			slices.Sort(got)
			if !slices.Equal(got, expect) {
				t.Errorf("%s: %s shows %v; at GetCurrentTimestamp() %d the visible items are %v", step, path, got, now, expect)
			}
		}

		var got []string
		for id, it := range model {
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
		all := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: 2, CrossPartition: true}
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
			got = append(got, ids(t, res.Rows)...)
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
		for id, it := range model {
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
		patch := `{"operations":[{"op":"incr","path":"/n","value":1}],"condition":"from c where c._ts <= GetCurrentTimestamp() / 1000"}`
		pr, err := e.PatchItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "patched", PK: `["p1"]`, HasPK: true}, []byte(patch), "")
		if err != nil {
			t.Fatalf("%s: patch with a _ts condition: %v", step, err)
		}
		if ts := docTs(t, pr.Body); ts != now {
			t.Errorf("%s: the patch wrote _ts %d; the instant is %d", step, ts, now)
		}
		model["patched"].ts = now
	}

	clk.Advance(9 * time.Second) // a expires at +10
	check("before expiry")

	clk.StepWall(-time.Hour)
	// The time guard notices a step only when the purge instant is read.
	// The purger reads it when it wakes, which may be only after the
	// restore below: it would then see no step at all and purge a by the
	// monotonic clock. Read it here, so the restore is always a jump.
	e.guard.PurgeNow()
	check("wall clock an hour back")
	clk.Advance(time.Second) // the wall clock is still behind
	check("still behind")
	put("e", "p2", 5, 6)
	if got, want := model["e"].ts, t0.Unix()+9; got != want {
		t.Errorf("a write while the wall clock is behind got _ts %d, want the high-water mark %d", got, want)
	}

	clk.StepWall(time.Hour) // back on time: a has expired
	check("wall clock restored")

	clk.StepWall(2 * time.Minute) // ahead, within the grace
	check("wall clock two minutes ahead")
	if n := e.StoredItems(); n != len(model) {
		t.Errorf("%d items stored, want all %d: nothing is purged while the wall clock is back or ahead within the grace", n, len(model))
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
