// Package clock is the only source of time in Ebb.
//
// Every component that needs "now" or needs to wait asks a Clock, so tests
// and users (with --clock-control) can move time without sleeping. The
// system clock reads the wall clock; the manual clock starts at a given
// instant, moves only when told to, and fires timers as it passes them.
// The time guard (guard.go) turns a clock's readings into the instants
// TTL may trust: one that never goes back, for what an operation sees and
// writes, and one that never runs ahead of the monotonic clock, for what
// may be purged.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and waits for it.
type Clock interface {
	// Now returns the current wall-clock time.
	Now() time.Time
	// Elapsed returns the time that has passed since the clock was made,
	// measured on a monotonic reading that a wall-clock step cannot move.
	// For the manual clock, advances count as elapsed time.
	Elapsed() time.Duration
	// Read returns Now and Elapsed taken at the same moment.
	Read() (time.Time, time.Duration)
	// After returns a channel that is closed once d has elapsed on this
	// clock, and a function that releases the timer early.
	After(d time.Duration) (<-chan struct{}, func())
	// At is After with an absolute target: the channel is closed once
	// Elapsed() reaches elapsed (at once if it has). A waiter that computed
	// its target from an earlier reading cannot miss time that passed
	// before it registered, as it could with After.
	At(elapsed time.Duration) (<-chan struct{}, func())
}

// System is the real clock.
type System struct{ start time.Time }

// NewSystem returns the wall clock, with Elapsed measured from now.
func NewSystem() *System { return &System{start: time.Now()} }

// Now implements Clock.
func (s *System) Now() time.Time { return time.Now() }

// Elapsed implements Clock; time.Since uses the monotonic reading.
func (s *System) Elapsed() time.Duration { return time.Since(s.start) }

// Read implements Clock with one reading of the system clock, which
// carries both the wall and the monotonic time.
func (s *System) Read() (time.Time, time.Duration) {
	t := time.Now()
	return t, t.Sub(s.start)
}

// After implements Clock.
func (s *System) After(d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	t := time.AfterFunc(d, func() { close(ch) })
	return ch, func() { t.Stop() }
}

// At implements Clock.
func (s *System) At(elapsed time.Duration) (<-chan struct{}, func()) {
	return s.After(elapsed - s.Elapsed())
}

// Manual is a clock that moves only when Advance or Set is called. It is
// safe for concurrent use. Its Elapsed reading wraps after some 292 years
// of advances; readings are compared by their difference, which stays
// right for any two less than that apart.
type Manual struct {
	mu sync.Mutex
	// now and elapsed are guarded by mu. INVARIANT: elapsed never
	// decreases (modulo its wrap).
	now     time.Time
	elapsed time.Duration
	// waiters are guarded by mu, each fires when elapsed reaches its at.
	waiters map[*waiter]struct{}
}

type waiter struct {
	at time.Duration
	ch chan struct{}
}

// NewManual returns a manual clock reading start.
func NewManual(start time.Time) *Manual {
	return &Manual{now: start, waiters: make(map[*waiter]struct{})}
}

// Now implements Clock.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Elapsed implements Clock.
func (m *Manual) Elapsed() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.elapsed
}

// Read implements Clock.
func (m *Manual) Read() (time.Time, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now, m.elapsed
}

// After implements Clock. A timer for d <= 0 fires at once.
func (m *Manual) After(d time.Duration) (<-chan struct{}, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.atLocked(m.elapsed + d)
}

// At implements Clock.
func (m *Manual) At(elapsed time.Duration) (<-chan struct{}, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.atLocked(elapsed)
}

// REQUIRES: m.mu held.
func (m *Manual) atLocked(at time.Duration) (<-chan struct{}, func()) {
	w := &waiter{at: at, ch: make(chan struct{})}
	if at-m.elapsed <= 0 {
		close(w.ch)
		return w.ch, func() {}
	}
	m.waiters[w] = struct{}{}
	return w.ch, func() {
		m.mu.Lock()
		delete(m.waiters, w)
		m.mu.Unlock()
	}
}

// Advance moves the clock forward by d (a negative d is ignored) and fires
// every timer that is now due. An advance counts as elapsed time too, so
// that work gated on both readings (the TTL purge) happens at once.
func (m *Manual) Advance(d time.Duration) {
	if d < 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	m.elapsed += d
	m.fireLocked()
}

// Set moves the wall reading to t, forwards or backwards, as a wall clock
// step would. A forward step also counts as elapsed time; a backward step
// does not move the monotonic reading.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := t.Sub(m.now); d > 0 {
		m.elapsed += d
	}
	m.now = t
	m.fireLocked()
}

// StepWall moves only the wall reading, as an NTP correction or a bad
// clock would, leaving the monotonic reading where it is.
func (m *Manual) StepWall(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
}

// REQUIRES: m.mu held.
func (m *Manual) fireLocked() {
	for w := range m.waiters {
		if w.at-m.elapsed <= 0 {
			close(w.ch)
			delete(m.waiters, w)
		}
	}
}
