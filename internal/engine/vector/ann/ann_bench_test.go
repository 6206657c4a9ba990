package ann

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmarks index vectors of 768 dimensions under Cosine, the
// service's default distance: 2,000 of them, or as many as
// EBB_BENCH_ANN_VECTORS says (the service's scale is 100,000). Each
// runs on two sets: embeddings, shaped like real ones, and gaussian,
// the hard case.
const (
	benchDims    = 768
	benchQueries = 100
)

var benchShapes = []struct {
	name  string
	shape shape
}{{"embeddings", embeddings}, {"gaussian", gaussian}}

// benchSet is one shape's vectors, generated once for all benchmarks.
type benchSet struct {
	once  sync.Once
	data  dataset
	exact [][]uint32 // each query's exact top 10, computed when first needed
}

var benchSets = make([]benchSet, len(benchShapes))

func benchData(i int) *benchSet {
	set := &benchSets[i]
	set.once.Do(func() {
		n := 2000
		if v, err := strconv.Atoi(os.Getenv("EBB_BENCH_ANN_VECTORS")); err == nil && v > 0 {
			n = v
		}
		set.data = benchShapes[i].shape.generate(29, n, benchQueries, benchDims)
	})
	return set
}

// buildConcurrently adds the vectors from goroutines goroutines.
func buildConcurrently(metric Metric, vectors [][]float32, goroutines int) *Index {
	x := New(len(vectors[0]), metric, Config{Seed: 1})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(vectors)); i = next.Add(1) - 1 {
				x.Add(uint32(i), vectors[i])
			}
		})
	}
	wg.Wait()
	return x
}

// BenchmarkBuild builds the index from 2 goroutines, as many as the
// service's smallest machine has cores.
func BenchmarkBuild(b *testing.B) {
	for i, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			vectors := benchData(i).data.vectors
			for b.Loop() {
				buildConcurrently(Cosine, vectors, 2)
			}
			b.ReportMetric(float64(len(vectors)*b.N)/b.Elapsed().Seconds(), "vectors/s")
		})
	}
}

// BenchmarkSearch measures top 10 searches with ef 100: their latency
// (also as percentiles, which the mean hides), recall@10 against an
// exact scan, and the index's memory.
func BenchmarkSearch(b *testing.B) {
	for i, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			set := benchData(i)
			ds := set.data
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			x := buildConcurrently(Cosine, ds.vectors, 2)
			runtime.GC()
			runtime.ReadMemStats(&after)
			bytesPerVector := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(ds.vectors))

			if set.exact == nil {
				for _, q := range ds.queries {
					set.exact = append(set.exact, exactTop(Cosine, ds.vectors, q, 10, nil))
				}
			}
			var sum float64
			for i, q := range ds.queries {
				sum += recall(set.exact[i], x.Search(q, 10, 100))
			}
			// The percentiles come from passes of their own, so that a
			// run of one iteration (-benchtime 1x) reports them too.
			var took []time.Duration
			for range 5 {
				for _, q := range ds.queries {
					start := time.Now()
					x.Search(q, 10, 100)
					took = append(took, time.Since(start))
				}
			}
			slices.Sort(took)

			for i := 0; b.Loop(); i++ {
				x.Search(ds.queries[i%len(ds.queries)], 10, 100)
			}
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(sum/float64(len(ds.queries)), "recall@10")
			b.ReportMetric(bytesPerVector, "bytes/vector")
			runtime.KeepAlive(x)
		})
	}
}
