package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/storage"
)

// turns lets at most turnDepth of a process's UpdateLocked transactions
// of one lock domain past it at a time, before any of them takes a
// connection; the others wait here. They would run one at a time anyway,
// on the domain's row lock, but a writer waiting here holds no connection
// (so writers to one hot partition cannot take a node's whole pool from
// its other requests) and costs the database nothing, where a queue of
// writers at the row lock made PostgreSQL spend up to 1.3 ms of CPU per
// upsert in some runs (8 writers on one partition, docs/benchmarks.md).
// Transactions of other processes still meet at the row lock.
type turns struct {
	mu      sync.Mutex
	domains map[string]*domainTurn // a domain has an entry while a transaction holds or awaits it
}

// turnDepth is how many transactions of one domain a process lets go to
// the database at once: the one holding the row lock and the next, which
// waits at it, so that the lock passes on at commit without a round trip.
// With one, every write of a hot partition waited for the one before it
// to commit before sending its first statement: 11–13% of the pgx
// baseline on one partition against 12–14% with two.
const turnDepth = 2

// domainTurn is one lock domain's tokens: a transaction has its turn
// while its send into token has not been received back.
type domainTurn struct {
	token chan struct{}
	users int // transactions having or awaiting a turn
}

// take waits for a turn in every domain of locks, sorted and distinct,
// taking them in that order so that two transactions with several cannot
// wait for each other in a cycle. A wait longer than limit (when
// positive) fails as the database's lock wait fails after its
// statement_timeout, with storage.ErrUnavailable, so that the client
// retries later; a caller that gives up gets its context's error. The
// function returned gives the turns back.
func (ts *turns) take(ctx context.Context, locks [][]byte, limit time.Duration) (release func(), err error) {
	held := make([]*domainTurn, 0, len(locks))
	release = func() {
		for i := len(held) - 1; i >= 0; i-- {
			<-held[i].token
		}
		ts.leave(locks[:len(held)], held)
	}
	var expired <-chan time.Time // set at the first wait: most writes wait for nothing
	for i, lock := range locks {
		d := ts.join(lock)
		select {
		case d.token <- struct{}{}:
			held = append(held, d)
			continue
		default:
		}
		if expired == nil && limit > 0 {
			timer := time.NewTimer(limit)
			defer timer.Stop()
			expired = timer.C
		}
		select {
		case d.token <- struct{}{}:
			held = append(held, d)
			continue
		case <-ctx.Done():
			err = ctx.Err()
		case <-expired:
			err = fmt.Errorf("postgres: waited %s for a lock that this process's other writes held: %w", limit, storage.ErrUnavailable)
		}
		ts.leave(locks[i:i+1], []*domainTurn{d})
		release()
		return nil, err
	}
	return release, nil
}

// join counts one more user of lock's domain, creating its entry.
func (ts *turns) join(lock []byte) *domainTurn {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.domains == nil {
		ts.domains = map[string]*domainTurn{}
	}
	d := ts.domains[string(lock)]
	if d == nil {
		d = &domainTurn{token: make(chan struct{}, turnDepth)}
		ts.domains[string(lock)] = d
	}
	d.users++
	return d
}

// leave counts one user fewer of each domain, dropping an entry with
// none left.
func (ts *turns) leave(locks [][]byte, ds []*domainTurn) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for i, d := range ds {
		if d.users--; d.users == 0 {
			delete(ts.domains, string(locks[i]))
		}
	}
}
