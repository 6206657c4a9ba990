package bench

import (
	"context"
	"strings"
	"testing"
)

// TestRun runs every workload for a few operations against both targets,
// with the memory and disk figures, and checks the report's shape; it
// asserts nothing about speed.
func TestRun(t *testing.T) {
	for _, memory := range []bool{false, true} {
		t.Run(storageName(memory), func(t *testing.T) {
			names := make([]string, len(Workloads))
			for i, w := range Workloads {
				names[i] = w.Name
			}
			rep, err := Run(context.Background(), Options{
				Limit: Limit{Count: 30}, Memory: memory, Workloads: names,
				TempDir: t.TempDir(), FsyncSamples: 10, RSSItems: 200,
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != len(Workloads) {
				t.Fatalf("got %d results, want %d", len(rep.Results), len(Workloads))
			}
			for _, res := range rep.Results {
				if res.Ebb.Ops != 30 || res.Ceiling.Ops != 30 || res.Ebb.P99 < res.Ebb.P50 || res.Ceiling.P50 <= 0 {
					t.Errorf("%s: ebb %+v, ceiling %+v", res.Workload.Name, res.Ebb, res.Ceiling)
				}
				if lo, hi := res.RatioSpread(); len(res.RoundRatios) != 5 || lo <= 0 || hi < lo {
					t.Errorf("%s: round ratios %v", res.Workload.Name, res.RoundRatios)
				}
			}
			for _, res := range rep.Results {
				if want := res.Workload.Writes && !memory; (res.DurableCeiling != nil) != want {
					t.Errorf("%s: durable ceiling measured = %v, want %v", res.Workload.Name, res.DurableCeiling != nil, want)
				}
			}
			if (rep.Fsync == nil) != memory {
				t.Errorf("fsync measured = %v with memory = %v", rep.Fsync != nil, memory)
			}
			if rep.Memory == nil || rep.Memory.PeakRSS <= 0 || rep.Memory.FileRSS <= 0 || rep.Memory.FileRSS > rep.Memory.RSS || rep.Memory.Items != 200 {
				t.Errorf("memory = %+v", rep.Memory)
			}
			var b strings.Builder
			if err := rep.WriteMarkdown(&b); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			for _, want := range []string{"| Workload |", "(`read`)", "(`upsert-8`)", "Memory: peak RSS"} {
				if !strings.Contains(md, want) {
					t.Errorf("report lacks %q:\n%s", want, md)
				}
			}
			t.Logf("\n%s", md)
		})
	}
}

func TestLookup(t *testing.T) {
	ws, err := Lookup(nil)
	if err != nil || len(ws) != len(DefaultWorkloads) {
		t.Fatalf("Lookup(nil) = %d workloads, %v", len(ws), err)
	}
	if _, err := Lookup([]string{"read", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Lookup(nope) error = %v", err)
	}
}
