package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/feed"
	"github.com/ebbdb/ebb/internal/ttl"
)

// The change feed property test: a random sequence of creates, upserts,
// replaces, patches, deletes, transactional batches and clock moves on a
// container with TTL, the purger running beside it. A model predicts
// every outcome; at checkpoints the latest-version feed must replay to
// exactly the model's visible items, and the all-versions log must
// account for every version: every write once, every delete once, every
// expiry once (a TTL delete, whether the purger or a later write found
// the expired version first).

// cfItem is the model's stored version of one item.
type cfItem struct {
	etag string
	lsn  uint64
	ts   int64
	ttl  ttl.ItemTTL
	n    float64 // the document's counter
}

type cfModel struct {
	def   ttl.Default
	items map[string]cfItem // by pk "/" id; stored versions not yet expired in the model
	// writes, deletes and expiries count what the log must hold.
	writes, deletes, expiries int
}

func (m *cfModel) clone() *cfModel {
	c := *m
	c.items = make(map[string]cfItem, len(m.items))
	for k, v := range m.items {
		c.items[k] = v
	}
	return &c
}

// settle counts the expiry of key's version if it has expired at now, and
// reports whether a visible version remains.
func (m *cfModel) settle(key string, now int64) (cfItem, bool) {
	it, ok := m.items[key]
	if !ok {
		return it, false
	}
	if ttl.Visible(it.ts, it.ttl, m.def, now) {
		return it, true
	}
	delete(m.items, key)
	m.expiries++
	return it, false
}

// cfOp is one random operation.
type cfOp struct {
	kind    BatchOpKind
	pk, id  string
	itemTTL string // JSON fragment, "" for none
}

func (o cfOp) key() string { return o.pk + "/" + o.id }

func (o cfOp) body(n int) []byte {
	return []byte(`{"id":"` + o.id + `","pk":"` + o.pk + `","n":` + strconv.Itoa(n) + o.itemTTL + `}`)
}

// predict applies op to the model at now and returns the status class
// the engine must answer: 0 success, else the error kind.
func (m *cfModel) predict(op cfOp, now int64) (Kind, bool) {
	_, visible := m.settle(op.key(), now)
	switch op.kind {
	case BatchCreate:
		if visible {
			return KindConflict, false
		}
	case BatchReplace, BatchPatch, BatchDelete, BatchRead:
		if !visible {
			return KindNotFound, false
		}
	}
	return 0, true
}

// assume records in a trial model what a successful op leaves, as far
// as later operations of the same batch can tell: which items are
// visible and until when.
func (m *cfModel) assume(op cfOp, now int64) {
	switch op.kind {
	case BatchDelete:
		delete(m.items, op.key())
	case BatchCreate, BatchUpsert, BatchReplace:
		it := cfItem{ts: now}
		if op.itemTTL != "" {
			v, _ := strconv.Atoi(strings.TrimPrefix(op.itemTTL, `,"ttl":`))
			it.ttl = ttl.ItemTTL(v)
		}
		m.items[op.key()] = it
	case BatchPatch:
		it := m.items[op.key()]
		it.ts = now
		m.items[op.key()] = it
	}
}

func randomOp(r *rand.Rand) cfOp {
	op := cfOp{
		kind: BatchOpKind(r.IntN(6)),
		pk:   []string{"p", "q"}[r.IntN(2)],
		id:   string(rune('a' + r.IntN(6))),
	}
	op.itemTTL = []string{"", "", `,"ttl":-1`, `,"ttl":2`, `,"ttl":5`}[r.IntN(5)]
	return op
}

// lsnOfEtag recovers the LSN an item etag was made from (itemEtag).
func lsnOfEtag(t *testing.T, etag string) uint64 {
	t.Helper()
	parts := strings.Split(strings.Trim(etag, `"`), "-")
	hi, err1 := strconv.ParseUint(parts[0], 16, 64)
	lo, err2 := strconv.ParseUint(parts[4], 16, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("etag %s is not an item etag", etag)
	}
	return hi<<48 | lo
}

func TestChangeFeedProperty(t *testing.T) {
	for _, tc := range []struct {
		name string
		def  string
	}{{"default-forever", "-1"}, {"default-6s", "6"}} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed-%d", tc.name, seed), func(t *testing.T) {
				e, clk := newTestEngine(t)
				runChangeFeedProperty(t, e, clk, tc.def, seed, 1000)
			})
		}
	}
}

func runChangeFeedProperty(t *testing.T, e *Engine, clk *clock.Manual, def string, seed uint64, steps int) {
	ctx := context.Background()
	// Ample throughput: the purger spends only spare throughput (on the
	// real clock), and this test waits for it.
	if _, err := e.CreateDatabase(ctx, []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
		t.Fatal(err)
	}
	body := `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":` + def + `,"changeFeedPolicy":{"retentionDuration":100000}}`
	if _, err := e.CreateContainer(ctx, "db", []byte(body), ThroughputHeaders{Offer: "1000000"}); err != nil {
		t.Fatal(err)
	}
	d, _ := strconv.Atoi(def)
	m := &cfModel{def: ttl.Default(d), items: map[string]cfItem{}}
	r := rand.New(rand.NewPCG(seed, seed*7919))
	ref := func(pk string) ItemRef { return ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true} }
	counter := 0

	// apply records a successful single write or delete in the model.
	apply := func(m *cfModel, op cfOp, res Resource) {
		switch op.kind {
		case BatchRead:
			return
		case BatchDelete:
			delete(m.items, op.key())
			m.deletes++
			return
		}
		var doc struct {
			Ts  int64           `json:"_ts"`
			TTL json.RawMessage `json:"ttl"`
			N   float64         `json:"n"`
		}
		if err := json.Unmarshal(res.Body, &doc); err != nil {
			t.Fatalf("seed %d: %s: %v", seed, res.Body, err)
		}
		it := cfItem{etag: res.ETag, lsn: lsnOfEtag(t, res.ETag), ts: doc.Ts, n: doc.N}
		if doc.TTL != nil {
			v, _ := strconv.Atoi(string(doc.TTL))
			it.ttl = ttl.ItemTTL(v)
		}
		m.items[op.key()] = it
		m.writes++
	}

	single := func(op cfOp, now int64) {
		counter++
		wantKind, ok := m.predict(op, now)
		var res Resource
		var err error
		switch op.kind {
		case BatchCreate:
			res, err = e.WriteItem(ctx, ref(op.pk), Create, op.body(counter), "")
		case BatchUpsert:
			res, err = e.WriteItem(ctx, ref(op.pk), Upsert, op.body(counter), "")
		case BatchReplace:
			r := ref(op.pk)
			r.ID = op.id
			res, err = e.WriteItem(ctx, r, Replace, op.body(counter), "")
		case BatchPatch:
			r := ref(op.pk)
			r.ID = op.id
			res, err = e.PatchItem(ctx, r, []byte(`[{"op":"incr","path":"/n","value":1000}]`), "")
		case BatchDelete:
			r := ref(op.pk)
			r.ID = op.id
			res, err = e.DeleteItem(ctx, r, "")
		case BatchRead:
			r := ref(op.pk)
			r.ID = op.id
			res, err = e.ReadItem(ctx, r, "")
		}
		if ok != (err == nil) || (!ok && !IsKind(err, wantKind)) {
			t.Fatalf("seed %d: %s %s: got %v, want kind %d (ok %v)", seed, op.kind, op.key(), err, wantKind, ok)
		}
		if ok {
			apply(m, op, res)
		}
	}

	batch := func(ops []cfOp, now int64) {
		trial := m.clone()
		failAt := -1
		var body []map[string]any
		for i, op := range ops {
			counter++
			if failAt < 0 {
				if _, ok := trial.predict(op, now); ok {
					trial.assume(op, now)
				} else {
					failAt = i
				}
			}
			o := map[string]any{"operationType": op.kind.String()}
			switch op.kind {
			case BatchCreate, BatchUpsert, BatchReplace:
				o["resourceBody"] = json.RawMessage(op.body(counter))
			case BatchPatch:
				o["resourceBody"] = json.RawMessage(`{"operations":[{"op":"incr","path":"/n","value":1000}]}`)
			}
			if op.kind != BatchCreate && op.kind != BatchUpsert {
				o["id"] = op.id
			}
			body = append(body, o)
		}
		raw, _ := json.Marshal(body)
		res, err := e.ExecuteBatch(ctx, ref(ops[0].pk), raw, BatchOptions{Atomic: true})
		if err != nil {
			t.Fatalf("seed %d: batch: %v", seed, err)
		}
		if res.Failed != (failAt >= 0) {
			t.Fatalf("seed %d: batch failed=%v, model predicts failure at %d: %+v", seed, res.Failed, failAt, res.Ops)
		}
		if failAt >= 0 {
			for i, r := range res.Ops {
				if (i == failAt) == r.Skipped {
					t.Fatalf("seed %d: batch result %d: %+v (failure predicted at %d)", seed, i, r, failAt)
				}
			}
			return // nothing committed: the model stays as it was
		}
		// The engine committed: apply its results, settling expiries as
		// the trial did.
		for i, op := range ops {
			m.predict(op, now)
			apply(m, op, res.Ops[i].Resource)
		}
	}

	var lastEtag string // a latest-version continuation from a checkpoint
	check := func(final bool) {
		now := e.now().Unix()
		visible := map[string]cfItem{}
		for k := range m.items {
			if it, ok := m.settle(k, now); ok {
				visible[k] = it
			}
		}
		// Latest version: from the beginning, in random page sizes.
		rows, etag := drainLatest(t, e, "", r.IntN(7)+1)
		got := map[string]bool{}
		var last float64
		for _, row := range rows {
			var doc struct {
				ID   string  `json:"id"`
				Pk   string  `json:"pk"`
				Etag string  `json:"_etag"`
				Lsn  float64 `json:"_lsn"`
			}
			if err := json.Unmarshal(row, &doc); err != nil {
				t.Fatalf("feed row %s: %v", row, err)
			}
			k := doc.Pk + "/" + doc.ID
			if got[k] {
				t.Fatalf("seed %d: %s delivered twice", seed, k)
			}
			got[k] = true
			if doc.Lsn <= last {
				t.Fatalf("seed %d: _lsn %v after %v", seed, doc.Lsn, last)
			}
			last = doc.Lsn
			want, ok := visible[k]
			if !ok || want.etag != doc.Etag || uint64(doc.Lsn) != want.lsn {
				t.Fatalf("seed %d: feed delivered %s at %s (_lsn %v); model has %+v (visible %v)", seed, k, doc.Etag, doc.Lsn, want, ok)
			}
		}
		if len(got) != len(visible) {
			t.Fatalf("seed %d: feed has %d items, model %d visible: %v vs %v", seed, len(got), len(visible), got, visible)
		}
		// From the last checkpoint: exactly the visible items changed since.
		if lastEtag != "" {
			since, _ := feed.ParseContinuation(lastEtag)
			rows, _ := drainLatest(t, e, lastEtag, 3)
			want := 0
			for _, it := range visible {
				if it.lsn >= since {
					want++
				}
			}
			if len(rows) != want {
				t.Fatalf("seed %d: %d items since %s, model has %d", seed, len(rows), lastEtag, want)
			}
		}
		lastEtag = etag

		// All versions: replay the log from its start.
		state := map[string]uint64{} // key → LSN of its current version
		counts := map[string]int{}
		var lastLSN float64
		for _, rec := range drainLog(t, e) {
			md := rec["metadata"].(map[string]any)
			lsn := md["lsn"].(float64)
			if lsn <= lastLSN {
				t.Fatalf("seed %d: log lsn %v after %v", seed, lsn, lastLSN)
			}
			lastLSN = lsn
			op := md["operationType"].(string)
			var k string
			if op == "delete" {
				k = md["partitionKey"].(map[string]any)["pk"].(string) + "/" + md["id"].(string)
				if md["timeToLiveExpired"] == true {
					op = "expire"
				}
			} else {
				cur := rec["current"].(map[string]any)
				k = cur["pk"].(string) + "/" + cur["id"].(string)
			}
			prev, had := state[k]
			switch op {
			case "create":
				if had {
					t.Fatalf("seed %d: create of %s at %v over its version %d", seed, k, lsn, prev)
				}
			default:
				if !had || md["previousImageLSN"].(float64) != float64(prev) {
					t.Fatalf("seed %d: %s of %s at %v: previousImageLSN %v, replayed version %d (present %v)", seed, op, k, lsn, md["previousImageLSN"], prev, had)
				}
			}
			counts[op]++
			if op == "delete" || op == "expire" {
				delete(state, k)
			} else {
				state[k] = uint64(lsn)
			}
		}
		for k, it := range visible {
			if state[k] != it.lsn {
				t.Fatalf("seed %d: replayed log has %s at %d, model at %d", seed, k, state[k], it.lsn)
			}
		}
		for k := range state {
			if _, ok := visible[k]; !ok {
				if _, stored := m.items[k]; stored || !final {
					// An expired version the purger has not reached yet.
					continue
				}
				t.Fatalf("seed %d: replayed log still has %s", seed, k)
			}
		}
		if final {
			if counts["create"]+counts["replace"] != m.writes || counts["delete"] != m.deletes || counts["expire"] != m.expiries {
				t.Fatalf("seed %d: log has %v; model: %d writes, %d deletes, %d expiries", seed, counts, m.writes, m.deletes, m.expiries)
			}
		}
	}

	for i := 0; i < steps; i++ {
		switch x := r.IntN(20); {
		case x < 3:
			clk.Advance(time.Duration(r.IntN(4000)) * time.Millisecond)
		case x < 5:
			ops := make([]cfOp, 2+r.IntN(3))
			for j := range ops {
				ops[j] = randomOp(r)
				ops[j].pk = "p"
			}
			batch(ops, e.now().Unix())
		default:
			single(randomOp(r), e.now().Unix())
		}
		if i%50 == 49 {
			check(false)
		}
	}
	// Let everything that can expire expire, wait for the purger, and
	// account for every version.
	clk.Advance(time.Hour)
	now := e.now().Unix()
	for k := range m.items {
		m.settle(k, now)
	}
	waitUntil(t, "the purge of every expired item", func() bool { return e.StoredItems() == len(m.items) })
	check(true)
}

// drainLatest reads the latest-version feed from etag ("" the beginning)
// to 304 in pages of size, and returns the rows and the final etag.
func drainLatest(t *testing.T, e *Engine, etag string, size int) ([][]byte, string) {
	t.Helper()
	return drainFeed(t, e, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}, IfNoneMatch: etag, MaxItemCount: size}, func(res ChangeFeedResult) {
		if etag != "" && lsnOf(res.ETag) < lsnOf(etag) {
			t.Fatalf("continuation went back from %s to %s", etag, res.ETag)
		}
		etag = res.ETag
		if len(res.Rows) > size {
			t.Fatalf("page of %d rows, max %d", len(res.Rows), size)
		}
	})
}

// drainFeed reads the change feed req asks for, from its IfNoneMatch on,
// to 304, calling page (if not nil) with each answer, and returns the
// rows and the final etag.
func drainFeed(t testing.TB, e *Engine, req ChangeFeedRequest, page func(ChangeFeedResult)) ([][]byte, string) {
	t.Helper()
	var rows [][]byte
	for range 10000 {
		res, err := e.ChangeFeed(context.Background(), req)
		if err != nil {
			t.Fatalf("change feed of range %q: %v", req.RangeID, err)
		}
		if page != nil {
			page(res)
		}
		req.IfNoneMatch = res.ETag
		if res.NotModified {
			return rows, res.ETag
		}
		rows = append(rows, res.Rows...)
	}
	t.Fatal("the feed never ended")
	return nil, ""
}

func lsnOf(etag string) uint64 {
	n, _ := feed.ParseContinuation(etag)
	return n
}

// drainLog reads the whole all-versions log.
func drainLog(t *testing.T, e *Engine) []map[string]any {
	t.Helper()
	var out []map[string]any
	etag := `"1"`
	for range 10000 {
		res, err := e.ChangeFeed(context.Background(), ChangeFeedRequest{
			Ref: ItemRef{DB: "db", Coll: "c"}, Mode: AllVersionsAndDeletes, IfNoneMatch: etag, MaxItemCount: 50,
		})
		if err != nil {
			t.Fatal(err)
		}
		etag = res.ETag
		if res.NotModified {
			return out
		}
		for _, row := range res.Rows {
			var rec map[string]any
			if err := json.Unmarshal(row, &rec); err != nil {
				t.Fatalf("record %s: %v", row, err)
			}
			out = append(out, rec)
		}
	}
	t.Fatal("the log never ended")
	return nil
}
