package clock

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// t0 is where every scenario's manual clock starts; instants print as
// offsets from it.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestTimeGuard runs testdata/guard: wall-clock faults injected through a
// manual clock, and the trusted instant (now), the timer target (wake)
// and the start-up decision (new) they produce.
//
//	new [grace=<duration>] [floor=<offset>]  a guard on a fresh clock at t0
//	advance <duration>                       time passes (wall and monotonic)
//	step <±duration>                         the wall clock alone steps (a fault)
//	set <offset>                             the manual clock's Set (--clock-control)
//	now                                      the trusted instant, and the wall reading
//	wake <offset>                            the monotonic reading by which now reaches it
func TestTimeGuard(t *testing.T) {
	datadriven.RunTest(t, "testdata/guard", func(t *testing.T, d *datadriven.TestData) string {
		return runGuard(t, d)
	})
}

var (
	guardClock *Manual
	guard      *TimeGuard
)

func runGuard(t *testing.T, d *datadriven.TestData) string {
	arg := func() time.Duration {
		v, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		return v
	}
	switch d.Cmd {
	case "new":
		grace, floor := 10*time.Minute, time.Duration(0)
		for _, a := range d.CmdArgs {
			v, err := time.ParseDuration(a.Vals[0])
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			switch a.Key {
			case "grace":
				grace = v
			case "floor":
				floor = v
			}
		}
		guardClock = NewManual(t0)
		var r Resume
		guard, r = NewTimeGuard(guardClock, grace, t0.Add(floor))
		return fmt.Sprintf("ahead %s held %t\n", r.Ahead, r.Held)
	case "advance":
		guardClock.Advance(arg())
	case "step":
		guardClock.StepWall(arg())
	case "set":
		guardClock.Set(t0.Add(arg()))
	case "now":
		return fmt.Sprintf("now %s wall %s\n", guard.Now().Sub(t0), guardClock.Now().Sub(t0))
	case "wake":
		return fmt.Sprintf("elapsed %s of %s\n", guard.WakeAt(t0.Add(arg())), guardClock.Elapsed())
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return ""
}

// TestTimeGuardNeverBackwards drives a guard through random faults and
// checks the one invariant every scenario relies on.
func TestTimeGuardNeverBackwards(t *testing.T) {
	m := NewManual(t0)
	g, _ := NewTimeGuard(m, time.Minute, t0)
	prev := g.Now()
	steps := []time.Duration{-time.Hour, -3 * time.Second, 500 * time.Millisecond, 2 * time.Second, time.Hour, 24 * time.Hour}
	for i := range 10000 {
		switch i % 3 {
		case 0:
			m.StepWall(steps[(i*7)%len(steps)])
		case 1:
			m.Advance(time.Duration(i%17) * time.Second)
		}
		now := g.Now()
		if now.Before(prev) {
			t.Fatalf("step %d: now %s went back from %s", i, now.Sub(t0), prev.Sub(t0))
		}
		prev = now
	}
}

func BenchmarkTimeGuardNow(b *testing.B) {
	g, _ := NewTimeGuard(NewSystem(), 10*time.Minute, time.Time{})
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			g.Now()
		}
	})
}

// TestOnJump: the guard calls its OnJump function when it first sees the
// wall clock ahead, whichever reading sees it, and not again for the same
// jump, nor for drift within slack or a step back.
func TestOnJump(t *testing.T) {
	c := NewManual(t0)
	g, _ := NewTimeGuard(c, 10*time.Minute, time.Time{})
	jumps := 0
	g.OnJump(func() { jumps++ })
	expect := func(when string, want int) {
		t.Helper()
		if jumps != want {
			t.Fatalf("%s: OnJump called %d times, want %d", when, jumps, want)
		}
	}

	c.StepWall(500 * time.Millisecond)
	g.Now()
	c.StepWall(-time.Hour)
	g.Now()
	expect("drift within slack and a step back", 0)
	c.StepWall(time.Hour) // back where it was: not ahead
	c.StepWall(24 * time.Hour)
	expect("a jump no reading has seen", 0)
	g.WakeAt(t0.Add(time.Hour))
	expect("a timer's target, which sees the jump", 1)
	g.Now()
	c.Advance(5 * time.Minute)
	g.Now()
	expect("further readings during the jump", 1)
	c.Advance(5 * time.Minute)
	g.Now() // believed
	c.StepWall(24 * time.Hour)
	g.Now()
	expect("a second jump after the first was believed", 2)
}

// FuzzTimeGuard drives a guard through arbitrary sequences of time
// passing, wall-clock steps and Sets, and holds it to its contract:
// the instant never goes backwards; OnJump is called exactly when the
// guard starts distrusting the wall clock; and a timer set for an instant
// (WakeAt) is never late: once the clock has passed the reading WakeAt
// gave, with no fault since, the instant has reached it.
func FuzzTimeGuard(f *testing.F) {
	f.Add([]byte{0, 10, 1, 200, 2, 5, 0, 60, 3, 0, 4, 30})
	f.Add([]byte{1, 255, 2, 0, 0, 100, 2, 0, 0, 255, 0, 255, 4, 200})
	f.Add([]byte{1, 3, 3, 9, 0, 1, 1, 130, 2, 1, 4, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		c := NewManual(t0)
		g, _ := NewTimeGuard(c, 10*time.Minute, time.Time{})
		jumps, flips := 0, 0
		g.OnJump(func() { jumps++ })
		// amount reads a byte as a duration from a second to about a day,
		// signed when signed is set.
		amount := func(b byte, signed bool) time.Duration {
			d := time.Duration(b&0x7f) * time.Duration(b&0x7f) * 5 * time.Second
			if signed && b&0x80 != 0 {
				return -d
			}
			return d
		}
		prev := g.Now()
		wasAhead := g.ahead.Load()
		for i := 0; i+1 < len(ops) && i < 400; i += 2 {
			op, arg := ops[i]%5, ops[i+1]
			switch op {
			case 0:
				c.Advance(amount(arg, false))
			case 1:
				c.StepWall(amount(arg, true))
			case 2:
				c.Set(c.Now().Add(amount(arg, true)))
			case 3:
				g.WakeAt(prev.Add(amount(arg, false)))
			case 4:
				now := g.Now()
				if now.Before(prev) {
					t.Fatalf("op %d: the instant went back from %s to %s", i/2, prev.Sub(t0), now.Sub(t0))
				}
				prev = now
			}
			if ahead := g.ahead.Load(); ahead && !wasAhead {
				flips++
			}
			wasAhead = g.ahead.Load()
			if jumps != flips {
				t.Fatalf("op %d: OnJump called %d times for %d jumps seen", i/2, jumps, flips)
			}
		}
		// A timer for an instant ahead, with only time passing since. It
		// may fire early (at a jump's acceptance, the instant leaps, but
		// maybe not as far), and is then set again, as the purger does;
		// it may not fire late, nor at once while the instant is short of
		// its target (the purger's loop would spin).
		target := g.Now().Add(amount(byte(len(ops)), false))
		for round := 0; ; round++ {
			if !g.Now().Before(target) {
				return
			}
			if round == 4 {
				t.Fatalf("a timer for %s, set again each time it fired early, has not reached it", target.Sub(t0))
			}
			at, el := g.WakeAt(target), c.Elapsed()
			if at <= el {
				t.Fatalf("a timer for %s set at reading %s fires at once, with the instant at %s", target.Sub(t0), el, g.Now().Sub(t0))
			}
			for k := 1; k < 32; k++ { // readings short of at: not there yet
				c.Advance(el + (at-el)*time.Duration(k)/32 - c.Elapsed())
				if now := g.Now(); !now.Before(target) {
					t.Fatalf("a timer for %s set for reading %s was late: the instant was %s at reading %s", target.Sub(t0), at, now.Sub(t0), c.Elapsed())
				}
			}
			c.Advance(at - c.Elapsed())
		}
	})
}
