package purger

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCursorsCarry: each batch starts where the previous one ended, a
// later pass where the last one ended; Replan and Forget start over.
func TestCursorsCarry(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	storm := make([]int64, 600)
	for i := range storm {
		storm[i] = s0 + 1
	}
	r.h.add(a, storm...)
	r.startAndSettle(t, 1)

	r.clk.Advance(time.Second)
	waitUntil(t, "the storm's purge", func() bool { return r.h.stored(a) == 0 })
	var got []string
	for _, c := range r.h.batchCalls() {
		got = append(got, fmt.Sprintf("from %q limit %d read %d", c.from.Own, c.limit, c.read))
	}
	want := []string{`from "" limit 256 read 256`, `from "1" limit 256 read 256`, `from "2" limit 256 read 88`}
	if !slices.Equal(got, want) {
		t.Fatalf("batches\n%q\nwant\n%q", got, want)
	}

	more := func(at int64) {
		r.h.update(a, func(fc *fakeContainer) { fc.expiries = append(fc.expiries, at) })
		r.p.NoteExpiry(a, at)
		r.clk.Advance(time.Second)
		waitUntil(t, "the purge of one more item", func() bool { return r.h.stored(a) == 0 })
	}
	lastFrom := func() string { calls := r.h.batchCalls(); return string(calls[len(calls)-1].from.Own) }
	more(s0 + 2)
	if f := lastFrom(); f != "3" {
		t.Fatalf("the next pass started from %q, want the last cursor %q", f, "3")
	}
	r.p.Replan(a)
	if _, ok := r.p.State().Cursors[a]; ok {
		t.Fatal("Replan kept the cursor")
	}
	more(s0 + 3)
	if f := lastFrom(); f != "" {
		t.Fatalf("the pass after Replan started from %q, want the start", f)
	}
	r.p.Forget(a)
	if s := r.p.State(); len(s.Cursors)+len(s.Deadlines) != 0 {
		t.Fatalf("Forget left %v", s)
	}
	if _, ok := r.p.LastLag(a); ok {
		t.Fatal("Forget left the last lag")
	}
}

// TestPurgeFigures: each purged item's lag goes to the histogram and
// OnPurge, the largest to LastLag; the totals and gauges follow.
func TestPurgeFigures(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+1, s0+2)
	r.startAndSettle(t, 1)
	if _, ok := r.p.LastLag(a); ok {
		t.Fatal("a lag before any purge")
	}

	r.clk.Advance(5 * time.Second) // one pass purges both, 4 s and 3 s late
	waitUntil(t, "the purge", func() bool { return r.h.stored(a) == 0 })
	r.p.Stop()
	r.lagsMu.Lock()
	lags := slices.Clone(r.lags)
	r.lagsMu.Unlock()
	if want := []time.Duration{4 * time.Second, 3 * time.Second}; !slices.Equal(lags, want) {
		t.Fatalf("OnPurge lags %v, want %v", lags, want)
	}
	if lag, _ := r.p.LastLag(a); lag != 4*time.Second {
		t.Fatalf("LastLag %v, want 4s", lag)
	}
	label := "db/1"
	checkFigures(t, map[string][2]float64{
		"purge lag samples": {value(r.m.TTLPurgeLag.WithLabelValues(label).(prometheus.Histogram)), 2},
		"purged":            {value(r.m.TTLPurged.WithLabelValues(label)), 2},
		"purge RU":          {value(r.m.TTLPurgeUnits.WithLabelValues(label)), 2},
		"backlog":           {value(r.m.TTLBacklog.WithLabelValues(label)), 0},
		"oldest unpurged":   {value(r.m.TTLOldestUnpurged.WithLabelValues(label)), 0},
		"wake-ups":          {r.wakeups(), 1},
	})
}
