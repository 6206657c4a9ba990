package purger

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// State is a copy of a purger's bookkeeping, for tests and failure
// messages.
type State struct {
	// Deadlines are the heap's entries, earliest first.
	Deadlines []Deadline
	// Throttled are the containers waiting for throughput or a lease.
	Throttled map[ContainerID]Throttled
	// Cursors are where each container's purge resumes.
	Cursors map[ContainerID]Cursor
	// Dirty are the containers whose deadline is still to be re-read.
	Dirty []ContainerID
}

// Deadline is a container's next deadline, in epoch seconds.
type Deadline struct {
	C  ContainerID
	At int64
}

// Throttled is a throttled container's deadline and when it tries again,
// as a reading of the real clock.
type Throttled struct {
	At    int64
	Retry time.Duration
}

// State returns a copy of the purger's bookkeeping.
func (p *Purger) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := State{
		Throttled: make(map[ContainerID]Throttled, len(p.throttled)),
		Cursors:   make(map[ContainerID]Cursor, len(p.cursors)),
	}
	for _, d := range p.deadlines.items {
		s.Deadlines = append(s.Deadlines, Deadline{C: d.c, At: d.at})
	}
	slices.SortFunc(s.Deadlines, func(a, b Deadline) int { return cmp.Compare(a.At, b.At) })
	for c, t := range p.throttled {
		s.Throttled[c] = Throttled{At: t.at, Retry: t.retry}
	}
	for c, cur := range p.cursors {
		s.Cursors[c] = cur
	}
	for c := range p.dirty {
		s.Dirty = append(s.Dirty, c)
	}
	return s
}

// String renders the state on a few lines, containers in hex.
func (s State) String() string {
	var b strings.Builder
	fmt.Fprint(&b, "deadlines:")
	for _, d := range s.Deadlines {
		fmt.Fprintf(&b, " %x@%d", d.C, d.At)
	}
	fmt.Fprint(&b, "\nthrottled:")
	for c, t := range s.Throttled {
		fmt.Fprintf(&b, " %x@%d(retry %v)", c, t.At, t.Retry)
	}
	fmt.Fprint(&b, "\ncursors:")
	for c, cur := range s.Cursors {
		fmt.Fprintf(&b, " %x(own %x, ts %x)", c, cur.Own, cur.Ts)
	}
	fmt.Fprintf(&b, "\ndirty: %x\n", s.Dirty)
	return b.String()
}
