package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

// TimeGuard turns a clock's readings into the one trusted instant that
// TTL visibility, _ts and the purge all use, so that a wall-clock fault
// corrected within the grace period changes nothing a client can observe:
// no item hidden early, none shown late by more than the fault lasted,
// no _ts in the future.
//
// The trusted instant follows the wall clock while the wall clock agrees
// with a monotonic reading anchored to it (within slack), and otherwise:
//
//   - A wall clock that jumps forward is not believed until it has stayed
//     ahead for the grace period; until then the trusted instant advances
//     with the monotonic clock from the last trusted reading. A jump that
//     outlasts the grace is taken as a real correction and followed.
//   - A wall clock that steps back holds the trusted instant still (it
//     never goes backwards, so no expired item reappears and no _ts goes
//     back) until the wall clock catches up with it.
//   - On start, the latest instant the data was written at is a floor
//     only if it is at most the grace ahead of the clock: a small step
//     back across a restart is held like any other, but a stored future
//     (a fault before this fix, or a manual clock set ahead) cannot pin
//     the instant. See NewTimeGuard.
//
// A manual clock's Advance and forward Set move its monotonic reading too,
// so under --clock-control the user's moves apply at once; only StepWall,
// which tests use to inject a fault, moves the wall reading alone.
type TimeGuard struct {
	clock Clock
	grace time.Duration

	// served is the latest instant served, in Unix microseconds (Unix
	// nanoseconds end in 2262, and a manual clock may be advanced by
	// centuries). INVARIANT: never decreases.
	served atomic.Int64
	// anchor is the wall and monotonic readings the trusted instant is
	// measured from; replaced (under mu) when a jump is believed.
	anchor atomic.Pointer[anchor]
	// ahead is set while the wall clock is ahead of the anchor by more
	// than slack and not yet believed; written under mu.
	ahead atomic.Bool

	mu sync.Mutex
	// aheadSince is guarded by mu: the monotonic reading when the wall
	// clock was first seen ahead, while ahead is set.
	aheadSince time.Duration

	// onJump is called when a forward jump is first seen (see OnJump).
	onJump atomic.Pointer[func()]
}

// OnJump has fn called when the guard first sees the wall clock ahead,
// the moment from which WakeAt answers earlier than before: a timer set
// for an instant before the jump was seen waits for the monotonic reading
// at which the instant would have come without the jump, perhaps hours
// past the jump's acceptance, when the instant leaps ahead. fn runs with
// the guard locked, so it must only signal (it may not read the guard).
func (g *TimeGuard) OnJump(fn func()) { g.onJump.Store(&fn) }

// anchor is a wall reading and the monotonic reading taken with it.
type anchor struct {
	wall time.Time
	mono time.Duration
}

// at is the wall time the monotonic reading el corresponds to. Readings
// are only ever subtracted, so a manual clock advanced by centuries, whose
// reading wraps, still measures correctly from an anchor kept fresh (see
// reanchorAfter).
func (a *anchor) at(el time.Duration) time.Time { return a.wall.Add(el - a.mono) }

// slack is how far the wall clock may drift from the monotonic anchor
// before it counts as a jump (ordinary drift and NTP slew stay below it).
const slack = time.Second

// reanchorAfter is how old an anchor may grow before a believed reading
// replaces it, so that the anchor follows slow drift and no difference of
// readings nears a Duration's range.
const reanchorAfter = time.Hour

// Resume says how a guard started on data last written at Floor.
type Resume struct {
	// Floor is the latest instant the data was written at.
	Floor time.Time
	// Ahead is how far Floor is ahead of the clock at start (<= 0 when it
	// is not).
	Ahead time.Duration
	// Held is true when Floor is served until the clock catches up with
	// it (Ahead is within the grace), false when the clock is believed.
	Held bool
}

// NewTimeGuard returns a guard over c that believes a forward wall-clock
// jump only after grace. floor is the latest instant already written (the
// data's highest _ts): a floor ahead of the clock by at most grace is held
// as a backward step would be; a floor further ahead is not served, and
// the clock is believed at once, because a stored instant must not pin the
// future (the caller reports it from the returned Resume).
func NewTimeGuard(c Clock, grace time.Duration, floor time.Time) (*TimeGuard, Resume) {
	g := &TimeGuard{clock: c, grace: grace}
	wall, el := c.Read()
	g.anchor.Store(&anchor{wall: wall, mono: el})
	r := Resume{Floor: floor, Ahead: floor.Sub(wall)}
	g.served.Store(wall.UnixMicro())
	if r.Ahead <= grace {
		r.Held = true
		g.served.Store(max(wall.UnixMicro(), floor.UnixMicro()))
	}
	return g, r
}

// Now is an operation's one instant, for visibility, _ts, the query
// environment and the purge alike. It never goes backwards.
func (g *TimeGuard) Now() time.Time {
	wall, el := g.clock.Read()
	a := g.anchor.Load()
	if d := wall.Sub(a.at(el)); d <= slack && d >= -slack && el-a.mono < reanchorAfter && !g.ahead.Load() {
		return g.serve(wall)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.serve(g.trustedLocked(wall, el))
}

// serve returns the later of t and the latest instant served, recording
// it, to the microsecond.
func (g *TimeGuard) serve(t time.Time) time.Time {
	n := t.UnixMicro()
	for {
		s := g.served.Load()
		if n <= s {
			return time.UnixMicro(s)
		}
		if g.served.CompareAndSwap(s, n) {
			return time.UnixMicro(n)
		}
	}
}

// trustedLocked is the trusted reading for the wall reading wall taken
// at monotonic reading el, before the never-backwards rule, updating the
// anchor and the jump's start. REQUIRES: g.mu held.
func (g *TimeGuard) trustedLocked(wall time.Time, el time.Duration) time.Time {
	a := g.anchor.Load()
	est := a.at(el)
	switch d := wall.Sub(est); {
	case d > slack:
		if !g.ahead.Load() {
			g.aheadSince = el
			g.ahead.Store(true)
			if fn := g.onJump.Load(); fn != nil {
				(*fn)()
			}
		}
		if el-g.aheadSince < g.grace {
			return est
		}
		// The jump outlasted the grace: a real correction.
	case d < -slack:
		g.ahead.Store(false)
		if wall.UnixMicro() < g.served.Load() {
			// Hold still until the wall clock catches up; keep the
			// anchor, so a correction back to it is not a forward jump.
			return wall
		}
		// Caught up with everything served: believe the step.
	}
	g.anchor.Store(&anchor{wall: wall, mono: el})
	g.ahead.Store(false)
	return wall
}

// WakeAt is the reading of the clock's Elapsed by which the trusted
// instant may have reached t, for a timer on the clock (Clock.At): it
// follows the wall clock while it is believed, the monotonic clock during
// a distrusted jump (or the jump's acceptance, if sooner), and the wall
// clock catching up after a step back. A timer may fire early; it never
// fires late.
func (g *TimeGuard) WakeAt(t time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	wall, el := g.clock.Read()
	if t.UnixMicro() <= g.served.Load() {
		return el
	}
	tr := g.trustedLocked(wall, el)
	at := el + t.Sub(tr)
	if g.ahead.Load() {
		at = min(at, g.aheadSince+g.grace)
	}
	return at
}
