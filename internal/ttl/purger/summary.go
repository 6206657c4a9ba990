package purger

import "time"

// An operator reading the log at the default level learns what the purger
// did without a line per batch: one summary per container when a purge
// pass drains it, and one a minute while a long pass goes on, never more
// than one a minute per container. A summary held back by that limit is
// added to the next one.

// summaryEvery is the least time between two summaries of a container.
const summaryEvery = time.Minute

// summary is what a container's purges did since their last summary.
type summary struct {
	items int
	worst time.Duration // largest purge lag
	// since is when the first unreported purge happened, and loggedAt
	// when the last summary was written (logged: ever), on the real clock.
	since, loggedAt time.Duration
	logged          bool
}

// REQUIRES: p.mu held.
func (p *Purger) summaryLocked(c ContainerID) *summary {
	s := p.summaries[c]
	if s == nil {
		s = &summary{}
		p.summaries[c] = s
	}
	return s
}

func (s *summary) add(items int, worst, now time.Duration) {
	if s.items == 0 {
		s.since = now
	}
	s.items += items
	s.worst = max(s.worst, worst)
}

// summarize logs c's summary if one is due: drained says the pass has
// purged everything due.
func (p *Purger) summarize(c ContainerID, label string, drained bool) {
	now := p.cfg.Real.Elapsed()
	p.mu.Lock()
	s := p.summaries[c]
	if s == nil || s.items == 0 {
		p.mu.Unlock()
		return
	}
	quiet := !s.logged || now-s.loggedAt >= summaryEvery
	if !quiet || (!drained && now-s.since < summaryEvery) {
		p.mu.Unlock()
		return
	}
	items, worst, over := s.items, s.worst, now-s.since
	*s = summary{logged: true, loggedAt: now}
	p.mu.Unlock()
	p.cfg.Log.Info("ttl: purged expired items", "container", label, "items", items,
		"over", over.Round(time.Millisecond), "worstLag", worst.Round(time.Millisecond))
}
