package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/storage"
)

// drainQuery runs a query to the end, page by page, over the engine's
// choice of access path or (scan) over a plain scan, and returns the rows
// and whether any page used an index.
func drainQuery(t testing.TB, e *Engine, req QueryRequest, scan bool) (rows []string, indexed bool) {
	t.Helper()
	ctx := context.Background()
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatalf("%s: no end of pages", req.Body)
		}
		var res QueryResult
		var err error
		if scan {
			c, _ := e.resolve(req.Ref)
			text, params, _ := parseQueryBody(req.Body)
			plan, cerr := e.compile(text, params, c.computed)
			if cerr != nil {
				t.Fatalf("%s: %v", req.Body, cerr)
			}
			ds, serr := e.scope(ctx, req, c, true)
			if serr != nil {
				t.Fatalf("%s: %v", req.Body, serr)
			}
			res, err = e.page(ctx, plan, ds, req)
		} else {
			res, err = e.QueryItems(ctx, req)
		}
		if err != nil {
			t.Fatalf("%s (page %d, scan %v): %v", req.Body, pages, scan, err)
		}
		if usedIndex(res) {
			indexed = true
		}
		for _, r := range res.Rows() {
			rows = append(rows, string(r))
		}
		if res.Continuation == "" {
			return rows, indexed
		}
		req.Continuation = res.Continuation
	}
}

// usedIndex reports whether a page's index metrics name a utilized index.
func usedIndex(res QueryResult) bool {
	m, err := url.QueryUnescape(res.IndexMetrics)
	return err == nil && strings.Contains(m, `"UtilizedSingleIndexes":[{`)
}

func queryBody(q string, params ...any) []byte {
	type param struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	ps := []param{}
	for i := 0; i+1 < len(params); i += 2 {
		ps = append(ps, param{params[i].(string), params[i+1]})
	}
	b, _ := json.Marshal(map[string]any{"query": q, "parameters": ps})
	return b
}

// randomDoc makes a document with values of every kind at the paths the
// random queries filter on.
func randomDoc(r *rand.Rand, i int) string {
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	m := []string{fmt.Sprintf(`"id":"d%d"`, i), `"pk":"` + pick("p0", "p1", "p2", "p3") + `"`}
	add := func(name string, v string) {
		if v != "" {
			m = append(m, `"`+name+`":`+v)
		}
	}
	add("a", pick("", "null", "true", "false", "0", "1", "2", "3", "-1", "2.5", "1e3", `"1"`, `"s1"`, `"s2"`, `"s3"`, `[]`, `[1]`, `{}`, `{"x":1}`))
	add("n", fmt.Sprint(r.IntN(50)))
	add("name", pick("", `""`, `"a"`, `"ab"`, `"abc"`, `"abd"`, `"b"`, `"ba"`, `"A"`, "7",
		`"`+longA(255)+`"`, `"`+longA(256)+`"`, `"`+longA(257)+`"`, `"`+longA(256)+`b"`, `"`+longA(300)+`"`, `"`+longA(255)+`b"`, `"`+longA(256)+`\u0000"`))
	add("tags", pick("", `[]`, `["t1"]`, `["t1","t2"]`, `["t2","t3","t2"]`, `"t1"`, `[["t1"]]`, `[{"t":"t1"}]`))
	add("b", pick("", `{"c":1}`, `{"c":2}`, `{"c":"1"}`, `{}`, `[{"c":1}]`, "1"))
	if r.IntN(5) == 0 {
		add("ttl", pick("1", "-1", "100"))
	}
	r.Shuffle(len(m)-2, func(x, y int) { m[x+2], m[y+2] = m[y+2], m[x+2] })
	return "{" + strings.Join(m, ",") + "}"
}

// longA is n a's: strings around the index's cut (maxIndexedString).
func longA(n int) string { return strings.Repeat("a", n) }

// randomQuery makes a query with sargable and other conjuncts.
func randomQuery(r *rand.Rand) (string, []any) {
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	sargable := []string{
		"c.a = " + pick("1", "2.5", "null", "true", "'s1'", "1000", "0"),
		"c.a = @v",
		"c.name = @s",
		"c.name > @s",
		"c.name <= @s",
		"c.name >= @s AND c.name < 'b'",
		"STARTSWITH(c.name, @s)",
		"c.name IN (@s, '" + longA(256) + "b', '" + longA(300) + "')",
		"c.a IN (" + pick("1, 2", "'s1', 2, null", "true, false, 3", "1, 1") + ")",
		"c.n > " + fmt.Sprint(r.IntN(50)),
		"c.n <= " + fmt.Sprint(r.IntN(50)),
		fmt.Sprintf("c.n >= %d AND c.n < %d", r.IntN(25), 25+r.IntN(25)),
		fmt.Sprintf("c.n BETWEEN %d AND %d", r.IntN(25), 25+r.IntN(25)),
		"c.a > " + pick("0", "'s1'", "false", "null"),
		"c.a >= " + pick("null", "true", "'s'"),
		"c.a < " + pick("2", "'s2'", "true"),
		"STARTSWITH(c.name, '" + pick("", "a", "ab", "abc", "b", "z") + "')",
		"STARTSWITH(c.name, 'a', " + pick("false", "true") + ")",
		"IS_DEFINED(c." + pick("a", "b", "tags", "name", "nope") + ")",
		"ARRAY_CONTAINS(c.tags, '" + pick("t1", "t2", "t3") + "')",
		"c.b.c = " + pick("1", "2", "'1'"),
		"c.pk = '" + pick("p0", "p1") + "'",
		"c.id = 'd" + fmt.Sprint(r.IntN(200)) + "'",
	}
	other := []string{"c.n % 2 = 0", "NOT IS_DEFINED(c.b)", "c.a != 1", "(c.n > 10 OR c.a = true)", "IS_STRING(c.name)"}
	var conj []string
	for k := 1 + r.IntN(2); k > 0; k-- {
		conj = append(conj, sargable[r.IntN(len(sargable))])
	}
	if r.IntN(3) == 0 {
		conj = append(conj, other[r.IntN(len(other))])
	}
	r.Shuffle(len(conj), func(x, y int) { conj[x], conj[y] = conj[y], conj[x] })
	where := strings.Join(conj, " AND ")
	sel := pick(
		"SELECT * FROM c WHERE %s",
		"SELECT c.id, c.a FROM c WHERE %s",
		"SELECT VALUE COUNT(1) FROM c WHERE %s",
		"SELECT c.id, c.n FROM c WHERE %s ORDER BY c.n DESC, c.id",
		"SELECT TOP 3 c.id FROM c WHERE %s ORDER BY c.id",
		"SELECT DISTINCT VALUE c.pk FROM c WHERE %s",
		"SELECT c.pk, COUNT(1) AS n FROM c WHERE %s GROUP BY c.pk",
		"SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE %s",
		"SELECT VALUE c.id FROM c WHERE %s ORDER BY c.id OFFSET 2 LIMIT 5",
	)
	v := []any{1, 2.5, "s1", nil, true}[r.IntN(5)]
	str := pick("a", "ab", longA(255), longA(256), longA(257), longA(256)+"a", longA(256)+"c", longA(400), longA(255)+"b")
	return fmt.Sprintf(sel, where), []any{"@v", v, "@s", str}
}

// TestIndexDifferential checks that queries answered over an index
// return the rows a scan returns, over random documents (with expired
// but unpurged ones among them) and random queries, paging in small
// pages, across partitions and within one.
func TestIndexDifferential(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	e, clk := openEngine(t, memStore(t), Options{DisablePurger: true})
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1}`)
	ctx := context.Background()
	const docs = 200
	for i := 0; i < docs; i++ {
		doc := randomDoc(r, i)
		var pk struct{ PK string }
		json.Unmarshal([]byte(doc), &pk)
		ref := ItemRef{DB: "db", Coll: "c", PK: `["` + pk.PK + `"]`, HasPK: true}
		if _, err := e.WriteItem(ctx, ref, Upsert, []byte(doc), ""); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
	}
	clk.Advance(2 * time.Second) // items with ttl 1 expire, unpurged
	used, queries := 0, 400
	if testing.Short() {
		queries = 100
	}
	for i := 0; i < queries; i++ {
		if i%50 == 25 {
			// Churn between queries: rewrites and deletes.
			for j := 0; j < 20; j++ {
				id := r.IntN(docs)
				doc := randomDoc(r, id)
				var pk struct{ PK string }
				json.Unmarshal([]byte(doc), &pk)
				ref := ItemRef{DB: "db", Coll: "c", PK: `["` + pk.PK + `"]`, HasPK: true, ID: fmt.Sprintf("d%d", id)}
				if r.IntN(3) == 0 {
					e.DeleteItem(ctx, ref, "") // may be absent
				} else if _, err := e.WriteItem(ctx, ref, Upsert, []byte(doc), ""); err != nil {
					t.Fatal(err)
				}
			}
		}
		q, params := randomQuery(r)
		req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(q, params...), MaxItemCount: 1 + r.IntN(7), CrossPartition: true, RangeID: "0"}
		if r.IntN(4) == 0 {
			req.Ref.PK, req.Ref.HasPK = `["p1"]`, true
		}
		got, indexed := drainQuery(t, e, req, false)
		want, _ := drainQuery(t, e, req, true)
		if indexed {
			used++
		}
		if !strings.Contains(q, "ORDER BY") {
			slices.Sort(got)
			slices.Sort(want)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s %v (pk %s, page %d, index %v):\n index %v\n scan  %v", q, params, req.Ref.PK, req.MaxItemCount, indexed, got, want)
		}
	}
	if used < queries/2 {
		t.Errorf("only %d of %d queries used an index", used, queries)
	}
	checkConsistent(t, e)
}

func TestIndexContinuations(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	for i := 0; i < 10; i++ {
		write(t, e, "c", fmt.Sprintf(`{"id":"%d","pk":"p","a":1}`, i))
	}
	ctx := context.Background()
	req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c WHERE c.a = 1"), MaxItemCount: 3, CrossPartition: true, RangeID: "0"}
	res, err := e.QueryItems(ctx, req)
	if err != nil || !usedIndex(res) || res.Continuation == "" {
		t.Fatalf("first page: %v, index %v, continuation %q", err, usedIndex(res), res.Continuation)
	}
	// An index token is not a read-feed (scan) token.
	if _, err := e.ReadFeed(ctx, QueryRequest{Ref: req.Ref, Continuation: res.Continuation}); err == nil {
		t.Fatal("a read feed accepted an index plan's continuation")
	}
	// After a policy change the index token is refused, with a 400.
	body := `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"excludedPaths":[{"path":"/b/?"}]}}`
	if _, err := e.ReplaceContainer(ctx, "db", "c", []byte(body), ""); err != nil {
		t.Fatal(err)
	}
	req.Continuation = res.Continuation
	_, err = e.QueryItems(ctx, req)
	var ee *Error
	if !asError(err, &ee) || ee.Kind != KindBadRequest || !strings.Contains(ee.Message, "indexing policy changed") {
		t.Fatalf("index token after a policy change: %v", err)
	}
	waitUntil(t, "rebuild", func() bool { return indexReady(t, e, "c") })
}

// TestScanContinuationAfterRebuild starts a query while the index is
// building (a scan) and finishes it after the index is ready: the scan's
// token resumes the scan, and the query returns every row once.
func TestScanContinuationAfterRebuild(t *testing.T) {
	var allow atomic.Bool
	e, _ := openEngine(t, memStore(t), Options{indexBatch: 2, indexHook: func(*container) bool { return allow.Load() }})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	for i := 0; i < 10; i++ {
		write(t, e, "c", fmt.Sprintf(`{"id":"%d","pk":"p","a":1}`, i))
	}
	replaceContainer(t, e, excludeB)
	ctx := context.Background()
	req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT VALUE c.id FROM c WHERE c.a = 1"), MaxItemCount: 4, CrossPartition: true, RangeID: "0"}
	res, err := e.QueryItems(ctx, req)
	if err != nil || usedIndex(res) || res.Continuation == "" {
		t.Fatalf("first page while building: %v, index %v, continuation %q", err, usedIndex(res), res.Continuation)
	}
	rows := res.Rows()
	allow.Store(true)
	e.indexer.kick()
	waitUntil(t, "rebuild", func() bool { return indexReady(t, e, "c") })
	for res.Continuation != "" {
		req.Continuation = res.Continuation
		if res, err = e.QueryItems(ctx, req); err != nil {
			t.Fatal(err)
		}
		if usedIndex(res) {
			t.Fatal("a scan's continuation was served by the index")
		}
		rows = append(rows, res.Rows()...)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, string(r))
	}
	slices.Sort(ids)
	if want := []string{`"0"`, `"1"`, `"2"`, `"3"`, `"4"`, `"5"`, `"6"`, `"7"`, `"8"`, `"9"`}; !slices.Equal(ids, want) {
		t.Fatalf("rows %v, want %v", ids, want)
	}
	// A new query uses the index.
	req.Continuation = ""
	if res, err = e.QueryItems(ctx, req); err != nil || !usedIndex(res) {
		t.Fatalf("after the rebuild: %v, index %v", err, usedIndex(res))
	}
}

const excludeB = `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"excludedPaths":[{"path":"/b/?"}]}}`

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

func indexReady(t testing.TB, e *Engine, coll string) bool {
	c, err := e.container("db", coll)
	if err != nil {
		t.Fatal(err)
	}
	var st index.State
	var found bool
	err = e.store.View(context.Background(), func(r storage.Reader) (err error) {
		st, found, err = index.ReadState(r, c.rid)
		return err
	})
	if err != nil || !found {
		t.Fatalf("index state of %s: found %v, %v", coll, found, err)
	}
	return !st.Building()
}
