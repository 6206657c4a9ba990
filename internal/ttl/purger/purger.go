package purger

import (
	"log/slog"
	"sync"
	"time"
)

// Purger deletes expired items in the background (see the package doc).
// Its methods are safe for concurrent use.
type Purger struct {
	host Host
	cfg  Config

	mu sync.Mutex
	// deadlines is guarded by mu. INVARIANT: holds at most one entry per
	// container; an entry's at is no later than the container's earliest
	// real deadline (it may be earlier: a purge pass then finds nothing
	// and re-plans).
	deadlines deadlineHeap
	// dirty is guarded by mu: containers whose deadline must be re-read
	// from the host (TTL settings changed, or start-up).
	dirty map[ContainerID]bool
	// throttled is guarded by mu: containers with due items waiting for
	// throughput or for another node's lease to end (throttle.go).
	throttled map[ContainerID]throttled
	// lastLag is guarded by mu: per container, the largest purge lag of
	// its latest purge pass, for the TTL status.
	lastLag map[ContainerID]time.Duration
	// summaries is guarded by mu: per container, the purges not yet
	// reported in the log (summary.go).
	summaries map[ContainerID]*summary
	// notes is guarded by mu: how many times a write brought a deadline
	// forward. plan compares it before and after reading the host, so a
	// deadline a write noted meanwhile is never overwritten by a later
	// one read before that write.
	notes uint64
	// cursors is guarded by mu: per container, where its purge resumes.
	// INVARIANT: every expiry entry before a container's cursor has been
	// purged.
	cursors map[ContainerID]Cursor
	// running is guarded by mu: the loop runs.
	running bool

	wake    chan struct{} // buffered (1): a pending wake-up, never blocks
	stopped chan struct{} // closed by Stop
	done    chan struct{} // closed when the loop has returned
}

// maxBatch caps how many items one transaction purges, so a storm of
// expiries never holds the write path for long.
const maxBatch = 256

// New returns a purger over host; Start starts it.
func New(host Host, cfg Config) *Purger {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Purger{
		host:      host,
		cfg:       cfg,
		dirty:     map[ContainerID]bool{},
		throttled: map[ContainerID]throttled{},
		cursors:   map[ContainerID]Cursor{},
		lastLag:   map[ContainerID]time.Duration{},
		summaries: map[ContainerID]*summary{},
		wake:      make(chan struct{}, 1),
		stopped:   make(chan struct{}),
		done:      make(chan struct{}),
	}
}

// Start plans every container and starts the loop. A purger that is not
// started still takes notes (NoteExpiry) but purges nothing.
func (p *Purger) Start() {
	all := p.host.Containers()
	p.mu.Lock()
	for _, c := range all {
		p.dirty[c] = true
	}
	p.running = true
	p.mu.Unlock()
	go p.loop()
}

// Stop stops the loop and waits for it to return: a batch under way
// finishes first.
func (p *Purger) Stop() {
	p.mu.Lock()
	running := p.running
	p.running = false
	p.mu.Unlock()
	if running {
		close(p.stopped)
		<-p.done
	}
}

// Retime has the loop set its timer again, because the instants' place
// on the clock's readings has moved (Config.WakeAt answers earlier): the
// time guard saw the wall clock jump ahead (clock.TimeGuard.OnJump).
func (p *Purger) Retime() { p.signal() }

func (p *Purger) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// NoteExpiry tells the purger that a write stored an item of c expiring
// at at (epoch seconds). It wakes the loop if that brings the earliest
// deadline forward.
func (p *Purger) NoteExpiry(c ContainerID, at int64) {
	p.mu.Lock()
	p.notes++
	earlier := p.deadlines.lower(c, at)
	p.mu.Unlock()
	if earlier {
		p.signal()
	}
}

// Replan re-reads c's deadline after its TTL settings changed.
func (p *Purger) Replan(c ContainerID) {
	p.mu.Lock()
	p.dirty[c] = true
	// A new defaultTtl moves the due bound of the default keyspace,
	// possibly backwards: scan it from the start again.
	delete(p.cursors, c)
	p.mu.Unlock()
	p.signal()
}

// ReplanAll re-reads every container's deadline: after a catalog reload,
// and periodically on a shared store, where other nodes' writes do not
// wake this purger.
func (p *Purger) ReplanAll() {
	all := p.host.Containers()
	p.mu.Lock()
	for _, c := range all {
		p.dirty[c] = true
	}
	p.mu.Unlock()
	p.signal()
}

// Forget drops a deleted container.
func (p *Purger) Forget(c ContainerID) {
	p.mu.Lock()
	p.deadlines.remove(c)
	delete(p.dirty, c)
	delete(p.throttled, c)
	delete(p.cursors, c)
	delete(p.lastLag, c)
	delete(p.summaries, c)
	p.mu.Unlock()
}

// LastLag is the largest purge lag of c's latest purge pass, and false if
// this purger has not purged any of c's items since it started.
func (p *Purger) LastLag(c ContainerID) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.lastLag[c]
	return d, ok
}

func (p *Purger) loop() {
	defer close(p.done)
	for {
		p.planDirty()
		p.mu.Lock()
		next, ok := p.deadlines.peek()
		retry, throttled := p.earliestRetryLocked()
		p.mu.Unlock()
		var timer, retryTimer <-chan struct{}
		cancel, cancelRetry := func() {}, func() {}
		if ok {
			// An absolute target on the clock's monotonic axis, which a
			// wall-clock fault does not move, so that time passing
			// meanwhile is not lost.
			timer, cancel = p.cfg.Clock.At(p.cfg.WakeAt(time.Unix(next.at, 0)))
		}
		if throttled {
			retryTimer, cancelRetry = p.cfg.Real.At(retry)
		}
		select {
		case <-p.stopped:
			cancel()
			cancelRetry()
			return
		case <-p.wake:
		case <-timer:
		case <-retryTimer:
		}
		cancel()
		cancelRetry()
		p.cfg.Metrics.TTLPurgerWakeups.Inc()
		p.resumeThrottled()
		p.purgeDue()
	}
}

// planDirty reads the next deadline of every dirty container.
func (p *Purger) planDirty() {
	p.mu.Lock()
	dirty := p.dirty
	p.dirty = map[ContainerID]bool{}
	p.mu.Unlock()
	for c := range dirty {
		p.plan(c)
	}
}

// planRetry is how long a container whose deadline could not be read
// waits (on the real clock) to be planned again.
const planRetry = time.Second

// plan sets c's deadline from the host (two seeks, only when a container
// changes or a purge pass ends), or forgets c if its TTL is off.
func (p *Purger) plan(c ContainerID) {
	if !p.host.TTLOn(c) {
		p.Forget(c)
		return
	}
	p.mu.Lock()
	notes := p.notes
	p.mu.Unlock()
	at, ok, err := p.host.NextDeadline(c, p.cursor(c))
	if err != nil {
		// c may have no deadline in the heap now (a pass just took it
		// off): try again shortly rather than forget it until a write.
		p.cfg.Log.Error("ttl: read next deadline", "container", p.host.Label(c), "err", err)
		p.mu.Lock()
		p.throttled[c] = throttled{retry: p.cfg.Real.Elapsed() + planRetry, replan: true}
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.notes != notes:
		// A write may have noted an earlier deadline than the host showed
		// this read: keep whichever is earlier.
		if ok {
			p.deadlines.lower(c, at)
		}
	case ok:
		p.deadlines.set(c, at)
	default:
		p.deadlines.remove(c)
	}
}

// cursor is where c's purge resumes.
func (p *Purger) cursor(c ContainerID) Cursor {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cursors[c] // the zero Cursor when none
}
