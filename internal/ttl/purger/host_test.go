package purger

import (
	"bytes"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/metrics"
)

// fakeHost is a Host without storage: each container is a sorted list of
// expiry instants, and every call is recorded.
type fakeHost struct {
	mu sync.Mutex
	// All fields are guarded by mu.
	containers map[ContainerID]*fakeContainer
	passes     int
	calls      map[string]int
	batches    []batchCall
	// onNextDeadline, if set, runs inside NextDeadline, without mu held.
	onNextDeadline func(c ContainerID)
}

type fakeContainer struct {
	label     string
	on        bool
	expiries  []int64 // of the unpurged items, sorted
	budget    *fakeBudget
	leaseWait time.Duration // > 0: another node holds the lease
	batchErr  error
	planErr   error // NextDeadline fails with it
}

// batchCall is one PurgeBatch call as the purger made it.
type batchCall struct {
	c     ContainerID
	from  Cursor
	now   int64
	limit int
	read  int
}

func newFakeHost() *fakeHost {
	return &fakeHost{containers: map[ContainerID]*fakeContainer{}, calls: map[string]int{}}
}

// add makes container c with TTL on and items expiring at the instants
// given.
func (h *fakeHost) add(c ContainerID, expiries ...int64) *fakeContainer {
	h.mu.Lock()
	defer h.mu.Unlock()
	fc := &fakeContainer{label: "db/" + strconv.Itoa(int(c[0])), on: true}
	h.containers[c] = fc
	fc.expiries = append(fc.expiries, expiries...)
	slices.Sort(fc.expiries)
	return fc
}

// update changes container c under the host's lock.
func (h *fakeHost) update(c ContainerID, fn func(fc *fakeContainer)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h.containers[c])
}

func (h *fakeHost) stored(c ContainerID) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.containers[c].expiries)
}

func (h *fakeHost) count(call string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[call]
}

func (h *fakeHost) batchCalls() []batchCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.batches)
}

// recordLocked counts a call. REQUIRES: h.mu held.
func (h *fakeHost) recordLocked(call string) { h.calls[call]++ }

func (h *fakeHost) record(call string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recordLocked(call)
}

func (h *fakeHost) Containers() []ContainerID {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recordLocked("Containers")
	var all []ContainerID
	for c := range h.containers {
		all = append(all, c)
	}
	return all
}

func (h *fakeHost) TTLOn(c ContainerID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	fc := h.containers[c]
	return fc != nil && fc.on
}

func (h *fakeHost) Label(c ContainerID) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.containers[c].label
}

func (h *fakeHost) NextDeadline(c ContainerID, from Cursor) (int64, bool, error) {
	h.mu.Lock()
	hook := h.onNextDeadline
	h.mu.Unlock()
	if hook != nil {
		hook(c)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recordLocked("NextDeadline")
	fc := h.containers[c]
	if fc.planErr != nil {
		return 0, false, fc.planErr
	}
	if len(fc.expiries) == 0 {
		return 0, false, nil
	}
	return fc.expiries[0], true, nil
}

func (h *fakeHost) HoldLease(c ContainerID) (bool, time.Duration, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recordLocked("HoldLease")
	wait := h.containers[c].leaseWait
	return wait == 0, wait, nil
}

func (h *fakeHost) Budget(c ContainerID) Budget {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b := h.containers[c].budget; b != nil {
		return b
	}
	return nil
}

func (h *fakeHost) CountDue(c ContainerID, now int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recordLocked("CountDue")
	n := 0
	for _, at := range h.containers[c].expiries {
		if at <= now {
			n++
		}
	}
	return n, nil
}

// PurgeBatch purges the earliest due items, one request unit each, and
// numbers its cursors: Own is the count of batches so far.
func (h *fakeHost) PurgeBatch(c ContainerID, from Cursor, now int64, limit int) (PurgeResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recordLocked("PurgeBatch")
	fc := h.containers[c]
	if fc.batchErr != nil {
		return PurgeResult{}, fc.batchErr
	}
	n := 0
	for n < len(fc.expiries) && n < limit && fc.expiries[n] <= now {
		n++
	}
	h.batches = append(h.batches, batchCall{c: c, from: from, now: now, limit: limit, read: n})
	r := PurgeResult{Read: n, Expiries: slices.Clone(fc.expiries[:n]), Units: float64(n)}
	r.Next = Cursor{Own: []byte(strconv.Itoa(len(h.batches)))}
	fc.expiries = fc.expiries[n:]
	return r, nil
}

// fakeBudget allows what it holds and refills only when told.
type fakeBudget struct {
	mu sync.Mutex
	// All fields but answered are guarded by mu.
	units   float64
	wait    time.Duration // what PurgeAllowance says when units < min
	charged float64
	answers int // PurgeAllowance calls
	// answered, when set, runs after each PurgeAllowance, as time that
	// passes before the purger acts on the answer.
	answered func()
}

func (b *fakeBudget) PurgeAllowance(min float64, now time.Duration) (float64, time.Duration) {
	if b.answered != nil {
		defer b.answered()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answers++
	if b.units >= min {
		return b.units, 0
	}
	return 0, b.wait
}

func (b *fakeBudget) answerCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.answers
}

func (b *fakeBudget) ChargePurge(ru float64, now time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.units -= ru
	b.charged += ru
}

func (b *fakeBudget) spent() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.charged
}

func (b *fakeBudget) refill(units float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.units = units
}

// start is the manual clocks' first reading.
var start = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

// rig is a purger over a fake host on manual clocks. Its purge instant
// is the engine's: a time guard over the manual engine clock.
type rig struct {
	h         *fakeHost
	clk, real *clock.Manual
	guard     *clock.TimeGuard
	m         *metrics.Registry
	p         *Purger
	lags      []time.Duration // guarded by lagsMu
	lagsMu    sync.Mutex
	log       lockedBuffer
}

// lockedBuffer is a bytes.Buffer that the purger's loop may write while a
// test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{h: newFakeHost(), clk: clock.NewManual(start), real: clock.NewManual(start), m: metrics.New()}
	g, _ := clock.NewTimeGuard(r.clk, 10*time.Minute, time.Time{})
	r.guard = g
	r.p = New(r.h, Config{
		Clock: r.clk, Real: r.real, ItemUnits: 1, Metrics: r.m,
		Log: slog.New(slog.NewTextHandler(&r.log, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		})),
		// Each pass reads the purge instant: the tests count passes so.
		Now: func() time.Time {
			r.h.record("Now")
			return g.Now()
		},
		WakeAt: g.WakeAt,
		OnPurge: func(lag time.Duration) {
			r.lagsMu.Lock()
			r.lags = append(r.lags, lag)
			r.lagsMu.Unlock()
		},
	})
	g.OnJump(r.p.Retime) // as the engine wires them
	t.Cleanup(r.p.Stop)
	return r
}

// startAndSettle starts the purger and waits until it has planned the
// host's containers: until n of them have a deadline.
func (r *rig) startAndSettle(t *testing.T, n int) {
	t.Helper()
	r.p.Start()
	waitUntil(t, "the first plan", func() bool { return len(r.p.State().Deadlines) == n })
}

func (r *rig) wakeups() float64 { return value(r.m.TTLPurgerWakeups) }

// value reads a counter or gauge, or a histogram's sample count.
func value(c interface{ Write(*dto.Metric) error }) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// checkFigures reports each figure whose value (first) is not the one
// wanted (second).
func checkFigures(t *testing.T, figures map[string][2]float64) {
	t.Helper()
	for name, f := range figures {
		if f[0] != f[1] {
			t.Errorf("%s = %v, want %v", name, f[0], f[1])
		}
	}
}

// waitUntil waits for cond, which the purger's goroutine makes true.
var waitUntil = clocktest.WaitUntil
