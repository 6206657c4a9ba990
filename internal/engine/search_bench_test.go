package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/clock"
)

// BenchmarkSearch measures exact vector search and full-text ranking,
// through the engine, over items of one container: top 10 by
// VectorDistance over 10,000 vectors of 768 float32 dimensions (or as
// many as EBB_BENCH_VECTORS says), and top 10 by FullTextScore over as
// many short texts, each beside a plain scan of the same items (SELECT
// COUNT) for scale.
func BenchmarkSearch(b *testing.B) {
	const dims = 768
	items := 10000
	if n, err := strconv.Atoi(os.Getenv("EBB_BENCH_VECTORS")); err == nil && n > 0 {
		items = n
	}
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
	rng := rand.New(rand.NewPCG(1, 2))
	vector := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.Float64()*2 - 1)
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
			doc, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("d%05d", i), "pk": "p", "v": vector(), "t": strings.Join(t, " ")})
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
	// they rank by into memory; the metric is the first.
	searches := func(b *testing.B, query string) {
		wall := clock.NewSystem()
		if rows := allRows(b, e, ref, query); rows != 10 {
			b.Fatalf("%d rows", rows)
		}
		first := wall.Elapsed()
		run(b, query, 10)
		b.ReportMetric(float64(first.Milliseconds()), "first-search-ms")
	}
	b.Run("vector-top10-exact", func(b *testing.B) { searches(b, vectorQuery) })
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
	b.Run("fulltext-top10", func(b *testing.B) { searches(b, textQuery) })
}

// BenchmarkVectorIngest writes items of one 768-dimension vector in
// transactional batches of 100, into a container with a vector
// embedding policy (and, for scale, into one without): the vectors
// stored apart cost what parsing them costs.
func BenchmarkVectorIngest(b *testing.B) {
	const dims = 768
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, policy := range []string{"with-policy", "without-policy"} {
		b.Run(policy, func(b *testing.B) {
			e, _ := newTestEngine(b)
			body := `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"excludedPaths":[{"path":"/v/*"}]}`
			if policy == "with-policy" {
				body += `,"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"cosine","dimensions":768}]}`
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
					doc, _ := json.Marshal(map[string]any{"id": fmt.Sprint(n), "pk": "p", "v": v})
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
