package engine

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// The index benchmarks run on the engine directly (in-memory Pebble), so
// the figures are Ebb's own work without HTTP, TLS or the SDK:
//
//	go test -bench 'Index' -run '^$' ./internal/engine/
//
// test/e2e/index_bench_test.go measures the same queries through the Go
// SDK.

const (
	// benchItems is how many items the query benchmarks load, spread over
	// benchPartitions logical partitions.
	benchItems      = 100_000
	benchPartitions = 100
	// benchGroup is how many items share one value of "x": an equality on
	// x returns this many rows.
	benchGroup = 50
)

// benchDoc is item i of the query benchmarks: about 400 bytes stored.
func benchDoc(i int) string {
	return fmt.Sprintf(`{"id":"item-%06d","pk":"p%02d","x":%d,"y":%d,"cat":"c%03d","name":"item number %d","tags":["t%d","u%d"],"pad":"%s"}`,
		i, i%benchPartitions, i/benchGroup, i*7919%benchItems, i%1000, i, i%10, i%7, strings.Repeat("z", 150))
}

// loadBenchItems writes the query benchmark's items in transactional
// batches of 100, one partition key per batch.
func loadBenchItems(b *testing.B, e *Engine, coll string) {
	b.Helper()
	ctx := context.Background()
	byPK := make([][]string, benchPartitions)
	for i := 0; i < benchItems; i++ {
		byPK[i%benchPartitions] = append(byPK[i%benchPartitions], benchDoc(i))
	}
	for p, docs := range byPK {
		for start := 0; start < len(docs); start += MaxBatchOperations {
			var body strings.Builder
			body.WriteByte('[')
			for j, d := range docs[start:min(len(docs), start+MaxBatchOperations)] {
				if j > 0 {
					body.WriteByte(',')
				}
				body.WriteString(`{"operationType":"Create","resourceBody":` + d + `}`)
			}
			body.WriteByte(']')
			ref := ItemRef{DB: "db", Coll: coll, PK: fmt.Sprintf(`["p%02d"]`, p), HasPK: true}
			res, err := e.ExecuteBatch(ctx, ref, []byte(body.String()), BatchOptions{Atomic: true})
			if err != nil || res.Failed {
				b.Fatalf("load: %v", err)
			}
		}
	}
}

// BenchmarkIndexWrite measures the write cost of the default index
// policy: an upsert over one of 1,000 existing items, with "/*" indexed
// and with indexingMode none, for the benchmark suite's 1 KB item (a few
// properties and a long string) and for a 20-property item of about 300 bytes.
func BenchmarkIndexWrite(b *testing.B) {
	docs := map[string]func(id string, n int) []byte{
		"1kb": benchItem,
		"20props": func(id string, n int) []byte {
			var s strings.Builder
			s.WriteString(`{"id":"` + id + `","pk":"bench"`)
			for k := 0; k < 18; k++ {
				fmt.Fprintf(&s, `,"f%d":%d`, k, n*31+k)
			}
			s.WriteString(`,"name":"n` + strconv.Itoa(n) + `"}`)
			return []byte(s.String())
		},
	}
	for _, doc := range []string{"1kb", "20props"} {
		for _, mode := range []string{"default", "none"} {
			b.Run(doc+"/"+mode, func(b *testing.B) {
				e, _ := newTestEngine(b)
				policy := ""
				if mode == "none" {
					policy = `,"indexingPolicy":{"indexingMode":"none"}`
				}
				mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}`+policy+`}`)
				ref := ItemRef{DB: "db", Coll: "c", PK: `["bench"]`, HasPK: true}
				ctx := context.Background()
				for i := 0; i < 1000; i++ {
					if _, err := e.WriteItem(ctx, ref, Upsert, docs[doc](benchItemID(i), 0), ""); err != nil {
						b.Fatal(err)
					}
				}
				i := 0
				for b.Loop() {
					i++
					if _, err := e.WriteItem(ctx, ref, Upsert, docs[doc](benchItemID(i%1000), i), ""); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchItem is the benchmark suite's item (internal/bench, which imports
// this package): 1,024 bytes, a version number and a long string.
func benchItem(id string, n int) []byte {
	s := `{"id":"` + id + `","pk":"bench","n":` + strconv.Itoa(n) + `,"payload":"`
	return []byte(s + strings.Repeat("q", 1024-len(s)-2) + `"}`)
}

func benchItemID(i int) string { return fmt.Sprintf("item-%06d", i) }

// benchEngine is one loaded engine shared by the query benchmarks (the
// load takes seconds).
var benchEngine struct {
	e *Engine
}

func loadedEngine(b *testing.B) *Engine {
	if benchEngine.e == nil {
		e := newBenchEngine(b)
		mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
		mustCreate(b, e, "db", "n", `{"id":"n","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"indexingMode":"none"}}`)
		loadBenchItems(b, e, "c")
		loadBenchItems(b, e, "n")
		benchEngine.e = e
	}
	return benchEngine.e
}

// newBenchEngine opens an engine that lives for the whole benchmark
// binary (the loaded data is shared between benchmarks).
func newBenchEngine(b *testing.B) *Engine {
	store, err := pebble.OpenMemory()
	if err != nil {
		b.Fatal(err)
	}
	e, err := Open(context.Background(), store, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkIndexedEquality runs SELECT * FROM c WHERE c.x = @x across
// partitions over 100,000 items, 50 of which match, on the default
// policy ("index") and on indexingMode none ("scan"). One op is one
// query page holding all 50 rows: the server-side time of the query.
func BenchmarkIndexedEquality(b *testing.B) {
	e := loadedEngine(b)
	for _, tc := range []struct{ name, coll string }{{"index", "c"}, {"scan", "n"}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			i := 0
			for b.Loop() {
				x := i * 37 % (benchItems / benchGroup)
				i++
				res, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: tc.coll},
					Body: queryBody("SELECT * FROM c WHERE c.x = @x", "@x", x), MaxItemCount: -1, CrossPartition: true, RangeID: "0"})
				if err != nil || len(res.Rows()) != benchGroup || res.Continuation != "" {
					b.Fatalf("x=%d: %d rows, %v", x, len(res.Rows()), err)
				}
			}
		})
	}
}

// BenchmarkOrderByTop10 runs SELECT TOP 10 * FROM c ... ORDER BY c.y
// across partitions over 100,000 items and reports the peak heap the
// query adds over the loaded store (sampled every 100 µs with the GC
// running at GOGC=10, so garbage does not pass for live data) next to
// the size of the items it reads. Descending, or with a WHERE requiring
// y, the query reads 11 items from the index on y; ascending without one
// it first reads every item to find those lacking y (they sort first).
func BenchmarkOrderByTop10(b *testing.B) {
	e := loadedEngine(b)
	for _, bc := range []struct{ name, query, pk string }{
		{"desc", "SELECT TOP 10 * FROM c ORDER BY c.y DESC", ""},
		{"asc-defined", "SELECT TOP 10 * FROM c WHERE c.y >= 0 ORDER BY c.y", ""},
		{"asc", "SELECT TOP 10 * FROM c ORDER BY c.y", ""},
		// One partition of 1,000 items: scanned through the heap.
		{"partition", "SELECT TOP 10 * FROM c ORDER BY c.y DESC", `["p05"]`},
	} {
		b.Run(bc.name, func(b *testing.B) { benchOrderBy(b, e, bc.query, bc.pk) })
	}
}

func benchOrderBy(b *testing.B, e *Engine, query, pk string) {
	ctx := context.Background()
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var peak, base atomic.Uint64
	var loaded int64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base.Store(ms.HeapAlloc)
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			tick := time.NewTicker(100 * time.Microsecond)
			defer tick.Stop()
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > base.Load() && ms.HeapAlloc-base.Load() > peak.Load() {
					peak.Store(ms.HeapAlloc - base.Load())
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
		b.StartTimer()
		res, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: pk, HasPK: pk != ""},
			Body: queryBody(query), MaxItemCount: -1, CrossPartition: true, RangeID: "0"})
		b.StopTimer()
		close(stop)
		<-sampled
		if err != nil || len(res.Rows()) != 10 {
			b.Fatalf("%d rows, %v", len(res.Rows()), err)
		}
		loaded = parseMetric(res.Metrics, "retrievedDocumentSize")
		b.StartTimer()
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(loaded)/(1<<20), "read-MB")
}

// BenchmarkOrderByPaging reads all 100,000 items in ORDER BY c.y DESC
// order in pages of 1,000, each page resuming from its continuation.
func BenchmarkOrderByPaging(b *testing.B) {
	e := loadedEngine(b)
	ctx := context.Background()
	for b.Loop() {
		req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c ORDER BY c.y DESC"), MaxItemCount: 1000, CrossPartition: true, RangeID: "0"}
		n := 0
		for {
			res, err := e.QueryItems(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			n += len(res.Rows())
			if res.Continuation == "" {
				break
			}
			req.Continuation = res.Continuation
		}
		if n != benchItems {
			b.Fatalf("%d rows", n)
		}
	}
}

func parseMetric(metrics, name string) int64 {
	for _, kv := range strings.Split(metrics, ";") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}
