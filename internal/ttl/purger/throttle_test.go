package purger

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// throttledFor waits until c is throttled and returns its retry reading.
func (r *rig) throttledFor(t *testing.T, c ContainerID) time.Duration {
	t.Helper()
	var retry time.Duration
	waitUntil(t, "the container to be throttled", func() bool {
		th, ok := r.p.State().Throttled[c]
		retry = th.Retry
		return ok
	})
	return retry
}

// TestThrottledWaitsOnRealClock: the purger spends what the budget
// allows, then waits for the real clock, not the engine's, and reports
// the wait and the backlog meanwhile.
func TestThrottledWaitsOnRealClock(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	fc := r.h.add(a, s0+1, s0+1, s0+1, s0+1, s0+1)
	b := &fakeBudget{units: 2, wait: 2 * time.Second}
	fc.budget = b
	r.startAndSettle(t, 1)

	r.clk.Advance(3 * time.Second)
	if retry := r.throttledFor(t, a); retry != 2*time.Second {
		t.Fatalf("retry at real %v, want 2s", retry)
	}
	// 2 units at 1 unit an item: one batch of 2, then nothing to spend.
	if calls := r.h.batchCalls(); len(calls) != 1 || calls[0].limit != 2 || calls[0].read != 2 {
		t.Fatalf("batches %+v, want one of 2", calls)
	}
	label := "db/1"
	checkFigures(t, map[string][2]float64{
		"units charged":     {b.spent(), 2},
		"throttled seconds": {value(r.m.TTLPurgeThrottled.WithLabelValues(label)), 2},
		"backlog":           {value(r.m.TTLBacklog.WithLabelValues(label)), 3},
		"oldest unpurged":   {value(r.m.TTLOldestUnpurged.WithLabelValues(label)), 2},
	})

	b.refill(100)
	r.real.Advance(2 * time.Second)
	waitUntil(t, "the purge after the real-clock wait", func() bool { return r.h.stored(a) == 0 })
	waitUntil(t, "the backlog gauge to clear", func() bool { return value(r.m.TTLBacklog.WithLabelValues(label)) == 0 })
}

// TestRetryCountsFromTheAnswer: a budget's wait counts from the real
// clock's reading it was given, not from a later one: with the clock
// advanced, between the answer and the purger acting on it, to just when
// the wait ends, the purger asks again at once instead of waiting as long
// again.
func TestRetryCountsFromTheAnswer(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	fc := r.h.add(a, s0+1)
	var once sync.Once
	b := &fakeBudget{wait: 2 * time.Second, answered: func() {
		once.Do(func() { r.real.Advance(2 * time.Second) })
	}}
	fc.budget = b
	r.startAndSettle(t, 1)

	r.clk.Advance(time.Second)
	waitUntil(t, "the budget to be asked again when its wait ends", func() bool { return b.answerCount() >= 2 })
}

// TestLeaseHeldElsewhere: while another node holds the lease the
// container waits, without reading its items, until the lease ends.
func TestLeaseHeldElsewhere(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	fc := r.h.add(a, s0+1)
	fc.leaseWait = 3 * time.Second
	r.startAndSettle(t, 1)

	r.clk.Advance(time.Second)
	if retry := r.throttledFor(t, a); retry != 3*time.Second {
		t.Fatalf("retry at real %v, want when the lease ends (3s)", retry)
	}
	if n := r.h.count("PurgeBatch"); n != 0 {
		t.Fatalf("%d batches without the lease", n)
	}
	r.h.update(a, func(fc *fakeContainer) { fc.leaseWait = 0 })
	r.real.Advance(3 * time.Second)
	waitUntil(t, "the purge once the lease is ours", func() bool { return r.h.stored(a) == 0 })
}

// TestFailedBatchRetries: a failing batch is tried again a second later
// on the real clock, never in a spin.
func TestFailedBatchRetries(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	fc := r.h.add(a, s0+1)
	fc.batchErr = errors.New("store down")
	r.startAndSettle(t, 1)

	r.clk.Advance(time.Second)
	if retry := r.throttledFor(t, a); retry != time.Second {
		t.Fatalf("retry at real %v, want 1s", retry)
	}
	r.h.update(a, func(fc *fakeContainer) { fc.batchErr = nil })
	r.real.Advance(time.Second)
	waitUntil(t, "the purge after the store recovered", func() bool { return r.h.stored(a) == 0 })
	if n := r.h.count("PurgeBatch"); n != 2 {
		t.Fatalf("%d batch calls, want the failed one and the retry", n)
	}
}

// TestFailedPlanRetries: when the next deadline cannot be read after a
// pass, the container is planned again after a wait on the real clock
// instead of dropping out until its next write.
func TestFailedPlanRetries(t *testing.T) {
	r := newRig(t)
	a := ContainerID{1}
	r.h.add(a, s0+1, s0+2)
	r.startAndSettle(t, 1)

	r.h.update(a, func(fc *fakeContainer) { fc.planErr = errors.New("store down") })
	r.clk.Advance(time.Second) // the pass purges the first item, then fails to plan
	if retry := r.throttledFor(t, a); retry != planRetry {
		t.Fatalf("replan at real %v, want %v", retry, planRetry)
	}
	r.h.update(a, func(fc *fakeContainer) { fc.planErr = nil })
	r.clk.Advance(time.Second)
	r.real.Advance(planRetry)
	waitUntil(t, "the purge after the store recovered", func() bool { return r.h.stored(a) == 0 })
}
