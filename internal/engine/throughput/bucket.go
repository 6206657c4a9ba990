// Package throughput owns request units: the cost model every response's
// x-ms-request-charge comes from (units.go), the throughput a client
// provisions and its rules (offer.go), and the token bucket of each
// offer that admits requests, takes their charges and leaves the TTL
// purger the units foreground work did not use (bucket.go). The engine
// decides which offer pays for a container and keeps one Bucket per
// offer (Buckets).
//
// # Buckets
//
// Each offer (a container's own, or a database's shared one)
// has a token bucket of request units that refills at the offer's RU/s
// and holds at most one second of it. Every request's charge is taken
// from its offer's bucket (which may go into debt), so the bucket always
// knows what foreground work left unused. With enforcement on, a request
// that finds its bucket empty gets 429 with the time until it refills.
//
// The purger spends only spare units: what stands in the bucket above
// half its capacity, so foreground bursts keep their headroom, plus a
// separate floor bucket that refills at a fixed fraction of the offer
// (default 5%) and guarantees that a saturated container still drains.
// Containers without an offer (none of their own and no shared one) are
// not throttled.
//
// Buckets refill on the real clock: RU/s is a budget of real machine
// time, even when the engine's clock is manual.
package throughput

import (
	"math"
	"sync"
	"time"
)

// Bucket is one offer's request-unit budget.
type Bucket struct {
	mu sync.Mutex
	// All fields are guarded by mu.
	rate   float64 // RU/s
	tokens float64 // may be negative: debt from charges past the budget
	floor  float64 // purge-only units
	// floorRate is the purge floor's refill rate.
	floorRate float64
	last      time.Duration // real-clock reading of the last refill
}

func NewBucket(rate, floorFraction float64, now time.Duration) *Bucket {
	return &Bucket{rate: rate, tokens: rate, floorRate: rate * floorFraction, floor: rate * floorFraction, last: now}
}

// refillLocked adds what the elapsed time earned. REQUIRES: b.mu held.
func (b *Bucket) refillLocked(now time.Duration) {
	dt := (now - b.last).Seconds()
	if dt <= 0 {
		return
	}
	b.last = now
	b.tokens = math.Min(b.rate, b.tokens+dt*b.rate)
	b.floor = math.Min(b.floorRate, b.floor+dt*b.floorRate)
}

// Admit reports whether a foreground request may start, and if not how
// long until the bucket holds units again.
func (b *Bucket) Admit(now time.Duration) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	if b.tokens > 0 {
		return true, 0
	}
	wait := time.Duration((-b.tokens + 1) / b.rate * float64(time.Second))
	return false, max(wait, time.Millisecond)
}

// Charge takes a finished request's units.
func (b *Bucket) Charge(ru float64, now time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	b.tokens -= ru
}

// PurgeAllowance returns how many units the purger may spend now, and if
// none, how long until the floor alone allows min units. A *Bucket is
// the purger's Budget (package ttl/purger).
func (b *Bucket) PurgeAllowance(min float64, now time.Duration) (float64, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	allow := math.Max(0, b.tokens-b.rate/2) + b.floor
	if allow >= min {
		return allow, 0
	}
	if b.floorRate <= 0 {
		return 0, time.Second
	}
	return 0, time.Duration((min - allow) / b.floorRate * float64(time.Second))
}

// ChargePurge takes the purger's units: spare first, then the floor.
func (b *Bucket) ChargePurge(ru float64, now time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	spare := math.Max(0, b.tokens-b.rate/2)
	fromSpare := math.Min(spare, ru)
	b.tokens -= fromSpare
	b.floor -= ru - fromSpare
}

// SetRate follows a replaced offer.
func (b *Bucket) SetRate(rate, floorFraction float64) {
	b.mu.Lock()
	b.rate, b.floorRate = rate, rate*floorFraction
	b.mu.Unlock()
}

// Buckets holds one Bucket per offer id, made on first use.
type Buckets struct {
	m sync.Map // offer id → *Bucket
	// Floor is the share of an offer the purger may always spend.
	Floor float64
}

// For returns the bucket of offer id at rate RU/s, following a changed
// rate; now is the real clock's reading.
func (bs *Buckets) For(id string, rate float64, now time.Duration) *Bucket {
	if v, ok := bs.m.Load(id); ok {
		b := v.(*Bucket)
		b.SetRate(rate, bs.Floor)
		return b
	}
	v, _ := bs.m.LoadOrStore(id, NewBucket(rate, bs.Floor, now))
	return v.(*Bucket)
}
