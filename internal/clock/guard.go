package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

// TimeGuard derives the two instants TTL needs from a clock: the instant
// an operation reads and writes at (Now), and the instant up to which
// expired items may be purged (PurgeNow).
//
// Visibility uses the wall clock, as Cosmos does, but never an instant
// earlier than one already served: a backward wall-clock step must not
// make an expired item visible again. That high-water mark starts at the
// latest _ts any container has written.
//
// Purging is irreversible, so it uses the earlier of the wall clock and a
// monotonic reading anchored to it: a wall clock that jumps forward does
// not purge anything until the monotonic reading gets there too. If the
// wall clock stays ahead for longer than the grace period, the jump is
// taken as a real correction and the anchor moves to it; a wall clock
// that falls behind moves the anchor back at once (purging later is
// always safe).
type TimeGuard struct {
	clock Clock
	grace time.Duration

	// highWater is the latest visibility instant served, in epoch
	// seconds. INVARIANT: never decreases.
	highWater atomic.Int64

	mu sync.Mutex
	// anchorWall and anchorMono are guarded by mu: the wall reading and
	// the monotonic reading taken at the same moment.
	anchorWall time.Time
	anchorMono time.Duration
	// aheadSince is guarded by mu: the monotonic reading when the wall
	// clock was first seen ahead of the anchor, or -1.
	aheadSince time.Duration
}

// NewTimeGuard returns a guard over c that trusts a forward wall-clock
// jump only after grace, and serves no instant before floor (epoch
// seconds: the latest _ts already written).
func NewTimeGuard(c Clock, grace time.Duration, floor int64) *TimeGuard {
	g := &TimeGuard{clock: c, grace: grace, anchorWall: c.Now(), anchorMono: c.Elapsed(), aheadSince: -1}
	g.highWater.Store(floor)
	return g
}

// Now is an operation's one instant, for visibility, _ts and the query
// environment alike. Its whole seconds are the wall clock's, never behind
// a second already served; when the wall clock has stepped back behind
// that high-water mark, the instant is the start of the high-water
// second, so GetCurrentTimestamp() in a query agrees with the TTL check
// and the _ts the same operation writes.
func (g *TimeGuard) Now() time.Time {
	wall := g.clock.Now()
	sec := wall.Unix()
	for {
		hw := g.highWater.Load()
		if sec < hw {
			return time.Unix(hw, 0)
		}
		if sec == hw || g.highWater.CompareAndSwap(hw, sec) {
			return wall
		}
	}
}

// slack is how far the wall clock may run ahead of the monotonic anchor
// before it counts as a jump (ordinary drift and NTP slew stay below it).
const slack = time.Second

// PurgeNow is the instant up to which expired items may be purged.
func (g *TimeGuard) PurgeNow() time.Time {
	t, _ := g.PurgeNowAt()
	return t
}

// PurgeNowAt is PurgeNow with the monotonic reading it was taken at, so
// a timer for a later instant can be set on the same axis (clock.At).
func (g *TimeGuard) PurgeNowAt() (time.Time, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, el := g.purgeNowLocked()
	return t, el
}

// REQUIRES: g.mu held.
func (g *TimeGuard) purgeNowLocked() (time.Time, time.Duration) {
	wall, el := g.clock.Now(), g.clock.Elapsed()
	mono := g.anchorWall.Add(el - g.anchorMono)
	switch {
	case wall.After(mono.Add(slack)):
		if g.aheadSince < 0 {
			g.aheadSince = el
		}
		if el-g.aheadSince < g.grace {
			return mono, el
		}
		g.anchorWall, g.anchorMono, g.aheadSince = wall, el, -1
		return wall, el
	case wall.Before(mono.Add(-slack)):
		g.anchorWall, g.anchorMono, g.aheadSince = wall, el, -1
		return wall, el
	}
	g.aheadSince = -1
	if wall.Before(mono) {
		return wall, el
	}
	return mono, el
}
