package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/engine/vector"
)

func TestParseVector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		dims int
		want string
	}{
		{`[1, 2.5, -3e2]`, 3, `[1 2.5 -300]`},
		{` [ 0.25 ,0.5] `, 2, `[0.25 0.5]`},
		{`[1, 2]`, 3, `[]`},
		{`[1, 2, 3, 4]`, 3, `[]`},
		{`[1, "2", 3]`, 3, `[]`},
		{`[1, [2], 3]`, 3, `[]`},
		{`[1, {"a": 2, "b": 3}]`, 3, `[]`},
		{`"x"`, 1, `[]`},
		{`[]`, 1, `[]`},
	} {
		if got := fmt.Sprint(parseVector([]byte(tc.in), tc.dims)); got != tc.want {
			t.Errorf("parseVector(%s, %d) = %s, want %s", tc.in, tc.dims, got, tc.want)
		}
	}
}

// TestVectorSearchPages: a vector search served from the stored vectors
// pages with continuations in the order a full sort gives, puts items
// without a vector (or of another length) last, skips expired items,
// and its vectors follow every write, delete and purge.
func TestVectorSearchPages(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1,`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"euclidean","dimensions":2}]}}`)
	for i := range 30 {
		write(t, e, "c", fmt.Sprintf(`{"id":"d%02d","pk":"p","v":[%d,%d]}`, i, i%7, i%5))
	}
	write(t, e, "c", `{"id":"none","pk":"p"}`)
	write(t, e, "c", `{"id":"short","pk":"p","v":[1]}`)
	write(t, e, "c", `{"id":"gone","pk":"p","v":[0,0],"ttl":5}`)
	write(t, e, "c", `{"id":"d03","pk":"p","v":[100,100]}`) // replaced: now last of the ranked
	clk.Advance(6 * time.Second)

	body := []byte(`{"query":"SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [0, 0])"}`)
	paged := unquote(queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}, Body: body, MaxItemCount: 4}))
	// The same ranking from a scan of the documents: a query vector
	// that is not a constant keeps the engine from the stored vectors.
	all, err := queryRows(e, "SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [0, 0 + 0])")
	if err != nil {
		t.Fatal(err)
	}
	if len(paged) != 32 || paged[29] != "d03" || !slices.Contains(paged[30:], "none") || !slices.Contains(paged[30:], "short") || slices.Contains(paged, "gone") {
		t.Fatalf("paged: %v", paged)
	}
	if strings.Join(paged, ",") != strings.Join(unquote(all), ",") {
		t.Fatalf("paged %v\n  one page %v", paged, all)
	}
	// A query vector beyond float32's range: the stored vectors cannot
	// rank it, and the executor orders every item itself.
	huge, err := queryRows(e, "SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1e39, 3])")
	if err != nil {
		t.Fatal(err)
	}
	if scanned, _ := queryRows(e, "SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1e39, 3 + 0])"); strings.Join(huge, ",") != strings.Join(scanned, ",") {
		t.Fatalf("a query beyond float32:\n %v\n scanned %v", huge, scanned)
	}
	if err := e.CheckConsistency(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the purge of the expired item", func() bool {
		_, err := e.ReadItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "gone", PK: `["p"]`, HasPK: true}, "")
		return IsKind(err, KindNotFound) && e.CheckConsistency(context.Background()) == nil
	})
}

func unquote(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		json.Unmarshal([]byte(r), &out[i])
	}
	return out
}

// TestVectorSearchAfterWrites: searches between writes rank what the
// container holds at each: the vectors in memory take in the items
// written since (replaced, new, deleted, their vector removed), and the
// order is the scan's.
func TestVectorSearchAfterWrites(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"cosine","dimensions":2}]}}`)
	for i := range 100 {
		write(t, e, "c", fmt.Sprintf(`{"id":"d%03d","pk":"p","v":[%d,%d]}`, i, i%11+1, i%13))
	}
	ranked := func() []string {
		rows, err := queryRows(e, "SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])")
		if err != nil {
			t.Fatal(err)
		}
		return unquote(rows)
	}
	scanned := func() []string {
		rows, err := queryRows(e, "SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1, 0 + 0])")
		if err != nil {
			t.Fatal(err)
		}
		return unquote(rows)
	}
	for round, writes := range [][]string{
		nil,
		{`{"id":"d005","pk":"p","v":[1,0]}`, `{"id":"new","pk":"p","v":[2,0]}`, `{"id":"d007","pk":"p"}`},
		{`{"id":"d005","pk":"p","v":[0,1]}`},
	} {
		for _, w := range writes {
			write(t, e, "c", w)
		}
		if round == 2 {
			if _, err := e.DeleteItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "new", PK: `["p"]`, HasPK: true}, ""); err != nil {
				t.Fatal(err)
			}
		}
		got, want := ranked(), scanned()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("round %d:\n got %v\nwant %v", round, got, want)
		}
	}
}

// TestVectorSearchApproximate: over a diskANN index a cross-partition
// search takes its candidates from the graph (annindex.go): its top 10
// are nearly the exact ones, always in order of distance; bruteForce is
// exact; the graph follows replacements, deletes and expiry; a filter
// that the candidates cannot satisfy goes on with the exact ranking; a
// graph too far behind is built in the background while searches stay
// exact.
func TestVectorSearchApproximate(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1,`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"euclidean","dimensions":8}]},`+
		`"indexingPolicy":{"vectorIndexes":[{"path":"/v","type":"diskANN"}]}}`)
	rng := rand.New(rand.NewPCG(5, 6))
	vec := func() string {
		parts := make([]string, 8)
		for i := range parts {
			parts[i] = strconv.FormatFloat(rng.NormFloat64(), 'f', 4, 64)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	for i := range 1500 {
		write(t, e, "c", fmt.Sprintf(`{"id":"d%04d","pk":"p","n":%d,"v":%s}`, i, i%50, vec()))
	}
	search := func(text string) []string { return unquote(queryAcross(t, e, text)) }
	graph := e.annIndexFor(e.catalogSnapshot().dbs["db"].colls["c"], 0, vector.Index{})
	recall, n := 0.0, 0
	for range 20 {
		q := vec()
		approx := search("SELECT TOP 10 VALUE c.id FROM c ORDER BY VectorDistance(c.v, " + q + ")")
		exact := search("SELECT TOP 10 VALUE c.id FROM c ORDER BY VectorDistance(c.v, " + q + ", true)")
		// A query vector that is not a constant is ranked by a scan.
		scanned := search("SELECT TOP 10 VALUE c.id FROM c ORDER BY VectorDistance(c.v, " + strings.TrimSuffix(q, "]") + " + 0])")
		if len(approx) != 10 || strings.Join(exact, ",") != strings.Join(scanned, ",") {
			t.Fatalf("approximate %v, exact %v, scanned %v", approx, exact, scanned)
		}
		for _, id := range approx {
			if slices.Contains(exact, id) {
				recall++
			}
			n++
		}
		dists := queryAcross(t, e, "SELECT TOP 10 VALUE VectorDistance(c.v, "+q+") FROM c ORDER BY VectorDistance(c.v, "+q+")")
		if !sortedNumbers(dists) {
			t.Fatalf("distances out of order: %v", dists)
		}
	}
	t.Logf("recall@10 %.3f", recall/float64(n))
	if recall /= float64(n); recall < 0.9 {
		t.Fatalf("recall@10 %.3f", recall)
	}
	if graph.synced == nil || len(graph.live) != 1500 {
		t.Fatalf("the graph holds %d items (synced %v)", len(graph.live), graph.synced != nil)
	}

	// Writes: the nearest item becomes another, one is deleted, one expires.
	write(t, e, "c", `{"id":"d0007","pk":"p","n":7,"v":[9,9,9,9,9,9,9,9]}`)
	write(t, e, "c", `{"id":"d0008","pk":"p","n":8,"v":[9,9,9,9,9,9,9,9.1]}`)
	write(t, e, "c", `{"id":"short","pk":"p","n":8,"v":[9,9,9,9,9,9,9,9.01],"ttl":5}`)
	if _, err := e.DeleteItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "d0008", PK: `["p"]`, HasPK: true}, ""); err != nil {
		t.Fatal(err)
	}
	near := "SELECT TOP 2 VALUE c.id FROM c ORDER BY VectorDistance(c.v, [9,9,9,9,9,9,9,9])"
	if got := search(near); strings.Join(got, ",") != "d0007,short" {
		t.Fatalf("after writes: %v", got)
	}
	clk.Advance(6 * time.Second)
	if got := search(near); got[0] != "d0007" || slices.Contains(got, "short") || slices.Contains(got, "d0008") {
		t.Fatalf("after expiry: %v", got)
	}
	// A filter few candidates pass: the exact ranking supplies the rest.
	got := queryAcross(t, e, "SELECT TOP 20 VALUE c.n FROM c WHERE c.n > 46 ORDER BY VectorDistance(c.v, [9,9,9,9,9,9,9,9])")
	if len(got) != 20 || slices.ContainsFunc(got, func(n string) bool { return n < "47" }) {
		t.Fatalf("filtered: %v", got)
	}
	// A selective filter an index serves ranks exactly the items it
	// names, and reads no others; those without a vector come last.
	write(t, e, "c", `{"id":"novector","pk":"p","n":3}`)
	q := vec()
	const where = " FROM c WHERE c.n = 3 ORDER BY VectorDistance(c.v, "
	filtered := search("SELECT VALUE c.id" + where + q + ")")
	scanned := search("SELECT VALUE c.id" + where + strings.TrimSuffix(q, "]") + " + 0])")
	if len(filtered) != 31 || filtered[30] != "novector" || strings.Join(filtered, ",") != strings.Join(scanned, ",") {
		t.Fatalf("filtered by an index:\n %v\n scanned %v", filtered, scanned)
	}
	res, err := e.QueryItems(context.Background(), QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT TOP 5 VALUE c.id" + where + q + ")"), CrossPartition: true, RangeID: "0"})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Release()
	// Five items and the next, which ends the run of the fifth.
	if !strings.Contains(res.Metrics, "retrievedDocumentCount=6;") {
		t.Fatalf("a selective filter read other items: %s", res.Metrics)
	}
	if _, err := e.DeleteItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "novector", PK: `["p"]`, HasPK: true}, ""); err != nil {
		t.Fatal(err)
	}

	// Many writes at once: the graph catches up in the background, and
	// searches meanwhile are exact.
	defer func(was int) { inlineSyncFloats = was }(inlineSyncFloats)
	inlineSyncFloats = 100 * 8
	for i := range 1000 {
		write(t, e, "c", fmt.Sprintf(`{"id":"e%04d","pk":"p","n":%d,"v":%s}`, i, i%50, vec()))
	}
	q = vec()
	exact := search("SELECT TOP 10 VALUE c.id FROM c ORDER BY VectorDistance(c.v, " + q + ", true)")
	if got := search("SELECT TOP 10 VALUE c.id FROM c ORDER BY VectorDistance(c.v, " + q + ")"); strings.Join(got, ",") != strings.Join(exact, ",") {
		graph.mu.Lock()
		syncing := graph.syncing
		graph.mu.Unlock()
		if !syncing {
			t.Fatalf("while the graph catches up: %v, exact %v", got, exact)
		}
	}
	waitUntil(t, "the graph to catch up", func() bool {
		search("SELECT TOP 1 VALUE c.id FROM c ORDER BY VectorDistance(c.v, " + q + ")")
		graph.mu.Lock()
		defer graph.mu.Unlock()
		return !graph.syncing && len(graph.live) == 2499 // 1,500 + 1,000, less the deleted one
	})

	// After a restart the graph is built as the engine opens, before any
	// search asks for it.
	e.Close()
	e, err = Open(context.Background(), e.store, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	waitUntil(t, "the graph to be built at start", func() bool {
		e.annMu.Lock()
		graph := e.anns[annKey{e.catalogSnapshot().dbs["db"].colls["c"].rid, 0}]
		e.annMu.Unlock()
		if graph == nil {
			return false
		}
		graph.mu.Lock()
		defer graph.mu.Unlock()
		return graph.synced != nil && len(graph.live) == 2499
	})
}

// queryAcross runs a query over every partition of container c and
// returns its rows.
func queryAcross(t testing.TB, e *Engine, text string) []string {
	t.Helper()
	return queryPages(t, e, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(text), MaxItemCount: -1, CrossPartition: true, RangeID: "0"})
}

// sortedNumbers reports whether rows of JSON numbers ascend.
func sortedNumbers(rows []string) bool {
	prev := math.Inf(-1)
	for _, r := range rows {
		f, err := strconv.ParseFloat(r, 64)
		if err != nil || f < prev {
			return false
		}
		prev = f
	}
	return true
}
