package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/storage"
)

// A group is several brief UpdateLocked transactions of a process
// (storage.Brief: point writes), with no lock domain in common, run as
// one database transaction: one BEGIN, one lock statement for all their
// locks, their reads in shared round trips, their writes in one statement
// of each kind, and one COMMIT. Each transaction's fn still runs in its
// caller's goroutine; its round trips go to the group's driver, which
// sends a round trip once every member still running has one to send, so
// a member waits for the others' reads as they wait for its own, and the
// group commits when its last member is done. That is why only brief
// transactions are grouped: a long one would hold the others up. What it
// buys: a database transaction, a WAL flush and most statements are paid
// once per group, not per write. Measured with pgx alone on Ebb's
// statements of an upsert (8 writers, 2-core machine), the database's
// CPU per write fell from 200–213 µs on their own to 135 µs in groups of
// 2, 94 µs in groups of 4 and 71 µs in groups of 8, and the client's from
// 79–89 µs to 37–62 µs.
//
// Domains are disjoint within a group, so what its members read and write
// is disjoint too (the domain rule, storage.Store), and running them in
// one transaction is running them side by side, as separate transactions
// would have run. A member that fails on its own leaves nothing: its
// writes are buffered until the group commits and are dropped. The one
// exception is a member that sent writes ahead of a read (a read after a
// write in its fn) and then failed: the group rolls back. The group then
// fails as a whole, as it does when a statement fails or its connection
// breaks, and every member whose fn did not fail on its own runs again
// alone, as after a conflict, so that one member's trouble (another
// node holding its lock past the statement timeout, a dead pooled
// connection) is not the others'. Two failures stand for every member
// instead: a COMMIT whose reply was lost, which may have committed, so
// its members report storage.ErrUnavailable and do not run again, as a
// transaction alone does; and no connection to be had, which each
// member alone would wait for as long again.
//
// Groups form while all of the process's slots for groups in flight
// (groupSlots) are taken: a transaction joins the group forming, or
// starts one, which leaves as soon as one in flight ends. With the
// database idle a transaction is a group of one and waits for nothing.
type grouper struct {
	mu      sync.Mutex
	forming *group        // the group taking members, if any
	slots   chan struct{} // a group holds one from its launch to its end
}

// groupSlots is how many groups of a process with a pool of maxConns
// connections send at once: half the pool, so that the process's other
// transactions keep the other half, and at least two, so that one
// group's members compute between its round trips while the other's are
// on the wire, and the two turns of a hot domain (turnDepth) run as they
// did before groups: one holding the row lock, the next waiting at it.
// A group's statements run one after the other in one database process,
// so slots are also how many of the database's cores a process's point
// writes can keep busy.
func groupSlots(maxConns int32) int {
	return max(turnDepth, int(maxConns)/2)
}

// maxGroupSize bounds a group's members, and so its statements.
const maxGroupSize = 32

// errGroupRolledBack is a group's failure when a member that had sent
// writes failed on its own.
var errGroupRolledBack = errors.New("postgres: a transaction of the group failed after sending writes")

type group struct {
	s       *Store
	members []*member
	locks   map[string]bool // every member's locks
	closed  chan struct{}   // closed at launch, when the group stops taking members
	// ctx carries the first member's values, and the latest of the
	// members' deadlines when every member has one.
	ctx         context.Context
	deadline    time.Time
	allDeadline bool
	// stands: the group's failure is its members' outcome, and they do
	// not run again alone: its COMMIT was sent and no reply came (it may
	// have committed), or no connection could be had (alone, each would
	// wait for one as long again).
	stands bool
}

// member is one transaction in a group, as the group's driver sees it.
type member struct {
	g   *group
	t   *txn
	req chan request // the transaction's round trips, then its end
	res chan error   // the result of a round trip, then the group's outcome

	// Set by the transaction before it sends them on req.
	flushed bool // it sent writes ahead of a read
	// Set by the driver.
	pending []stmt // the round trip it sent
	final   bool
	fnErr   error
}

// request is what a member sends its driver: a round trip (stmts, ending
// in a read), or the end of its fn (final), with fn's error.
type request struct {
	stmts []stmt
	final bool
	fnErr error
}

// step sends stmts with the group's next round trip and returns their
// result.
func (m *member) step(stmts []stmt) error {
	if len(stmts) > 1 {
		m.flushed = true
	}
	m.req <- request{stmts: stmts}
	return <-m.res
}

// updateGrouped runs fn as a member of a group. It returns done false when
// fn is to run again on its own transaction, and otherwise fn's outcome.
func (s *Store) updateGrouped(ctx context.Context, locks [][]byte, fn func(storage.Writer) error) (done bool, err error) {
	t := s.newTxn(ctx, "")
	t.locks, t.locked = locks, make(map[string]*lockedKey, len(locks))
	m := s.join(ctx, t)
	ended := false
	defer func() {
		if !ended { // fn panicked: the group must not wait for it
			m.req <- request{final: true, fnErr: errors.New("postgres: transaction function panicked")}
			<-m.res
		}
	}()
	fnErr := fn(t)
	if fnErr == nil {
		t.writeBackLocks()
	}
	m.req <- request{final: true, fnErr: fnErr}
	outcome := <-m.res
	ended = true
	t.done = true
	switch {
	case outcome == nil:
		return true, fnErr
	case t.err == nil && fnErr != nil:
		// fn failed on its own, and nothing of it was committed.
		return true, fnErr
	case m.g.stands || errors.Is(outcome, storage.ErrClosed):
		return true, outcome
	}
	s.regrouped.Add(1)
	return false, nil
}

// join adds t to the group forming, or starts one.
func (s *Store) join(ctx context.Context, t *txn) *member {
	m := &member{t: t, req: make(chan request), res: make(chan error)}
	t.member = m
	gr := &s.grouper
	for {
		gr.mu.Lock()
		g := gr.forming
		if g != nil && (len(g.members) == maxGroupSize || g.overlaps(t.locks)) {
			gr.mu.Unlock()
			<-g.closed
			continue
		}
		leader := g == nil
		if leader {
			g = &group{s: s, locks: map[string]bool{}, closed: make(chan struct{}), ctx: context.WithoutCancel(ctx), allDeadline: true}
			gr.forming = g
		}
		g.members = append(g.members, m)
		m.g = g
		for _, l := range t.locks {
			g.locks[string(l)] = true
		}
		if d, ok := ctx.Deadline(); !ok {
			g.allDeadline = false
		} else if d.After(g.deadline) {
			g.deadline = d
		}
		gr.mu.Unlock()
		if leader {
			go g.launch()
		}
		return m
	}
}

func (g *group) overlaps(locks [][]byte) bool {
	for _, l := range locks {
		if g.locks[string(l)] {
			return true
		}
	}
	return false
}

// launch waits for a slot, closes the group to new members and runs it.
func (g *group) launch() {
	gr := &g.s.grouper
	gr.slots <- struct{}{}
	defer func() { <-gr.slots }()
	gr.mu.Lock()
	if gr.forming == g {
		gr.forming = nil
	}
	close(g.closed)
	gr.mu.Unlock()
	if len(g.members) > 1 {
		g.s.grouped.Add(uint64(len(g.members)))
	}
	g.run()
}

// run is the group's driver: it sends the members' round trips, each
// once every member still running has sent it one, then their writes
// with COMMIT, and tells every member the outcome.
func (g *group) run() {
	ctx, cancel := context.WithCancel(g.ctx)
	if g.allDeadline {
		ctx, cancel = context.WithDeadline(g.ctx, g.deadline)
	}
	defer cancel()
	// As an Update attempt does, so that an exclusive attempt waits for
	// the group (Store.updateOnce).
	g.s.gate.RLock()
	defer g.s.gate.RUnlock()

	// cause is the driver's error that failed the group, which members
	// waiting for a round trip get as it is (their transaction wraps it,
	// as it wraps its own); failed is the group's outcome.
	var cause, failed error
	conn, err := g.s.pool.Acquire(ctx)
	if err != nil {
		cause, failed, g.stands = err, g.s.wrap(ctx, "begin", err), true
	}
	begun := false
	for {
		var reading []*member
		for _, m := range g.members {
			if m.final {
				continue
			}
			if r := <-m.req; r.final {
				m.final, m.fnErr = true, r.fnErr
			} else {
				m.pending = r.stmts
				reading = append(reading, m)
			}
		}
		if failed != nil {
			for _, m := range reading {
				m.res <- cause
			}
			if len(reading) == 0 {
				break
			}
			continue
		}
		var stmts []stmt
		if !begun {
			stmts = append(stmts, stmt{sql: "BEGIN ISOLATION LEVEL READ COMMITTED"}, g.lockStmt())
		}
		for _, m := range reading {
			stmts = append(stmts, m.pending...)
			m.pending = nil
		}
		last := len(reading) == 0
		if last {
			writes, err := g.writes()
			if err != nil {
				cause, failed = err, err
				break
			}
			if !begun && len(writes) == 0 {
				break // nothing read, nothing written
			}
			stmts = append(stmts, writes...)
			stmts = append(stmts, stmt{sql: sqlCommit})
		}
		begun = true
		if err := runBatch(ctx, conn, stmts); err != nil {
			op := "commit"
			if !last {
				op = "read"
			}
			cause, failed = err, g.s.wrap(ctx, op, err)
			g.stands = last && errors.Is(failed, storage.ErrUnavailable)
		}
		for _, m := range reading {
			m.res <- cause
		}
		if last {
			break
		}
	}
	if conn != nil {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			_, _ = conn.Exec(ctx, "ROLLBACK")
		}
		conn.Release()
	}
	for _, m := range g.members {
		m.res <- failed
	}
}

// lockStmt locks every member's locks, in key order, and hands each
// member what it read of its own.
func (g *group) lockStmt() stmt {
	locks := make([][]byte, 0, len(g.locks))
	for _, m := range g.members {
		locks = append(locks, m.t.locks...)
	}
	slices.SortFunc(locks, bytes.Compare)
	return lockStmt(locks, func(read map[string][]byte) {
		for _, m := range g.members {
			m.t.applyLock(read)
		}
	})
}

// writes are the statements of the writes of every member whose fn
// succeeded. It fails, and the group with it, when a member that sent
// writes failed, or when two members wrote the same key.
func (g *group) writes() ([]stmt, error) {
	var all writeSet
	for _, m := range g.members {
		if m.fnErr != nil {
			if m.flushed {
				return nil, errGroupRolledBack
			}
			continue
		}
		if err := all.add(m.t); err != nil {
			return nil, err
		}
	}
	return all.stmts(nil), nil
}

// add merges t's buffered writes, and the write-back of its locks, into
// the writes of the group's members before it. Members' domains are
// disjoint, so they write disjoint keys; two that write one key fail the
// group rather than depend on the order of their statements.
func (w *writeSet) add(t *txn) error {
	var own writeSet
	own.take(t)
	for k, v := range own.sets {
		if w.writes(k) {
			return fmt.Errorf("postgres: two transactions of a group wrote key %q", k)
		}
		if w.sets == nil {
			w.sets = map[string][]byte{}
		}
		w.sets[k] = v
	}
	for k := range own.dels {
		if _, set := w.sets[k]; set {
			return fmt.Errorf("postgres: two transactions of a group wrote key %q", k)
		}
		if w.dels == nil {
			w.dels = map[string]struct{}{}
		}
		w.dels[k] = struct{}{}
	}
	w.ranges = append(w.ranges, own.ranges...)
	w.touch = append(w.touch, own.touch...)
	return nil
}

// writes reports whether w sets or deletes key.
func (w *writeSet) writes(key string) bool {
	_, set := w.sets[key]
	_, del := w.dels[key]
	return set || del
}
