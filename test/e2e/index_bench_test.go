package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/bench"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/server"
)

// Query benchmarks through the Go SDK (the engine-level ones are in
// internal/engine/index_bench_test.go):
//
//	go test -bench 'Query' -run '^$' ./test/e2e/
//
// Items are loaded through the engine (transactional batches), not the
// SDK, which would take minutes; the timed part is all SDK. Besides
// ns/op, each reports the server's own time per query from the query
// metrics (server-ms: totalExecutionTimeInMs summed over the pages).

const (
	queryItems      = 100_000
	queryPartitions = 100
	queryGroup      = 50 // items per value of x
)

// queryDoc is item i of the 100,000-item benchmarks: about 400 bytes
// stored.
func queryDoc(i int) string {
	return fmt.Sprintf(`{"id":"item-%06d","pk":"p%02d","x":%d,"y":%d,"cat":"c%03d","name":"item number %d","tags":["t%d","u%d"],"pad":"%s"}`,
		i, i%queryPartitions, i/queryGroup, i*7919%queryItems, i%1000, i, i%10, i%7, strings.Repeat("z", 150))
}

// queryBench is a running Ebb with a client.
type queryBench struct {
	srv    *server.Server
	client *azcosmos.Client
	db     *azcosmos.DatabaseClient
}

func startQueryBench(b *testing.B) *queryBench {
	b.Helper()
	ctx := context.Background()
	srv, err := bench.StartEbb(ctx, b.TempDir(), *benchMemory)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	// The suite's client, whose planCtx queries go to the partition key
	// range as a plan-aware SDK sends them (the cross-partition ORDER BY
	// benchmark needs it; see planAwareKey).
	transport := insecureTransport()
	b.Cleanup(transport.CloseIdleConnections)
	client := newClient(b, srv.URL, transport)
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		b.Fatal(err)
	}
	db, _ := client.NewDatabase("db")
	return &queryBench{srv: srv, client: client, db: db}
}

// container creates a container partitioned on /pk with the given
// indexing policy (nil: the default).
func (qb *queryBench) container(b *testing.B, id string, policy *azcosmos.IndexingPolicy) *azcosmos.ContainerClient {
	b.Helper()
	props := azcosmos.ContainerProperties{ID: id, IndexingPolicy: policy,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Kind: azcosmos.PartitionKeyKindHash, Version: 2}}
	if _, err := qb.db.CreateContainer(context.Background(), props, nil); err != nil {
		b.Fatal(err)
	}
	c, _ := qb.db.NewContainer(id)
	return c
}

// load writes docs (each with its "pk") through the engine in batches of
// 100 per partition key.
func (qb *queryBench) load(b *testing.B, coll string, n int, doc func(i int) string, pkOf func(i int) string) {
	b.Helper()
	byPK := map[string][]string{}
	var order []string
	for i := 0; i < n; i++ {
		pk := pkOf(i)
		if _, ok := byPK[pk]; !ok {
			order = append(order, pk)
		}
		byPK[pk] = append(byPK[pk], doc(i))
	}
	ctx := context.Background()
	for _, pk := range order {
		docs := byPK[pk]
		for start := 0; start < len(docs); start += engine.MaxBatchOperations {
			var body strings.Builder
			body.WriteByte('[')
			for j, d := range docs[start:min(len(docs), start+engine.MaxBatchOperations)] {
				if j > 0 {
					body.WriteByte(',')
				}
				body.WriteString(`{"operationType":"Create","resourceBody":` + d + `}`)
			}
			body.WriteByte(']')
			ref := engine.ItemRef{DB: "db", Coll: coll, PK: `["` + pk + `"]`, HasPK: true}
			res, err := qb.srv.Engine.ExecuteBatch(ctx, ref, []byte(body.String()), engine.BatchOptions{Atomic: true})
			if err != nil || res.Failed {
				b.Fatalf("load: %v", err)
			}
		}
	}
}

// drain runs a query through the SDK to its end and returns the rows
// and the server's execution time summed over the pages.
func drain(b *testing.B, c *azcosmos.ContainerClient, q string, pk azcosmos.PartitionKey, opts *azcosmos.QueryOptions) (rows int, server time.Duration) {
	pager := c.NewQueryItemsPager(q, pk, opts)
	for pager.More() {
		page, err := pager.NextPage(context.WithValue(context.Background(), planAwareKey{}, true))
		if err != nil {
			b.Fatal(err)
		}
		rows += len(page.Items)
		if page.QueryMetrics != nil {
			for _, kv := range strings.Split(*page.QueryMetrics, ";") {
				if v, ok := strings.CutPrefix(kv, "totalExecutionTimeInMs="); ok {
					ms, _ := strconv.ParseFloat(v, 64)
					server += time.Duration(ms * float64(time.Millisecond))
				}
			}
		}
	}
	return rows, server
}

// timed runs op in b.Loop and reports the mean server time and the
// client-side p50.
func timed(b *testing.B, op func(i int) time.Duration) {
	clk := clock.NewSystem()
	var rec bench.Recorder
	var server time.Duration
	i := 0
	for b.Loop() {
		t0 := clk.Elapsed()
		server += op(i)
		rec.Add(clk.Elapsed() - t0)
		i++
	}
	st := rec.Stats(b.Elapsed())
	b.ReportMetric(float64(server)/float64(i)/float64(time.Millisecond), "server-ms")
	b.ReportMetric(float64(st.P50)/float64(time.Millisecond), "p50-ms")
}

// BenchmarkIndexedEqualityQuery: SELECT * FROM c WHERE c.x = @x across
// partitions over 100,000 items, 50 rows per query, on the default
// policy (index) and on indexingMode none (scan).
func BenchmarkIndexedEqualityQuery(b *testing.B) {
	qb := startQueryBench(b)
	containers := map[string]*azcosmos.ContainerClient{
		"index": qb.container(b, "index", nil),
		"scan":  qb.container(b, "scan", &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeNone}),
	}
	for _, name := range []string{"index", "scan"} {
		qb.load(b, name, queryItems, queryDoc, func(i int) string { return fmt.Sprintf("p%02d", i%queryPartitions) })
	}
	for _, name := range []string{"index", "scan"} {
		b.Run(name, func(b *testing.B) {
			c := containers[name]
			timed(b, func(i int) time.Duration {
				x := i * 37 % (queryItems / queryGroup)
				n, server := drain(b, c, "SELECT * FROM c WHERE c.x = @x", azcosmos.NewPartitionKey(),
					&azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@x", Value: x}}})
				if n != queryGroup {
					b.Fatalf("x=%d: %d rows", x, n)
				}
				return server
			})
		})
	}
}

// BenchmarkOrderByTop10Query: SELECT TOP 10 * FROM c ... ORDER BY c.y
// across partitions over 100,000 items (the engine benchmark
// BenchmarkOrderByTop10 states its peak memory): descending and with a
// WHERE requiring y the index on y serves it reading 11 items; ascending
// without one, every item is read to find those lacking y.
func BenchmarkOrderByTop10Query(b *testing.B) {
	qb := startQueryBench(b)
	c := qb.container(b, "c", nil)
	qb.load(b, "c", queryItems, queryDoc, func(i int) string { return fmt.Sprintf("p%02d", i%queryPartitions) })
	for _, bc := range []struct{ name, query string }{
		{"desc", "SELECT TOP 10 * FROM c ORDER BY c.y DESC"},
		{"asc-defined", "SELECT TOP 10 * FROM c WHERE c.y >= 0 ORDER BY c.y"},
		{"asc", "SELECT TOP 10 * FROM c ORDER BY c.y"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			timed(b, func(int) time.Duration {
				n, server := drain(b, c, bc.query, azcosmos.NewPartitionKey(), nil)
				if n != 10 {
					b.Fatalf("%d rows", n)
				}
				return server
			})
		})
	}
}

// BenchmarkSelectStarQuery streams SELECT * FROM c over 5,000 items in
// one partition, to the end: items of 1 KB (the benchmark suite's) and
// of about 400 bytes (the 100,000-item benchmarks'), in pages of up to
// 4 MB (PageSizeHint -1, the SDK's "as many as the server likes") and of
// 100 items.
func BenchmarkSelectStarQuery(b *testing.B) {
	qb := startQueryBench(b)
	const n = 5000
	items := []struct {
		name string
		doc  func(i int) string
	}{
		{"1kb", func(i int) string { return string(bench.Item(bench.ItemID(i), 0)) }},
		{"400b", func(i int) string {
			return strings.Replace(queryDoc(i), fmt.Sprintf(`"pk":"p%02d"`, i%queryPartitions), `"pk":"`+bench.PartitionKey+`"`, 1)
		}},
	}
	pk := azcosmos.NewPartitionKeyString(bench.PartitionKey)
	for _, it := range items {
		c := qb.container(b, it.name, nil)
		qb.load(b, it.name, n, it.doc, func(int) string { return bench.PartitionKey })
		for _, tc := range []struct {
			name string
			hint int32
		}{{"pages-4mb", -1}, {"pages-100", 100}} {
			b.Run(it.name+"/"+tc.name, func(b *testing.B) {
				timed(b, func(int) time.Duration {
					rows, server := drain(b, c, "SELECT * FROM c", pk, &azcosmos.QueryOptions{PageSizeHint: tc.hint})
					if rows != n {
						b.Fatalf("%d rows", rows)
					}
					return server
				})
			})
		}
	}
}

// BenchmarkUpsertIndexing: the write cost of the default index policy
// through the SDK: UpsertItem of a 1 KB item over one of 1,000 existing
// items ("n" changes every time, so its entry moves), on the default
// policy and on indexingMode none.
func BenchmarkUpsertIndexing(b *testing.B) {
	for _, tc := range []struct {
		name   string
		policy *azcosmos.IndexingPolicy
	}{{"default", nil}, {"none", &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeNone}}} {
		b.Run(tc.name, func(b *testing.B) {
			qb := startQueryBench(b)
			c := qb.container(b, "c", tc.policy)
			qb.load(b, "c", 1000, func(i int) string { return string(bench.Item(bench.ItemID(i), 0)) }, func(int) string { return bench.PartitionKey })
			pk := azcosmos.NewPartitionKeyString(bench.PartitionKey)
			ctx := context.Background()
			upsert := func(i int) {
				if _, err := c.UpsertItem(ctx, pk, bench.Item(bench.ItemID(i%1000), i), nil); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 100 {
				upsert(i)
			}
			clk := clock.NewSystem()
			var rec bench.Recorder
			i := 0
			for b.Loop() {
				t0 := clk.Elapsed()
				upsert(i)
				rec.Add(clk.Elapsed() - t0)
				i++
			}
			st := rec.Stats(b.Elapsed())
			b.ReportMetric(st.OpsPerSec(), "ops/s")
			b.ReportMetric(float64(st.P50)/float64(time.Microsecond), "p50-µs")
		})
	}
}
