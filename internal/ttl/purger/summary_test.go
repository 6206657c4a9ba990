package purger

import (
	"strings"
	"testing"
	"time"
)

// TestSummaries: the log gets one line when a pass drains a container,
// at most one a minute per container, and a line held back by that limit
// is counted in the next.
func TestSummaries(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+1, s0+1)
	r.startAndSettle(t, 1)
	lines := func() []string {
		return strings.Split(strings.TrimSpace(r.log.String()), "\n")
	}

	r.clk.Advance(time.Second)
	waitUntil(t, "the first purge's summary", func() bool { return strings.Contains(r.log.String(), "items=2") })

	// A second purge within the minute is held back...
	r.h.update(a, func(fc *fakeContainer) { fc.expiries = []int64{s0 + 2} })
	r.p.NoteExpiry(a, s0+2)
	r.clk.Advance(time.Second)
	waitUntil(t, "the second purge", func() bool { return r.h.stored(a) == 0 })
	// ...and reported with the next one after it.
	r.real.Advance(summaryEvery)
	r.h.update(a, func(fc *fakeContainer) { fc.expiries = []int64{s0 + 3, s0 + 3, s0 + 3} })
	r.p.NoteExpiry(a, s0+3)
	r.clk.Advance(time.Second)
	waitUntil(t, "the third purge's summary", func() bool { return len(lines()) == 2 })
	r.p.Stop()

	got := lines()
	want := []string{
		`level=INFO msg="ttl: purged expired items" container=db/1 items=2 over=0s worstLag=0s`,
		`level=INFO msg="ttl: purged expired items" container=db/1 items=4 over=1m0s worstLag=0s`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
