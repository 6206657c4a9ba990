// Package clocktest helps tests that drive background loops on manual
// clocks: after a test moves a clock, the loop acts on its own goroutine,
// and the test waits for the effect.
package clocktest

import (
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
