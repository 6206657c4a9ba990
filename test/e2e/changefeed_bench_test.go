package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/server"
)

// Change feed and batch benchmarks through the Go SDK, against Ebb on
// durable Pebble (every commit waits for its fsync) unless -ebb.memory:
//
//	go test -bench 'Batch100|Single100|ChangeFeedDrain' -run '^$' ./test/e2e/

func startBench(b *testing.B) *env {
	b.Helper()
	if *benchMemory {
		return startWith(b, server.Config{Memory: true})
	}
	return startWith(b, server.Config{DataDir: b.TempDir()})
}

var benchPad = strings.Repeat("x", 1000)

func benchItem(id, pk string) []byte {
	return []byte(`{"id":"` + id + `","pk":"` + pk + `","pad":"` + benchPad + `"}`)
}

// BenchmarkBatch100 creates 100 1 KB items per operation in one
// transactional batch: one request, one storage transaction, one fsync.
func BenchmarkBatch100(b *testing.B) {
	e := startBench(b)
	c := e.container(b, pkProps("b100", "/pk"))
	p := azcosmos.NewPartitionKeyString("p")
	n := 0
	for b.Loop() {
		batch := c.NewTransactionalBatch(p)
		for range 100 {
			n++
			batch.CreateItem(benchItem(strconv.Itoa(n), "p"), nil)
		}
		resp, err := c.ExecuteTransactionalBatch(e.ctx, batch, nil)
		if err != nil || !resp.Success {
			b.Fatalf("batch: %v", err)
		}
	}
	b.ReportMetric(100*float64(b.N)/b.Elapsed().Seconds(), "items/s")
}

// BenchmarkSingle100 creates the same 100 items per operation with 100
// sequential CreateItem calls, for comparison with BenchmarkBatch100.
func BenchmarkSingle100(b *testing.B) {
	e := startBench(b)
	c := e.container(b, pkProps("s100", "/pk"))
	p := azcosmos.NewPartitionKeyString("p")
	n := 0
	for b.Loop() {
		for range 100 {
			n++
			if _, err := c.CreateItem(e.ctx, p, benchItem(strconv.Itoa(n), "p"), nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(100*float64(b.N)/b.Elapsed().Seconds(), "items/s")
}

// BenchmarkChangeFeedDrain drains 100,000 changes (1 KB items, loaded in
// batches) with the SDK's change feed pager in pages of 1,000.
func BenchmarkChangeFeedDrain(b *testing.B) {
	const changes = 100_000
	e := startBench(b)
	c := e.container(b, pkProps("drain", "/pk"))
	for i := 0; i < changes; i += 100 {
		pk := "p" + strconv.Itoa(i/100%50)
		batch := c.NewTransactionalBatch(azcosmos.NewPartitionKeyString(pk))
		for j := i; j < i+100; j++ {
			batch.CreateItem(benchItem(strconv.Itoa(j), pk), nil)
		}
		if resp, err := c.ExecuteTransactionalBatch(e.ctx, batch, nil); err != nil || !resp.Success {
			b.Fatalf("load: %v", err)
		}
	}
	ranges, err := c.ReadFeedRanges(e.ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		opts := azcosmos.ChangeFeedOptions{FeedRange: &ranges[0], MaxItemCount: 1000}
		n := 0
		for {
			resp, err := c.ReadChangeFeed(e.ctx, &opts)
			if err != nil {
				b.Fatal(err)
			}
			if resp.Count == 0 {
				break
			}
			n += resp.Count
			token := resp.ContinuationToken
			opts.Continuation, opts.FeedRange = &token, nil
		}
		if n != changes {
			b.Fatalf("drained %d changes, want %d", n, changes)
		}
	}
	b.ReportMetric(changes*float64(b.N)/b.Elapsed().Seconds(), "items/s")
}
