package engine

import (
	"sync/atomic"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// foreground tracks the requests being served, so that background work
// (the TTL purger) can give way to them: on a machine with few cores a
// purge that keeps every core busy delays the requests the service's
// "spare throughput" model promises it never delays.
type foreground struct {
	real     clock.Clock
	inflight atomic.Int64
	lastDone atomic.Int64 // real.Elapsed() when a request last finished
}

func newForeground(real clock.Clock) *foreground {
	f := &foreground{real: real}
	f.lastDone.Store(int64(real.Elapsed() - recentForeground)) // none yet
	return f
}

// recentForeground is how long after a request a following one is expected: a
// client sending requests one after another is busy between them too.
const recentForeground = 5 * time.Millisecond

// RequestStarted and RequestDone bracket every request the gateway
// serves.
func (e *Engine) RequestStarted() { e.fg.inflight.Add(1) }

func (e *Engine) RequestDone() {
	e.fg.lastDone.Store(int64(e.fg.real.Elapsed()))
	e.fg.inflight.Add(-1)
}

// busy reports whether requests are being served or were a moment ago.
func (f *foreground) busy() bool {
	return f.inflight.Load() > 0 || f.real.Elapsed()-time.Duration(f.lastDone.Load()) < recentForeground
}
