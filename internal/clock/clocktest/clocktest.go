// Package clocktest helps tests that drive background loops on manual
// clocks: after a test moves a clock, the loop acts on its own goroutine,
// and the test waits for the effect.
package clocktest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// WaitUntil polls cond, which another goroutine makes true, every
// millisecond, and fails the test after ten seconds. It never sleeps a
// fixed time.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waited := clock.NewSystem()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if waited.Elapsed() > 10*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// AdvanceUntilDone runs fn on its own goroutine and moves c forward by
// step until fn returns, then returns fn's error: for a call that waits
// on c (a budget that must run out).
func AdvanceUntilDone(t testing.TB, c *clock.Manual, step time.Duration, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	var err error
	WaitUntil(t, what, func() bool {
		c.Advance(step)
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	return err
}

// Step is a clock for query page budgets: its monotonic reading moves by
// a millisecond each time it is read, so a budget of n milliseconds runs
// out at a page's n-th check however fast the machine is, and no test
// waits for real time. Its wall reading is the embedded manual clock's.
type Step struct {
	*clock.Manual
	reads atomic.Int64
	// OnRead, if set, is told the number of each read (set it before the
	// clock is in use).
	OnRead func(n int64)
}

// NewStep returns a Step whose wall reading starts at start.
func NewStep(start time.Time) *Step { return &Step{Manual: clock.NewManual(start)} }

// Elapsed implements clock.Clock: one millisecond more on every read.
func (c *Step) Elapsed() time.Duration {
	n := c.reads.Add(1)
	if c.OnRead != nil {
		c.OnRead(n)
	}
	return time.Duration(n) * time.Millisecond
}

// Reads is how many times Elapsed has been read.
func (c *Step) Reads() int64 { return c.reads.Load() }
