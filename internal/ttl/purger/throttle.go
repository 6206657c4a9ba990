package purger

import "time"

// throttled is a container with due items that waits, out of the heap,
// for spare throughput or for another node's lease to end, or one whose
// deadline could not be read, which waits to be planned again.
type throttled struct {
	at     int64         // the container's deadline
	retry  time.Duration // reading of the real clock when to try again
	replan bool          // the deadline is unknown: plan c when the wait is over
}

// throttle takes c, whose deadline was at, out of the heap's way until
// the real clock reads retry.
func (p *Purger) throttle(c ContainerID, at int64, retry time.Duration) {
	p.mu.Lock()
	p.throttled[c] = throttled{at: at, retry: retry}
	p.mu.Unlock()
}

// earliestRetryLocked returns when the first throttled container may try
// again. REQUIRES: p.mu held.
func (p *Purger) earliestRetryLocked() (time.Duration, bool) {
	var first time.Duration
	found := false
	for _, t := range p.throttled {
		if !found || t.retry < first {
			first, found = t.retry, true
		}
	}
	return first, found
}

// resumeThrottled puts throttled containers whose wait is over back in
// the deadline heap.
func (p *Purger) resumeThrottled() {
	now := p.cfg.Real.Elapsed()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, t := range p.throttled {
		if t.retry <= now {
			if t.replan {
				p.dirty[c] = true
			} else {
				p.deadlines.lower(c, t.at)
			}
			delete(p.throttled, c)
		}
	}
}
