package engine

import (
	"context"
	"time"

	"github.com/ebbdb/ebb/internal/query"
)

// A query's executor bounds its own loops (query/meter.go). Some work
// over a container's items runs outside it, before the executor sees a
// row: reading the vectors or the full-text index a search ranks by
// into memory, counting the full-text statistics a FullTextScore
// ranks by; and a script's lookup of a document by _rid reads its
// partition outside the script runtime's bounds. A workMeter bounds such
// a loop the same way: every workCheckEvery steps it asks the context
// whether the client is still there and the query clock whether the
// budget (the page's, the script's) is spent. The loops over what those
// reads hold in memory (ranking the vectors, scoring the postings) take
// a small part of the time it took to read it, and are not metered.

// workCheckEvery is the number of steps between two checks; a variable
// so tests can shrink it.
var workCheckEvery = 1024

// workMeter bounds one loop over user data by a request's context and
// a deadline on the query clock's scale.
type workMeter struct {
	ctx     context.Context
	elapsed func() time.Duration
	// deadline is when the budget is spent; there is none without a
	// budget.
	deadline  time.Duration
	hasBudget bool
	left      int
	// spent is the message of the error that stops the work.
	spent string
}

// workMeter returns a meter for work that may run until budget past
// start, both on the query clock's scale (budget <= 0: no bound), and
// is then stopped with a 408 saying spent.
func (e *Engine) workMeter(ctx context.Context, start, budget time.Duration, spent string) *workMeter {
	return &workMeter{ctx: ctx, elapsed: e.queryClock.Elapsed, deadline: start + budget, hasBudget: budget > 0, left: workCheckEvery, spent: spent}
}

// step counts one step of work and returns an error once the context is
// done or the budget spent: the work must stop.
func (m *workMeter) step() error {
	if m.left--; m.left > 0 {
		return nil
	}
	m.left = workCheckEvery
	if err := m.ctx.Err(); err != nil {
		return err
	}
	if m.hasBudget && m.elapsed() >= m.deadline {
		return &Error{Kind: KindRequestTimeout, Message: m.spent}
	}
	return nil
}

// meteredSource is a query.Source whose scans step m once per item and
// stop with its error.
type meteredSource struct {
	query.Source
	m *workMeter
}

func (s meteredSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	var stopped error
	err := s.Source.Scan(after, func(key, doc []byte) bool {
		if stopped = s.m.step(); stopped != nil {
			return false
		}
		return yield(key, doc)
	})
	if err == nil {
		err = stopped
	}
	return err
}
