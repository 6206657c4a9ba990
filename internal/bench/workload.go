package bench

import (
	"context"
	"fmt"
	"strings"
)

// Workload is one thing the harness times.
type Workload struct {
	// Name is what --workloads selects.
	Name string
	// Title says what one operation is, for the report.
	Title string
	// Concurrency is the number of goroutines sharing one client.
	Concurrency int
	// Preload is how many 1 KB items are loaded before timing.
	Preload int
	// Target is the share of the ceiling's throughput Ebb aims for
	// (0.9 = 90%); 0 means no target. Where two goals have been set for
	// a workload, it is the stricter (8-client reads: 92%, not the
	// harness's first 85%).
	Target float64
	// Writes says the workload writes, so that on durable storage it is
	// also run against the durable ceiling.
	Writes bool
	// Op returns the timed operation on a prepared fixture.
	Op func(f *Fixture) func(ctx context.Context, i int) error
}

// concurrentClients is the number of goroutines of the concurrent
// workloads.
const concurrentClients = 8

// preload is the key set reads and upserts cycle through: enough that
// every operation touches a different item than the last few, and ten
// read-feed pages.
const preload = 1000

// Workloads are all the workloads, in report order.
var Workloads = []Workload{
	{Name: "read", Title: "point read, 1 KB, sequential", Concurrency: 1, Preload: preload, Target: 0.90, Op: read},
	{Name: "upsert", Title: "upsert, 1 KB, sequential", Concurrency: 1, Preload: preload, Target: 0.75, Writes: true, Op: upsert},
	{Name: "read-8", Title: "point read, 1 KB, 8 concurrent", Concurrency: concurrentClients, Preload: preload, Target: 0.92, Op: read},
	{Name: "upsert-8", Title: "upsert, 1 KB, 8 concurrent", Concurrency: concurrentClients, Preload: preload, Target: 0.75, Writes: true, Op: upsert},
	{Name: "feed", Title: "query page, 100 × 1 KB, sequential", Concurrency: 1, Preload: preload, Op: feedPage},
	{Name: "create", Title: "create, 1 KB, sequential", Concurrency: 1, Writes: true, Op: create},
}

// DefaultWorkloads are the workloads Run runs when none are named.
var DefaultWorkloads = []string{"read", "upsert", "read-8", "upsert-8", "feed"}

func read(f *Fixture) func(context.Context, int) error   { return f.Read }
func upsert(f *Fixture) func(context.Context, int) error { return f.Upsert }
func feedPage(f *Fixture) func(context.Context, int) error {
	return func(ctx context.Context, _ int) error { return f.FeedPage(ctx) }
}
func create(f *Fixture) func(context.Context, int) error {
	return func(ctx context.Context, _ int) error { return f.Create(ctx) }
}

// Lookup returns the named workloads in the order given; nil or empty
// names mean DefaultWorkloads.
func Lookup(names []string) ([]Workload, error) {
	if len(names) == 0 {
		names = DefaultWorkloads
	}
	var out []Workload
	for _, name := range names {
		name = strings.TrimSpace(name)
		found := false
		for _, w := range Workloads {
			if w.Name == name {
				out = append(out, w)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown workload %q (known: %s)", name, workloadNames())
		}
	}
	return out, nil
}

func workloadNames() string {
	names := make([]string, len(Workloads))
	for i, w := range Workloads {
		names[i] = w.Name
	}
	return strings.Join(names, ", ")
}
