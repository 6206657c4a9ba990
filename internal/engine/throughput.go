package engine

import "github.com/ebbdb/ebb/internal/engine/throughput"

// Throughput (package throughput): each offer has a token bucket that
// every request's charge is taken from and whose spare units the purger
// spends. The engine decides which offer pays for a container: its own,
// else its database's shared one; a container with neither is not
// throttled.

// Provisioned throughput as the gateway hands it in.
type (
	Throughput        = throughput.Provisioned
	ThroughputHeaders = throughput.Headers
)

// bucketFor returns the bucket of the offer that pays for container c,
// or nil when none does.
func (e *Engine) bucketFor(c *container) *throughput.Bucket {
	return e.bucketIn(e.catalogSnapshot(), c)
}

// bucketIn is bucketFor with the catalog the caller already holds.
func (e *Engine) bucketIn(cat *catalog, c *container) *throughput.Bucket {
	o := cat.offerFor(c)
	if o == nil {
		return nil
	}
	return e.buckets.For(o.id, o.ru, e.real.Elapsed())
}

// offerFor returns the offer that pays for container c (its own, else its
// database's shared one), or nil when none does.
func (cat *catalog) offerFor(c *container) *offer {
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
	return o
}

// Admit checks, before a request on container dbID/collID runs, that its
// offer has throughput left. It always admits unless enforcement is on.
func (e *Engine) Admit(dbID, collID string) error {
	if !e.enforce {
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
	if ok, wait := b.Admit(e.real.Elapsed()); !ok {
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
		b.Charge(ru, e.real.Elapsed())
	}
}
