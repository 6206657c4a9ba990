package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// BenchmarkSearch measures vector search and full-text ranking, through
// the engine, over items of one container: top 10 by VectorDistance
// over 10,000 vectors of 768 float32 dimensions (or as many as
// EBB_BENCH_VECTORS says), exact (in one partition) and from the diskANN
// graph (across partitions, with its recall@10 against exact), and top
// 10 by FullTextScore over as many short texts, each beside a plain scan
// of the same items (SELECT COUNT) for scale; and the exact top 10 of a
// filter on one item in a hundred. The vectors are drawn around 64
// random centres, as embeddings cluster by topic.
func BenchmarkSearch(b *testing.B) {
	const dims = 768
	items := 10000
	if n, err := strconv.Atoi(os.Getenv("EBB_BENCH_VECTORS")); err == nil && n > 0 {
		items = n
	}
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
	rng := rand.New(rand.NewPCG(1, 2))
	centres := make([][]float32, 64)
	for c := range centres {
		centres[c] = make([]float32, dims)
		for i := range centres[c] {
			centres[c][i] = float32(rng.Float64()*2 - 1)
		}
	}
	vector := func() []float32 {
		c, v := centres[rng.IntN(len(centres))], make([]float32, dims)
		for i := range v {
			v[i] = c[i] + float32(rng.NormFloat64()*0.3)
		}
		return v
	}
	words := strings.Fields("search engine vector index query ranking score document text token stem word corpus relevance retrieval")
	e, _ := newTestEngine(b)
	mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"cosine","dimensions":768}]},`+
		`"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t"}]},`+
		`"indexingPolicy":{"excludedPaths":[{"path":"/v/*"}],"vectorIndexes":[{"path":"/v","type":"diskANN"}],"fullTextIndexes":[{"path":"/t"}]}}`)
	for start := 0; start < items; start += MaxBatchOperations {
		var ops []string
		for i := start; i < min(items, start+MaxBatchOperations); i++ {
			var t []string
			for range 8 {
				t = append(t, words[rng.IntN(len(words))])
			}
			doc, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("d%05d", i), "pk": "p", "n": i % 100, "v": vector(), "t": strings.Join(t, " ")})
			ops = append(ops, `{"operationType":"Create","resourceBody":`+string(doc)+`}`)
		}
		if _, err := e.ExecuteBatch(ctx, ref, []byte("["+strings.Join(ops, ",")+"]"), BatchOptions{Atomic: true}); err != nil {
			b.Fatal(err)
		}
	}
	q, _ := json.Marshal(vector())
	run := func(b *testing.B, text string, want int) {
		for b.Loop() {
			if rows := allRows(b, e, ref, text); rows != want {
				b.Fatalf("%d rows, want %d", rows, want)
			}
		}
	}
	b.Run("count-scan", func(b *testing.B) { run(b, "SELECT VALUE COUNT(1) FROM c", 1) })
	vectorQuery := "SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, " + string(q) + ")"
	textQuery := "SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'vector', 'ranking')"
	// searches measures the searches after the first, which reads what
	// they rank by into memory; the metric is the first, from storage.
	searches := func(b *testing.B, query string) {
		// As after a restart: nothing read into memory yet.
		e.vecSets = newSizedCache[vectorSetKey, *vectorSet](maxCachedFloats)
		e.textIndexes = newSizedCache[textIndexKey, *textIndex](maxCachedTextDocs)
		wall := clock.NewSystem()
		if rows := allRows(b, e, ref, query); rows != 10 {
			b.Fatalf("%d rows", rows)
		}
		first := wall.Elapsed()
		run(b, query, 10)
		b.ReportMetric(float64(first.Milliseconds()), "first-search-ms")
	}
	b.Run("vector-top10-exact", func(b *testing.B) { searches(b, vectorQuery) })
	b.Run("vector-top10-diskann", func(b *testing.B) { approximateSearches(b, e, vector) })
	// A filter on one item in a hundred, which the range index serves,
	// and the same filter where no index can (c.n + 0).
	filtered := "SELECT TOP 10 c.id FROM c WHERE c.n = 7 ORDER BY VectorDistance(c.v, " + string(q) + ")"
	b.Run("vector-top10-filtered", func(b *testing.B) { run(b, filtered, 10) })
	b.Run("vector-top10-filtered-unindexed", func(b *testing.B) { run(b, strings.Replace(filtered, "c.n =", "c.n + 0 =", 1), 10) })
	// afterAWrite measures searches that each follow a write: what is in
	// memory takes in the item written, not all of them again.
	afterAWrite := func(b *testing.B, query string, doc func() map[string]any) {
		allRows(b, e, ref, query) // read whole, once
		n := 0
		for b.Loop() {
			d := doc()
			d["id"], d["pk"] = fmt.Sprintf("w%d", n%50), "p"
			n++
			body, _ := json.Marshal(d)
			if _, err := e.WriteItem(ctx, ref, Upsert, body, ""); err != nil {
				b.Fatal(err)
			}
			if rows := allRows(b, e, ref, query); rows != 10 {
				b.Fatalf("%d rows", rows)
			}
		}
	}
	b.Run("vector-top10-after-a-write", func(b *testing.B) {
		afterAWrite(b, vectorQuery, func() map[string]any { return map[string]any{"v": vector(), "t": "vector"} })
	})
	b.Run("fulltext-top10-after-a-write", func(b *testing.B) {
		afterAWrite(b, textQuery, func() map[string]any { return map[string]any{"t": "vector ranking index"} })
	})
	// Each ranking after a delete, which the index takes in from the log
	// of removals rather than being read whole again.
	b.Run("fulltext-top10-after-a-delete", func(b *testing.B) {
		allRows(b, e, ref, textQuery)
		n := 0
		for b.Loop() {
			if _, err := e.DeleteItem(ctx, ItemRef{DB: "db", Coll: "c", ID: fmt.Sprintf("d%05d", n), PK: `["p"]`, HasPK: true}, ""); err != nil {
				b.Fatal(err)
			}
			n++
			if rows := allRows(b, e, ref, textQuery); rows != 10 {
				b.Fatalf("%d rows", rows)
			}
		}
	})
	b.Run("fulltext-top10", func(b *testing.B) { searches(b, textQuery) })
	// A FullTextContains filter of a term in about two items in five, from
	// the index and (the term not a constant) by a scan.
	b.Run("fulltext-contains", func(b *testing.B) { run(b, "SELECT VALUE COUNT(1) FROM c WHERE FullTextContains(c.t, 'corpus')", 1) })
	b.Run("fulltext-contains-scan", func(b *testing.B) {
		run(b, "SELECT VALUE COUNT(1) FROM c WHERE FullTextContains(c.t, 'corpus' || '')", 1)
	})
}

// BenchmarkVectorIngest writes items of one 768-dimension vector and a
// sentence in transactional batches of 100, into a container with a
// vector embedding policy, one with a full-text policy, and (for scale)
// one with neither: the vectors stored apart cost what parsing them
// costs, the full-text entries what analyzing the text costs.
func BenchmarkVectorIngest(b *testing.B) {
	const dims = 768
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	sentence := "Ebb ranks documents by relevance, running the analyzer over each of their words once, when they are written"
	for _, policy := range []string{"with-policy", "with-fulltext-policy", "without-policy"} {
		b.Run(policy, func(b *testing.B) {
			e, _ := newTestEngine(b)
			body := `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"excludedPaths":[{"path":"/v/*"}]}`
			switch policy {
			case "with-policy":
				body += `,"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"cosine","dimensions":768}]}`
			case "with-fulltext-policy":
				body += `,"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t"}]}`
			}
			mustCreate(b, e, "db", "c", body+"}")
			ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
			n := 0
			for b.Loop() {
				var ops []string
				for range MaxBatchOperations {
					v := make([]float32, dims)
					for i := range v {
						v[i] = float32(rng.Float64()*2 - 1)
					}
					doc, _ := json.Marshal(map[string]any{"id": fmt.Sprint(n), "pk": "p", "v": v, "t": sentence})
					ops = append(ops, `{"operationType":"Create","resourceBody":`+string(doc)+`}`)
					n++
				}
				if _, err := e.ExecuteBatch(ctx, ref, []byte("["+strings.Join(ops, ",")+"]"), BatchOptions{Atomic: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "vectors/s")
		})
	}
}

// approximateSearches measures top-10 searches of the diskANN graph
// across partitions, once the graph is built (its build time is a
// metric), and their recall@10 against exact searches of the same
// vectors (bruteForce).
func approximateSearches(b *testing.B, e *Engine, draw func() []float32) {
	queries := make([]string, 50)
	for i := range queries {
		q, _ := json.Marshal(draw())
		queries[i] = string(q)
	}
	search := func(q string, exact bool) []string {
		return queryAcross(b, e, "SELECT TOP 10 VALUE c.id FROM c ORDER BY VectorDistance(c.v, "+q+map[bool]string{true: ", true)", false: ")"}[exact])
	}
	wall := clock.NewSystem()
	for {
		built, err := e.VectorIndexesBuilt(context.Background(), "db", "c")
		if err != nil {
			b.Fatal(err)
		}
		if built {
			break
		}
		tick, _ := wall.After(100 * time.Millisecond)
		<-tick
	}
	build := wall.Elapsed()
	found, want := 0, 0
	for _, q := range queries {
		exact := search(q, true)
		for _, id := range search(q, false) {
			if slices.Contains(exact, id) {
				found++
			}
		}
		want += len(exact)
	}
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := wall.Elapsed()
		if got := search(queries[i%len(queries)], false); len(got) != 10 {
			b.Fatalf("%d rows", len(got))
		}
		took = append(took, wall.Elapsed()-start)
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(found)/float64(want), "recall@10")
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(build.Seconds(), "graph-build-s")
}
