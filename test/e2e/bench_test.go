package e2e

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/bench"
	"github.com/ebbdb/ebb/internal/clock"
)

// The benchmarks run each operation against a fresh Ebb and against the
// ceiling stub (internal/bench), side by side:
//
//	go test -bench . -run '^$' ./test/e2e/
//	go test -bench 'PointRead/ebb' -run '^$' -cpuprofile cpu.out ./test/e2e/
//
// Ebb runs on durable Pebble in a temporary directory (every write waits
// for its WAL fsync) unless -ebb.memory is given.
var benchMemory = flag.Bool("ebb.memory", false, "benchmarks: run Ebb on in-memory storage instead of durable Pebble")

// preloaded is how many 1 KB items reads, upserts and pages work on.
const preloaded = 1000

func BenchmarkPointRead(b *testing.B) {
	sideBySide(b, preloaded, false, func(f *bench.Fixture) func(context.Context, int) error { return f.Read })
}

func BenchmarkUpsert(b *testing.B) {
	sideBySide(b, preloaded, true, func(f *bench.Fixture) func(context.Context, int) error { return f.Upsert })
}

func BenchmarkCreate(b *testing.B) {
	sideBySide(b, 0, true, func(f *bench.Fixture) func(context.Context, int) error {
		return func(ctx context.Context, _ int) error { return f.Create(ctx) }
	})
}

// BenchmarkReadFeedPage reads the first page of SELECT * FROM c in one
// partition: 100 items of 1 KB.
func BenchmarkReadFeedPage(b *testing.B) {
	sideBySide(b, preloaded, false, func(f *bench.Fixture) func(context.Context, int) error {
		return func(ctx context.Context, _ int) error { return f.FeedPage(ctx) }
	})
}

// sideBySide runs op sequentially through the SDK against Ebb ("ebb")
// and against the stub ("ceiling"), after loading preload items, and
// reports throughput and latency percentiles besides ns/op. A writing
// op on durable storage also runs against the stub that syncs every
// write ("durable-ceiling").
func sideBySide(b *testing.B, preload int, writes bool, op func(*bench.Fixture) func(context.Context, int) error) {
	type target struct {
		name  string
		start func(testing.TB) string
	}
	targets := []target{{"ebb", startBenchEbb}, {"ceiling", startCeiling}}
	if writes && !*benchMemory {
		targets = append(targets, target{"durable-ceiling", startDurableCeiling})
	}
	for _, tg := range targets {
		b.Run(tg.name, func(b *testing.B) {
			ctx := context.Background()
			endpoint := tg.start(b)
			client, closeIdle, err := bench.NewClient(endpoint)
			if err != nil {
				b.Fatal(err)
			}
			// Cleanups run last-first: the client's connection closes
			// before the server shuts down, so shutdown does not wait.
			b.Cleanup(closeIdle)
			f, err := bench.NewFixture(ctx, client, "bench")
			if err != nil {
				b.Fatal(err)
			}
			if err := f.Load(ctx, preload, 8); err != nil {
				b.Fatal(err)
			}
			run := op(f)
			for i := range 100 { // warm up: connection, caches
				if err := run(ctx, i); err != nil {
					b.Fatal(err)
				}
			}
			// Per-operation latency on the monotonic clock; b.Loop
			// excludes everything above from the timing.
			clk := clock.NewSystem()
			var rec bench.Recorder
			i := 0
			for b.Loop() {
				t0 := clk.Elapsed()
				if err := run(ctx, i); err != nil {
					b.Fatal(err)
				}
				rec.Add(clk.Elapsed() - t0)
				i++
			}
			st := rec.Stats(b.Elapsed())
			b.ReportMetric(st.OpsPerSec(), "ops/s")
			b.ReportMetric(float64(st.P50)/float64(time.Microsecond), "p50-µs")
			b.ReportMetric(float64(st.P99)/float64(time.Microsecond), "p99-µs")
		})
	}
}

// startBenchEbb starts Ebb as `ebb bench` does: system clock, durable
// Pebble in a temporary directory unless -ebb.memory.
func startBenchEbb(tb testing.TB) string {
	tb.Helper()
	srv, err := bench.StartEbb(context.Background(), tb.TempDir(), *benchMemory)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv.URL
}

// startCeiling starts the stub that stores nothing, served like Ebb.
func startCeiling(tb testing.TB) string {
	tb.Helper()
	stub, err := bench.StartStub()
	if err != nil {
		tb.Fatal(err)
	}
	return closeStub(tb, stub)
}

// startDurableCeiling starts the stub that syncs every write to a log.
func startDurableCeiling(tb testing.TB) string {
	tb.Helper()
	stub, err := bench.StartDurableStub(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return closeStub(tb, stub)
}

// closeStub closes stub when the benchmark ends, checking that it knew
// every request, and returns its URL.
func closeStub(tb testing.TB, stub *bench.Stub) string {
	tb.Helper()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := stub.Close(ctx); err != nil {
			tb.Error(err)
		}
		if n, first := stub.Unexpected(); n > 0 {
			tb.Errorf("the stub answered %d unexpected requests with 404, first %s", n, first)
		}
	})
	return stub.URL
}
