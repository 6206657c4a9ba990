package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// Stats summarize one timed run of a workload.
type Stats struct {
	// Ops is the number of operations completed in Elapsed.
	Ops     int
	Elapsed time.Duration
	// P50 and P99 are latency percentiles over every operation.
	P50, P99 time.Duration
}

// OpsPerSec is the throughput: operations per second of wall time.
func (s Stats) OpsPerSec() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ops) / s.Elapsed.Seconds()
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest sample with at least p% of the
// samples at or below it. It returns 0 for no samples.
// REQUIRES: sorted is in ascending order.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted)) + 0.999999999)
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Recorder collects latency samples. Its zero value is ready; it is not
// safe for concurrent use (each worker has its own).
type Recorder struct {
	samples []time.Duration
}

// Add records one sample.
func (r *Recorder) Add(d time.Duration) { r.samples = append(r.samples, d) }

// Merge adds all of o's samples to r.
func (r *Recorder) Merge(o *Recorder) { r.samples = append(r.samples, o.samples...) }

// Len is the number of samples.
func (r *Recorder) Len() int { return len(r.samples) }

// Stats sorts the samples and returns their count and percentiles, with
// elapsed as the wall time they took.
func (r *Recorder) Stats(elapsed time.Duration) Stats {
	slices.Sort(r.samples)
	return Stats{Ops: len(r.samples), Elapsed: elapsed, P50: Percentile(r.samples, 50), P99: Percentile(r.samples, 99)}
}

// Limit says when a timed run stops: after Count operations if Count > 0,
// else once Duration has elapsed.
type Limit struct {
	Duration time.Duration
	Count    int
}

func (l Limit) String() string {
	if l.Count > 0 {
		return fmt.Sprintf("%d ops", l.Count)
	}
	return l.Duration.String()
}

// Measure runs op on concurrency goroutines until the limit is reached
// and returns the throughput and latency of the operations. Worker w's
// k-th call gets i = w + k*concurrency, so the workers cycle through
// different keys. The first error stops the run and is returned.
func Measure(ctx context.Context, concurrency int, limit Limit, op func(ctx context.Context, i int) error) (Stats, error) {
	var rec Recorder
	elapsed, err := measureInto(ctx, &rec, 0, concurrency, limit, op)
	if err != nil {
		return Stats{}, err
	}
	return rec.Stats(elapsed), nil
}

// measureInto is Measure that adds its samples to rec, numbers the
// operations from first, and returns the wall time it took.
func measureInto(ctx context.Context, rec *Recorder, first, concurrency int, limit Limit, op func(ctx context.Context, i int) error) (time.Duration, error) {
	concurrency = max(1, concurrency)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Measuring real elapsed time is the point here; the monotonic
	// reading of the system clock cannot be moved by a wall-clock step.
	clk := clock.NewSystem()
	var (
		issued atomic.Int64
		wg     sync.WaitGroup
		recs   = make([]Recorder, concurrency)
		errs   = make([]error, concurrency)
	)
	start := clk.Elapsed()
	deadline := start + limit.Duration
	more := func() bool {
		if ctx.Err() != nil {
			return false
		}
		if limit.Count > 0 {
			return issued.Add(1) <= int64(limit.Count)
		}
		return clk.Elapsed() < deadline
	}
	for w := range concurrency {
		wg.Go(func() {
			r := &recs[w]
			for i := first + w; more(); i += concurrency {
				t0 := clk.Elapsed()
				if err := op(ctx, i); err != nil {
					errs[w] = err
					cancel()
					return
				}
				r.Add(clk.Elapsed() - t0)
			}
		})
	}
	wg.Wait()
	elapsed := clk.Elapsed() - start
	for w := range recs {
		if errs[w] != nil {
			return 0, errs[w]
		}
	}
	if err := parent.Err(); err != nil {
		return 0, err
	}
	for w := range recs {
		rec.Merge(&recs[w])
	}
	return elapsed, nil
}

// rounds adds up the timed rounds of one workload against one target.
type rounds struct {
	rec     Recorder
	elapsed time.Duration // the wall time of the rounds so far
	next    int           // the number of the next operation
	perSec  []float64     // each round's throughput
}

// run times one round of op. It collects garbage first, so the round
// starts with none from the other targets or from set-up; it still
// pays for its own.
func (rs *rounds) run(ctx context.Context, concurrency int, limit Limit, op func(ctx context.Context, i int) error) error {
	runtime.GC()
	before := rs.rec.Len()
	elapsed, err := measureInto(ctx, &rs.rec, rs.next, concurrency, limit, op)
	if err != nil {
		return err
	}
	n := rs.rec.Len() - before
	rs.elapsed += elapsed
	rs.next += n
	rs.perSec = append(rs.perSec, float64(n)/elapsed.Seconds())
	return nil
}

// stats are the figures of every round together.
func (rs *rounds) stats() Stats { return rs.rec.Stats(rs.elapsed) }
