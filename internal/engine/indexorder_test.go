package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/engine/index"
)

// orderPolicy indexes every path and has composite indexes in both
// orders, one on a system property.
const orderPolicy = `{"compositeIndexes":[
	[{"path":"/n","order":"ascending"},{"path":"/name","order":"descending"}],
	[{"path":"/a","order":"ascending"},{"path":"/n","order":"ascending"}],
	[{"path":"/_ts","order":"descending"},{"path":"/id","order":"ascending"}],
	[{"path":"/b/c","order":"descending"},{"path":"/n","order":"descending"}]]}`

// randomOrderQuery makes an ORDER BY query over the paths of randomDoc.
func randomOrderQuery(r *rand.Rand) (string, []any) {
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	dir := func() string { return pick("", " ASC", " DESC") }
	order := pick(
		"c.n"+dir(), "c.a"+dir(), "c.name"+dir(), "c.b"+dir(), "c.b.c"+dir(), "c.id"+dir(), "c._ts"+dir(), "c.tags"+dir(), `c["name"]`+dir(),
		"c.n, c.name DESC", "c.n DESC, c.name", "c.n DESC, c.name DESC", "c.a, c.n", "c.a DESC, c.n DESC",
		"c._ts DESC, c.id", "c._ts, c.id DESC", "c.b.c DESC, c.n DESC", "c.b.c, c.n",
		"c.name, c.n", "c.n, c.id DESC", "c.a, c.name, c.id",
	)
	where := pick("", "", "",
		"c.n > @n", "c.n >= 10 AND c.n < 30", "c.name >= @s", "STARTSWITH(c.name, 'a')", "c.a > 0",
		"IS_DEFINED(c.a)", "c.a = 1", "c.a IN (1, 's1', null)", "c.pk = 'p2'", "c.n % 3 = 0",
		"ARRAY_CONTAINS(c.tags, 't1')", "c.b.c = 1", "c.n = @n",
	)
	if where != "" {
		where = " WHERE " + where
	}
	sel := pick(
		"SELECT * FROM c%s ORDER BY %s",
		"SELECT c.id, c.n, c.name FROM c%s ORDER BY %s",
		"SELECT VALUE c.id FROM c%s ORDER BY %s",
		"SELECT TOP 5 c.id FROM c%s ORDER BY %s",
		"SELECT c.id FROM c%s ORDER BY %s OFFSET 3 LIMIT 7",
		"SELECT c.id, t AS tag FROM c JOIN t IN c.tags%s ORDER BY %s",
		"SELECT VALUE c.b.c FROM c%s ORDER BY %s",
	)
	return fmt.Sprintf(sel, where, order), []any{"@n", r.IntN(50), "@s", pick("a", "ab", "b", longA(256))}
}

// TestOrderByIndexDifferential checks that ORDER BY queries read in
// order from an index return exactly the rows, in exactly the order, a
// scan through a heap returns, page by page, with documents lacking the
// order paths, values of every kind, cut strings, expired but unpurged
// items, and writes between pages.
func TestOrderByIndexDifferential(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	e, clk := openEngine(t, memStore(t), Options{DisablePurger: true})
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1,"indexingPolicy":`+orderPolicy+`}`)
	const docs = 150
	write := func(i int) {
		doc := randomDoc(r, i)
		if r.IntN(6) == 0 {
			doc = strings.Replace(doc, `"n":`, `"m":`, 1) // some lack n
		}
		writeAny(t, e, "c", doc)
	}
	for i := range docs {
		if i%40 == 0 {
			clk.Advance(time.Second) // spread _ts
		}
		write(i)
	}
	clk.Advance(2 * time.Second) // items with ttl 1 expire, unpurged
	ordered, queries := 0, 400
	if testing.Short() {
		queries = 100
	}
	for i := range queries {
		if i%50 == 25 {
			for range 15 {
				write(r.IntN(docs))
			}
		}
		q, params := randomOrderQuery(r)
		req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(q, params...), MaxItemCount: 1 + r.IntN(9), CrossPartition: true, RangeID: "0"}
		if r.IntN(4) == 0 {
			req.Ref.PK, req.Ref.HasPK = `["p1"]`, true
		}
		if orderedPlan(t, e, req) {
			ordered++
		}
		got, _ := drainQuery(t, e, req, false)
		want, _ := drainQuery(t, e, req, true)
		if !slices.Equal(got, want) {
			t.Fatalf("%s %v (pk %s, page %d, ordered %v):\n index %v\n scan  %v", q, params, req.Ref.PK, req.MaxItemCount, orderedPlan(t, e, req), got, want)
		}
	}
	// A quarter of the queries are limited to a small partition, which
	// scans (TestOrderByPartitionScope), and some filter on another path.
	if ordered < queries/3 {
		t.Errorf("only %d of %d queries read an index in order", ordered, queries)
	}
	checkConsistent(t, e)
}

// orderedPlan reports whether the engine serves req's first page from an
// index in ORDER BY order.
func orderedPlan(t testing.TB, e *Engine, req QueryRequest) bool {
	t.Helper()
	c, _ := e.resolve(req.Ref)
	text, params, _ := parseQueryBody(req.Body)
	plan, err := e.compile(text, params, c.computed)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := e.scope(context.Background(), req, c, true)
	if err != nil {
		t.Fatal(err)
	}
	os, err := index.OrderedFor(context.Background(), ds.indexQuery(), plan, 0)
	if err != nil {
		t.Fatal(err)
	}
	return os != nil
}

// TestOrderByReadsOnlyWhatItReturns checks that an ORDER BY served from
// an index reads about as many documents as it returns, page after page,
// and says which index it used.
func TestOrderByReadsOnlyWhatItReturns(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"compositeIndexes":[[{"path":"/x"},{"path":"/y","order":"descending"}]]}}`)
	const n = 2000
	for i := range n {
		writeAny(t, e, "c", fmt.Sprintf(`{"id":"i%04d","pk":"p","x":%d,"y":%d}`, i, i%100, i))
	}
	ctx := context.Background()
	for _, tc := range []struct {
		query, first, index string
		retrieved           int // at most, per page: the page, the last row of the one before, one more
	}{
		// Every document has x: the documents lacking it would be read
		// first, but the WHERE rules them out.
		{"SELECT VALUE c.id FROM c WHERE c.x >= 0 ORDER BY c.x", `"i0000"`, `"UtilizedSingleIndexes":[{"FilterExpression":"","IndexSpec":"/x/?"`, 12},
		// Descending: the documents lacking x come last, never reached.
		{"SELECT VALUE c.id FROM c ORDER BY c.x DESC", `"i1999"`, `"IndexSpec":"/x/?"`, 12},
		{"SELECT VALUE c.id FROM c ORDER BY c.x, c.y DESC", `"i1900"`, `"UtilizedCompositeIndexes":[{"IndexSpecs":["/x ASC","/y DESC"]`, 12},
		{"SELECT VALUE c.id FROM c ORDER BY c.x DESC, c.y", `"i0099"`, `"IndexSpecs":["/x ASC","/y DESC"]`, 12},
		{"SELECT VALUE c.id FROM c WHERE c.y < 1000 ORDER BY c.y DESC", `"i0999"`, `"IndexSpec":"/y/?"`, 12},
	} {
		req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(tc.query), MaxItemCount: 10, CrossPartition: true, RangeID: "0"}
		for page := 0; page < 5; page++ {
			res, err := e.QueryItems(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", tc.query, err)
			}
			m, _ := url.QueryUnescape(res.IndexMetrics)
			if page == 0 && (len(res.Rows()) == 0 || string(res.Rows()[0]) != tc.first || !strings.Contains(m, tc.index)) {
				t.Fatalf("%s: first row %s, index metrics %s", tc.query, res.Rows(), m)
			}
			var got int
			fmt.Sscanf(res.Metrics[strings.Index(res.Metrics, "retrievedDocumentCount="):], "retrievedDocumentCount=%d", &got)
			if len(res.Rows()) != 10 || got > tc.retrieved {
				t.Fatalf("%s page %d: %d rows, %d documents read", tc.query, page, len(res.Rows()), got)
			}
			req.Continuation = res.Continuation
		}
	}
}

// TestOrderByUndefinedFirst checks the documents lacking the ORDER BY
// path: first when ascending, last when descending, through both the
// path index and a composite index (which holds them itself).
func TestOrderByUndefinedFirst(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"compositeIndexes":[[{"path":"/x"},{"path":"/y"}]]}}`)
	for _, d := range []string{
		`{"id":"a","pk":"p","x":2,"y":1}`, `{"id":"b","pk":"p","y":5}`, `{"id":"c","pk":"q","x":1}`,
		`{"id":"d","pk":"p","x":null,"y":0}`, `{"id":"e","pk":"q","x":[1],"y":2}`, `{"id":"f","pk":"q","x":"s","y":3}`,
		`{"id":"g","pk":"q","x":{"k":1},"y":1}`, `{"id":"h","pk":"p","x":[0],"y":1}`, `{"id":"i","pk":"p","x":2}`,
	} {
		writeAny(t, e, "c", d)
	}
	for _, tc := range []struct{ query, want string }{
		{"SELECT VALUE c.id FROM c ORDER BY c.x", `b d c a i f h e g`},
		{"SELECT VALUE c.id FROM c ORDER BY c.x DESC", `g e h f i a c d b`},
		{"SELECT VALUE c.id FROM c ORDER BY c.x, c.y", `b d c i a f h e g`},
		{"SELECT VALUE c.id FROM c ORDER BY c.x DESC, c.y DESC", `g e h f a i c d b`},
	} {
		for _, size := range []int{1, 2, 4, 100} {
			req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(tc.query), MaxItemCount: size, CrossPartition: true, RangeID: "0"}
			if !orderedPlan(t, e, req) {
				t.Fatalf("%s: not served in order from an index", tc.query)
			}
			rows, _ := drainQuery(t, e, req, false)
			if got := strings.ReplaceAll(strings.Join(rows, " "), `"`, ""); got != tc.want {
				t.Errorf("%s (page size %d): got %s, want %s", tc.query, size, got, tc.want)
			}
		}
	}
}

// writeAny upserts doc into coll under the partition key it holds at /pk.
func writeAny(t testing.TB, e *Engine, coll, doc string) {
	t.Helper()
	var pk struct{ PK string }
	json.Unmarshal([]byte(doc), &pk)
	ref := ItemRef{DB: "db", Coll: coll, PK: `["` + pk.PK + `"]`, HasPK: true}
	if _, err := e.WriteItem(context.Background(), ref, Upsert, []byte(doc), ""); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
}

// TestOrderByPartitionScope checks when a query limited to one partition
// reads the index in order: not for a small partition (a scan of it is
// cheaper than skipping every other partition's entries), yes for a
// large one, and the rows are the same either way.
func TestOrderByPartitionScope(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	for i := range 1200 {
		writeAny(t, e, "c", fmt.Sprintf(`{"id":"b%04d","pk":"big","n":%d}`, i, i%97))
	}
	for i := range 600 {
		writeAny(t, e, "c", fmt.Sprintf(`{"id":"s%04d","pk":"p%d","n":%d}`, i, i%30, i%89))
	}
	for _, tc := range []struct {
		pk      string
		ordered bool
	}{{`["p3"]`, false}, {`["big"]`, true}, {"", true}} {
		req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT VALUE c.id FROM c ORDER BY c.n DESC"), MaxItemCount: 50, CrossPartition: true, RangeID: "0"}
		if tc.pk != "" {
			req.Ref.PK, req.Ref.HasPK = tc.pk, true
		}
		if got := orderedPlan(t, e, req); got != tc.ordered {
			t.Errorf("partition %q: read in order %v, want %v", tc.pk, got, tc.ordered)
		}
		got, _ := drainQuery(t, e, req, false)
		want, _ := drainQuery(t, e, req, true)
		if !slices.Equal(got, want) {
			t.Errorf("partition %q: %d rows, want %d in the scan's order", tc.pk, len(got), len(want))
		}
	}
}
