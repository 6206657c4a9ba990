package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
	"github.com/ebbdb/ebb/internal/storage/postgres"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
)

// The model test drives the engine with random writes, deletes, patches,
// container TTL changes and clock moves, and compares every read path
// with a reference model written from the TTL contract alone, after every
// operation. EBB_MODEL_OPS sets the number of operations (default 3,000
// per mode), and EBB_MODEL_SEED, added to each test's seed, explores
// other sequences.

type modelItem struct {
	ts  int64
	ttl int64 // 0 absent, -1 never, n seconds
}

type model struct {
	items map[string]modelItem // by "pk/id"
	def   int64                // 0 off, -1 on without default, n
	now   int64                // the highest instant served
}

// expired is the contract's rule, written out independently of package
// ttl: an item expires at _ts + its own ttl if positive, else at _ts +
// the default if positive, and only while the container's TTL is on.
func (m *model) expired(it modelItem) bool {
	if m.def == 0 || it.ttl == -1 {
		return false
	}
	life := it.ttl
	if life == 0 {
		life = m.def
	}
	return life > 0 && it.ts+life <= m.now
}

func (m *model) visible() []string {
	var out []string
	for k, it := range m.items {
		if !m.expired(it) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func modelOps() int {
	if n, err := strconv.Atoi(os.Getenv("EBB_MODEL_OPS")); err == nil && n > 0 {
		return n
	}
	return 3000
}

// TestModelVisibility runs without the purger, so that turning TTL off
// (which shows expired, unpurged items again) is deterministic, and
// includes backward wall-clock steps.
func TestModelVisibility(t *testing.T) { runModel(t, false, 1, 1) }

// TestModelWithPurger runs with the purger and never turns TTL off or
// lengthens the default (either could show an expired item again only if
// it was not purged yet); after each clock move it waits for the purge
// and checks that storage holds exactly the visible items.
func TestModelWithPurger(t *testing.T) { runModel(t, true, 2, 1) }

// TestModelPartitions is TestModelWithPurger on a container of two
// physical partitions that splits at random until it has eight: every
// read path, by range included, keeps to the model across the splits.
func TestModelPartitions(t *testing.T) { runModel(t, true, 3, 2) }

// TestModelPartitionsPostgres is TestModelPartitions on PostgreSQL, as a
// node of a cluster (its writes behind the partitions' row locks, its
// purge behind per-partition leases), for a fifth of the operations. It
// needs EBB_TEST_POSTGRES_URL.
func TestModelPartitionsPostgres(t *testing.T) {
	url := pgtest.FreshSchema(t)
	store, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runModelOn(t, strictStore(store), Options{Shared: true, NodeID: "model"}, true, 4, 2, max(modelOps()/5, 1))
}

// runModel drives a container of parts physical partitions in memory;
// with more than one, it also splits a random range now and then.
func runModel(t *testing.T, purge bool, seed uint64, parts int) {
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	runModelOn(t, strictStore(store), Options{}, purge, seed, parts, modelOps())
}

// runModelOn is runModel on store, for ops operations, with the engine
// options opts besides the clock and the purger.
func runModelOn(t *testing.T, store storage.Store, opts Options, purge bool, seed uint64, parts, ops int) {
	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	clk := clock.NewManual(start)
	opts.Clock, opts.DisablePurger = clk, !purge
	e, err := Open(context.Background(), store, opts)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	defer func() { e.Close(); store.Close() }()
	ctx := context.Background()
	// A large offer: the purger respects throughput, and this test is
	// about what it purges, not how fast.
	if _, err := e.CreateDatabase(ctx, []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer(ctx, "db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":10}`), ThroughputHeaders{Offer: "1000000", Partitions: strconv.Itoa(parts)}); err != nil {
		t.Fatal(err)
	}
	m := &model{items: map[string]modelItem{}, def: 10, now: start.Unix()}
	extra, _ := strconv.ParseUint(os.Getenv("EBB_MODEL_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed+extra, 42))
	pks := []string{"a", "b", "c"}
	ttls := []int64{0, 0, -1, 1, 2, 5, 30}

	for op := 0; op < ops; op++ {
		pk, id := pks[rng.IntN(len(pks))], strconv.Itoa(rng.IntN(12))
		key := pk + "/" + id
		ref := ItemRef{DB: "db", Coll: "c", ID: id, PK: `["` + pk + `"]`, HasPK: true}
		it, stored := m.items[key]
		exists := stored && !m.expired(it)
		ttl := ttls[rng.IntN(len(ttls))]
		body := fmt.Sprintf(`{"id":%q,"pk":%q`, id, pk)
		if ttl != 0 {
			body += fmt.Sprintf(`,"ttl":%d`, ttl)
		}
		body += "}"
		var what string
		var err error
		switch r := rng.IntN(100); {
		case r < 25:
			what = "create"
			_, err = e.WriteItem(ctx, ref, Create, []byte(body), "")
			if exists != (err != nil) {
				t.Fatalf("op %d create %s: err %v, model exists %v", op, key, err, exists)
			}
			if !exists {
				m.items[key] = modelItem{ts: m.now, ttl: ttl}
			}
		case r < 45:
			what = "upsert"
			if _, err = e.WriteItem(ctx, ref, Upsert, []byte(body), ""); err != nil {
				t.Fatalf("op %d upsert %s: %v", op, key, err)
			}
			m.items[key] = modelItem{ts: m.now, ttl: ttl}
		case r < 55:
			what = "replace"
			_, err = e.WriteItem(ctx, ref, Replace, []byte(body), "")
			if exists != (err == nil) {
				t.Fatalf("op %d replace %s: err %v, model exists %v", op, key, err, exists)
			}
			if exists {
				m.items[key] = modelItem{ts: m.now, ttl: ttl}
			}
		case r < 62:
			what = "patch ttl"
			patch := fmt.Sprintf(`[{"op":"set","path":"/ttl","value":%d}]`, max(ttl, 1))
			_, err = e.PatchItem(ctx, ref, []byte(patch), "")
			if exists != (err == nil) {
				t.Fatalf("op %d patch %s: err %v, model exists %v", op, key, err, exists)
			}
			if exists {
				m.items[key] = modelItem{ts: m.now, ttl: max(ttl, 1)}
			}
		case r < 72:
			what = "delete"
			_, err = e.DeleteItem(ctx, ref, "")
			if exists != (err == nil) {
				t.Fatalf("op %d delete %s: err %v, model exists %v", op, key, err, exists)
			}
			if exists {
				delete(m.items, key)
			}
		case r < 88 && parts > 1 && rng.IntN(10) == 0:
			ranges := rangeIDs(t, e, "c")
			if len(ranges) >= 8 {
				continue
			}
			what = "split"
			if _, err := e.SplitPartition(ctx, "db", "c", ranges[rng.IntN(len(ranges))]); err != nil {
				t.Fatalf("op %d split: %v", op, err)
			}
		case r < 90:
			what = "advance"
			d := time.Duration(rng.IntN(4000)) * time.Millisecond
			clk.Advance(d)
			m.now = max(m.now, clk.Now().Unix())
		case r < 94 && !purge:
			what = "step back"
			clk.StepWall(-time.Duration(rng.IntN(20)) * time.Second)
		default:
			what = "default"
			choices := []int64{-1, 5, 10, 20}
			if !purge {
				choices = append(choices, 0)
			}
			def := choices[rng.IntN(len(choices))]
			// Never lengthen with the purger on: -1 after a positive
			// default is the longest of all. A shortened default expires
			// items at once, and they may not be purged yet.
			if purge && m.def > 0 && (def < 0 || def > m.def) {
				def = m.def
			}
			body := `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}`
			if def != 0 {
				body += fmt.Sprintf(`,"defaultTtl":%d`, def)
			}
			if _, err := e.ReplaceContainer(ctx, "db", "c", []byte(body+"}"), ""); err != nil {
				t.Fatalf("op %d default %d: %v", op, def, err)
			}
			m.def = def
		}
		// Lazy deletion from the model of what can never come back keeps
		// the purger mode comparable with storage.
		if purge {
			for k, it := range m.items {
				if m.expired(it) {
					delete(m.items, k)
				}
			}
		}
		compareModel(t, e, m, op, what)
		if purge && what == "advance" {
			waitUntil(t, fmt.Sprintf("op %d: purge to storage = visible set\n%s\nmodel %v", op, dumpState(e), m.visible()), func() bool {
				return e.StoredItems() == len(m.visible())
			})
		}
	}
	if err := e.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rangeIDs(t, e, "c")); parts > 1 && n <= parts {
		t.Fatalf("%d ranges at the end: the test split none", n)
	}
}

// compareModel checks point reads of every key and, every few operations,
// the read feed, a cross-partition query and COUNT against the model.
func compareModel(t *testing.T, e *Engine, m *model, op int, what string) {
	t.Helper()
	ctx := context.Background()
	want := m.visible()
	for _, pk := range []string{"a", "b", "c"} {
		for i := 0; i < 12; i++ {
			id := strconv.Itoa(i)
			key := pk + "/" + id
			it, stored := m.items[key]
			wantVisible := stored && !m.expired(it)
			_, err := e.ReadItem(ctx, ItemRef{DB: "db", Coll: "c", ID: id, PK: `["` + pk + `"]`, HasPK: true}, "")
			if wantVisible != (err == nil) {
				t.Fatalf("after op %d (%s): read %s: err %v, model visible %v (item %+v, default %d, now %d)", op, what, key, err, wantVisible, it, m.def, m.now)
			}
		}
	}
	if op%7 != 0 {
		return
	}
	feed, err := e.ReadFeed(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got := rowKeys(t, feed.Rows()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after op %d (%s): read feed %v, model %v", op, what, got, want)
	}
	// Each range's COUNT and change feed (from the beginning, its
	// ancestors' logs included) add up to the model.
	body := []byte(`{"query":"SELECT VALUE COUNT(1) FROM c WHERE c.id != 'x'"}`)
	count := 0
	var fed []string
	for _, rangeID := range rangeIDs(t, e, "c") {
		res, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: body, CrossPartition: true, RangeID: rangeID})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows()) != 1 {
			t.Fatalf("after op %d (%s): COUNT of range %s: %s", op, what, rangeID, res.Rows())
		}
		n, _ := strconv.Atoi(string(res.Rows()[0]))
		count += n
		rows, _ := drainFeed(t, e, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}, RangeID: rangeID, MaxItemCount: 50}, nil)
		fed = append(fed, rowKeys(t, rows)...)
	}
	if count != len(want) {
		t.Fatalf("after op %d (%s): COUNT over the ranges %d, model %d", op, what, count, len(want))
	}
	sort.Strings(fed)
	if fmt.Sprint(fed) != fmt.Sprint(want) {
		t.Fatalf("after op %d (%s): change feed %v, model %v", op, what, fed, want)
	}
}

// rangeIDs lists the ids of db/coll's partition key ranges, in EPK
// order.
func rangeIDs(t testing.TB, e *Engine, coll string) []string {
	t.Helper()
	docs, _, _, err := e.PartitionKeyRanges(context.Background(), "db", coll)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		var r struct{ ID string }
		if err := json.Unmarshal(d, &r); err != nil {
			t.Fatal(err)
		}
		ids[i] = r.ID
	}
	return ids
}

func rowKeys(t *testing.T, rows [][]byte) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var d struct{ ID, PK string }
		if err := json.Unmarshal(r, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.PK+"/"+d.ID)
	}
	sort.Strings(out)
	return out
}

// dumpState describes the purger and the stored keys, for a failure
// message.
func dumpState(e *Engine) string {
	out := ""
	c, _ := e.catalogSnapshot().container("db", "c")
	out += fmt.Sprintf("def=%d now=%d\n", c.ttl, e.guard.Now().Unix())
	out += e.purger.State().String()
	e.store.View(context.Background(), func(r storage.Reader) error {
		for _, sp := range []byte{keyspace.Doc, keyspace.ExpOwn, keyspace.ExpTs} {
			it := r.Scan([]byte{sp}, []byte{sp + 1}, false)
			for it.Next() {
				if sp == keyspace.Doc {
					h, _, _ := document.DecodeItem(it.Value())
					out += fmt.Sprintf("doc %x ts=%d ttl=%d\n", it.Key()[9:], h.Ts, h.TTL)
				} else {
					out += fmt.Sprintf("exp%d %x\n", sp, it.Key()[9:])
				}
			}
			it.Close()
		}
		return nil
	})
	return out
}
