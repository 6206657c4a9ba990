package engine

import (
	"encoding/json"
	"math"
	"sync"
	"time"
)

// Throughput: each offer (a container's own, or a database's shared one)
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

// bucket is one offer's request-unit budget.
type bucket struct {
	mu sync.Mutex
	// All fields are guarded by mu.
	rate   float64 // RU/s
	tokens float64 // may be negative: debt from charges past the budget
	floor  float64 // purge-only units
	// floorRate is the purge floor's refill rate.
	floorRate float64
	last      time.Duration // real-clock reading of the last refill
}

func newBucket(rate, floorFraction float64, now time.Duration) *bucket {
	return &bucket{rate: rate, tokens: rate, floorRate: rate * floorFraction, floor: rate * floorFraction, last: now}
}

// refillLocked adds what the elapsed time earned. REQUIRES: b.mu held.
func (b *bucket) refillLocked(now time.Duration) {
	dt := (now - b.last).Seconds()
	if dt <= 0 {
		return
	}
	b.last = now
	b.tokens = math.Min(b.rate, b.tokens+dt*b.rate)
	b.floor = math.Min(b.floorRate, b.floor+dt*b.floorRate)
}

// admit reports whether a foreground request may start, and if not how
// long until the bucket holds units again.
func (b *bucket) admit(now time.Duration) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	if b.tokens > 0 {
		return true, 0
	}
	wait := time.Duration((-b.tokens + 1) / b.rate * float64(time.Second))
	return false, max(wait, time.Millisecond)
}

// charge takes a finished request's units.
func (b *bucket) charge(ru float64, now time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	b.tokens -= ru
}

// PurgeAllowance returns how many units the purger may spend now, and if
// none, how long until the floor alone allows min units. A *bucket is
// the purger's Budget (purger.go).
func (b *bucket) PurgeAllowance(min float64, now time.Duration) (float64, time.Duration) {
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
func (b *bucket) ChargePurge(ru float64, now time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(now)
	spare := math.Max(0, b.tokens-b.rate/2)
	fromSpare := math.Min(spare, ru)
	b.tokens -= fromSpare
	b.floor -= ru - fromSpare
}

// offerRate reads an offer's RU/s from its content: the manual
// throughput, or the autoscale maximum.
func offerRate(raw []byte) float64 {
	var o struct {
		Content struct {
			OfferThroughput        float64 `json:"offerThroughput"`
			OfferAutopilotSettings *struct {
				MaxThroughput float64 `json:"maxThroughput"`
			} `json:"offerAutopilotSettings"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return 0
	}
	if a := o.Content.OfferAutopilotSettings; a != nil {
		return a.MaxThroughput
	}
	return o.Content.OfferThroughput
}

// throughput keeps the buckets, one per offer id, made on first use.
type throughput struct {
	buckets sync.Map // offer id → *bucket
	floor   float64
	enforce bool
}

// bucketFor returns the bucket of the offer that pays for container c,
// or nil when none does.
func (e *Engine) bucketFor(c *container) *bucket {
	return e.bucketIn(e.catalogSnapshot(), c)
}

// bucketIn is bucketFor with the catalog the caller already holds.
func (e *Engine) bucketIn(cat *catalog, c *container) *bucket {
	id := c.offerID
	if id == "" {
		if db, ok := cat.dbs[c.dbID]; ok {
			id = db.offerID
		}
	}
	o, ok := cat.offers[id]
	if id == "" || !ok || o.ru <= 0 {
		return nil
	}
	if v, ok := e.tp.buckets.Load(id); ok {
		b := v.(*bucket)
		b.setRate(o.ru, e.tp.floor)
		return b
	}
	v, _ := e.tp.buckets.LoadOrStore(id, newBucket(o.ru, e.tp.floor, e.real.Elapsed()))
	return v.(*bucket)
}

// setRate follows a replaced offer.
func (b *bucket) setRate(rate, floorFraction float64) {
	b.mu.Lock()
	b.rate, b.floorRate = rate, rate*floorFraction
	b.mu.Unlock()
}

// Admit checks, before a request on container dbID/collID runs, that its
// offer has throughput left. It always admits unless enforcement is on.
func (e *Engine) Admit(dbID, collID string) error {
	if !e.tp.enforce {
		return nil
	}
	cat := e.catalogSnapshot()
	c, err := cat.container(dbID, collID)
	if err != nil {
		return nil // the handler reports the missing container
	}
	b := e.bucketIn(cat, c)
	if b == nil {
		return nil
	}
	if ok, wait := b.admit(e.real.Elapsed()); !ok {
		return &Error{Kind: KindTooManyRequests, SubStatus: 3200, RetryAfter: wait,
			Message: "Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later."}
	}
	return nil
}

// Charge records a finished request's cost against its offer.
func (e *Engine) Charge(dbID, collID string, ru float64) {
	cat := e.catalogSnapshot()
	c, err := cat.container(dbID, collID)
	if err != nil {
		return
	}
	if b := e.bucketIn(cat, c); b != nil {
		b.charge(ru, e.real.Elapsed())
	}
}
