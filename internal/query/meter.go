package query

import (
	"context"
	"errors"
	"time"
)

// The meter bounds one page's work. Every unit of work the evaluator
// does counts down to the next check: a document read, each step of a
// FROM/JOIN loop (the binding of one value, at every level, in the query
// and in its subqueries), a stretch of an IN list, a spatial function's
// pass over a geometry (spatial.go). Every checkEvery units
// the meter asks the request's context whether the client is still there
// and the clock whether the page's budget is spent, so a check costs a
// counter decrement per unit and a clock read per thousand. Because the
// check sits in the FROM/JOIN loop itself, it fires inside the
// evaluation of one document too: a JOIN over a large array is a
// cartesian product within a single document.
//
// Once a check fails the meter halts: evaluation unwinds (every loop
// returns false, values computed after the halt are never used) and the
// executor decides what the page returns (exec.go): the rows it has with
// a continuation, or an error.

// checkEvery is the number of work units between two checks of the
// context and the clock; a variable so tests can shrink it.
var checkEvery = 1024

// errBudget is the meter's halt reason when the page's budget is spent.
var errBudget = errors.New("query: page budget spent")

// BudgetError is returned by Page when the page's budget ran out before
// it had anything it may return.
type BudgetError struct {
	Budget time.Duration
	// AllRows says the query must see every row before it can return
	// any (ORDER BY read from a scan, aggregates, GROUP BY, DISTINCT, a
	// query without FROM), so no part of its result can be returned
	// with a continuation. Otherwise a single row took the whole budget.
	AllRows bool
}

func (e *BudgetError) Error() string {
	if e.AllRows {
		return "query: the page budget of " + e.Budget.String() + " ran out before the query saw every row it must see to return any"
	}
	return "query: the page budget of " + e.Budget.String() + " ran out while evaluating a single row"
}

// meter is the budget state of one evaluation; it lives in evalCtx.
type meter struct {
	// left is the number of units until the next check.
	left int
	ctx  context.Context
	// elapsed and deadline are the budget, on elapsed's scale; without a
	// budget elapsed is nil.
	elapsed  func() time.Duration
	deadline time.Duration
	// halt is why evaluation stopped: errBudget or the context's error;
	// nil while it runs. INVARIANT: once set it never changes.
	halt error
}

// start arms the meter for a page that started at t0 on elapsed's
// scale: ctx is checked every checkEvery units and, if budget > 0,
// elapsed against t0 + budget.
// REQUIRES: elapsed is not nil if budget > 0.
func (m *meter) start(ctx context.Context, elapsed func() time.Duration, t0, budget time.Duration) {
	m.left, m.ctx = checkEvery, ctx
	if budget > 0 {
		m.elapsed, m.deadline = elapsed, t0+budget
	}
}

// spend counts n units of work and reports whether evaluation may go on.
func (m *meter) spend(n int) bool {
	m.left -= n
	return m.left > 0 || m.check()
}

// check runs when the countdown ends: it halts evaluation if the context
// is done or the budget spent, and otherwise starts a new countdown.
func (m *meter) check() bool {
	if m.halt != nil {
		return false
	}
	m.left = checkEvery
	if m.ctx != nil {
		if err := m.ctx.Err(); err != nil {
			m.halt = err
			return false
		}
	}
	if m.elapsed != nil && m.elapsed() >= m.deadline {
		m.halt = errBudget
		return false
	}
	return true
}

// halted reports whether evaluation has stopped.
func (m *meter) halted() bool { return m.halt != nil }

// inListCost is the work of comparing a value with an IN list of n
// items, in meter units: a unit is about one FROM/JOIN step.
func inListCost(n int) int { return n / 32 }

// docCost is the work of reading a document of n bytes, in meter units.
func docCost(n int) int { return 1 + n>>12 }
