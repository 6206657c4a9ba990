package purger

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

var s0 = start.Unix()

// TestSleepsUntilEarliestDeadline: the loop wakes once per deadline, at
// the deadline, and purges what is due then.
func TestSleepsUntilEarliestDeadline(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+5, s0+10)
	r.startAndSettle(t, 1)

	r.clk.Advance(4 * time.Second)
	r.p.ReplanAll() // a pass at +4 purges nothing
	waitUntil(t, "a pass at +4", func() bool { return r.h.count("Now") >= 1 })
	if n := r.h.stored(a); n != 2 {
		t.Fatalf("%d items left at +4, want 2", n)
	}
	r.clk.Advance(time.Second)
	waitUntil(t, "the purge at +5", func() bool { return r.h.stored(a) == 1 })
	r.clk.Advance(5 * time.Second)
	waitUntil(t, "the purge at +10", func() bool { return r.h.stored(a) == 0 })
	r.p.Stop()

	if w := r.wakeups(); w != 3 {
		t.Fatalf("%v wake-ups, want 3: the replan's and one per deadline", w)
	}
	calls := r.h.batchCalls()
	if len(calls) != 2 || calls[0].now != s0+5 || calls[1].now != s0+10 {
		t.Fatalf("batches %+v, want one at +5 and one at +10", calls)
	}
}

// TestWallJumpRetimes: the loop sleeping until an item's deadline wakes
// when the time guard first sees the wall clock jump ahead, and purges
// the item once the guard believes the jump (after its grace), not when
// the monotonic clock would have reached the deadline without the jump.
func TestWallJumpRetimes(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+3600)
	r.startAndSettle(t, 1) // the timer is set for an hour on

	r.clk.StepWall(24 * time.Hour)
	r.guard.Now() // a request reads the clock: the jump is seen, not yet believed
	r.clk.Advance(10 * time.Minute)
	waitUntil(t, "the purge once the jump is believed", func() bool { return r.h.stored(a) == 0 })
	if calls := r.h.batchCalls(); len(calls) != 1 || calls[0].now != s0+24*3600+600 {
		t.Fatalf("batches %+v, want one at the believed instant, +24h10m", calls)
	}
}

// TestIdleCostsNothing: with nothing due, time passing costs no wake-up
// and no call to the host beyond the first plan.
func TestIdleCostsNothing(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+24*3600)
	r.startAndSettle(t, 1)
	for range 23 {
		r.clk.Advance(time.Hour)
		r.real.Advance(time.Hour)
	}
	r.p.Stop()
	if w := r.wakeups(); w != 0 {
		t.Fatalf("%v wake-ups while nothing was due, want 0", w)
	}
	for call, want := range map[string]int{"NextDeadline": 1, "Now": 0, "HoldLease": 0, "PurgeBatch": 0, "CountDue": 0} {
		if got := r.h.count(call); got != want {
			t.Errorf("%s called %d times, want %d", call, got, want)
		}
	}
}

// TestNoteBringsDeadlineForward: a write expiring before the planned
// deadline wakes the loop for it; a later one changes nothing.
func TestNoteBringsDeadlineForward(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+1000)
	r.startAndSettle(t, 1)

	r.p.NoteExpiry(a, s0+3000)
	if d := r.p.State().Deadlines; len(d) != 1 || d[0].At != s0+1000 {
		t.Fatalf("deadlines %v after a later note, want a@+1000", d)
	}
	r.h.update(a, func(fc *fakeContainer) { fc.expiries = []int64{s0 + 2, s0 + 1000} })
	r.p.NoteExpiry(a, s0+2)
	r.clk.Advance(2 * time.Second)
	waitUntil(t, "the purge of the noted item", func() bool { return r.h.stored(a) == 1 })
	if calls := r.h.batchCalls(); calls[0].now != s0+2 {
		t.Fatalf("purged at %d, want +2", calls[0].now-s0)
	}
}

// TestNoteDuringPlanWins: a deadline noted while plan reads the host is
// kept, though the read (taken before the write) shows a later one.
func TestNoteDuringPlanWins(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+100)
	noted := false
	r.h.onNextDeadline = func(c ContainerID) {
		if !noted {
			noted = true
			r.p.NoteExpiry(c, s0+1)
		}
	}
	r.startAndSettle(t, 1)
	if d := r.p.State().Deadlines; d[0].At != s0+1 {
		t.Fatalf("deadline +%d, want the noted +1", d[0].At-s0)
	}
}

// TestPurgesOnlyOnThePurgeInstant: a forward wall-clock jump moves
// nothing until the purge instant (the time guard, on the monotonic
// clock during the jump) gets there.
func TestPurgesOnlyOnThePurgeInstant(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+10)
	r.startAndSettle(t, 1)

	r.clk.StepWall(time.Hour)
	// Wakes the loop for a pass, whose reading of the clock sees the jump
	// and retimes the loop: a second pass, which purges nothing either.
	r.p.ReplanAll()
	waitUntil(t, "a pass after the jump", func() bool { return r.h.count("Now") >= 1 })
	r.clk.Advance(10 * time.Second)
	waitUntil(t, "the purge at +10 monotonic", func() bool { return r.h.stored(a) == 0 })
	if calls := r.h.batchCalls(); len(calls) != 1 || calls[0].now != s0+10 {
		t.Fatalf("batches %+v, want one at +10", calls)
	}
}

// TestTTLOffIsNotPurged: a container whose TTL went off is skipped when
// its deadline comes, and forgotten when it is planned.
func TestTTLOffIsNotPurged(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+5)
	r.startAndSettle(t, 1)

	r.h.update(a, func(fc *fakeContainer) { fc.on = false })
	r.clk.Advance(5 * time.Second)
	waitUntil(t, "the pass at +5", func() bool { return r.h.count("Now") == 1 })
	r.p.Replan(a)
	waitUntil(t, "the plan that forgets it", func() bool {
		s := r.p.State()
		return len(s.Dirty) == 0 && len(s.Deadlines) == 0
	})
	r.p.Stop()
	if n := r.h.count("PurgeBatch") + r.h.count("HoldLease"); n != 0 {
		t.Fatalf("%d lease or batch calls on a container with TTL off", n)
	}
}

// TestGivesWayToForeground: while foreground requests are served, the
// purger purges in small batches and pauses on the real clock after
// each; once they stop, it purges the rest at full size.
func TestGivesWayToForeground(t *testing.T) {
	r := newRig(t)
	var busy atomic.Bool
	busy.Store(true)
	r.p.cfg.Busy = busy.Load
	a := ContainerID{1}
	due := make([]int64, 3*busyBatch+maxBatch)
	for i := range due {
		due[i] = s0 + 1
	}
	r.h.add(a, due...)
	r.startAndSettle(t, 1)

	r.clk.Advance(time.Second)
	waitUntil(t, "the first batch", func() bool { return len(r.h.batchCalls()) == 1 })
	if n := len(r.h.batchCalls()); n != 1 {
		t.Fatalf("%d batches before the real clock moved, want 1: the purger pauses after each", n)
	}
	r.real.Advance(minBusyPause)
	waitUntil(t, "the second batch", func() bool { return len(r.h.batchCalls()) == 2 })
	busy.Store(false)
	r.real.Advance(minBusyPause)
	waitUntil(t, "the rest", func() bool { return r.h.stored(a) == 0 })
	var limits []int
	for _, c := range r.h.batchCalls() {
		limits = append(limits, c.limit)
	}
	if want := []int{busyBatch, busyBatch, maxBatch, maxBatch}; !slices.Equal(limits, want) {
		t.Fatalf("batch limits %v, want %v", limits, want)
	}
}
