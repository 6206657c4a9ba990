package engine

import (
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// TestForegroundBusy: busy from a request's start until a moment after
// it ends, and not before the first.
func TestForegroundBusy(t *testing.T) {
	real := clock.NewManual(time.Unix(1_700_000_000, 0))
	e := &Engine{fg: newForeground(real)}
	steps := []struct {
		do   func()
		want bool
	}{
		{func() {}, false},
		{e.RequestStarted, true},
		{func() { real.Advance(time.Second) }, true},
		{e.RequestDone, true},
		{func() { real.Advance(recentForeground - time.Microsecond) }, true},
		{func() { real.Advance(time.Microsecond) }, false},
	}
	for i, s := range steps {
		s.do()
		if got := e.fg.busy(); got != s.want {
			t.Fatalf("step %d: busy %v, want %v", i, got, s.want)
		}
	}
}
