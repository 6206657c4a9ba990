package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage"
)

// TestTurns checks the queue on its own: turnDepth transactions of a
// domain at once, the next when one gives its turn back, other domains
// unaffected, waits that end with the caller's context or the limit, and
// no entry left once nobody holds or awaits a domain.
func TestTurns(t *testing.T) {
	ctx := context.Background()
	var ts turns
	hot, other := [][]byte{[]byte("a")}, [][]byte{[]byte("b")}
	var releases []func()
	for range turnDepth {
		release, err := ts.take(ctx, hot, 0)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	// Another domain, and several at once including a full one, in order.
	releaseOther, err := ts.take(ctx, other, 0)
	if err != nil {
		t.Fatalf("another domain: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := ts.take(short, [][]byte{[]byte("a"), []byte("c")}, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a full domain, the caller's deadline passed: %v", err)
	}
	if _, err := ts.take(ctx, [][]byte{[]byte("0"), []byte("a")}, 50*time.Millisecond); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("a full domain, the limit passed: %v, want ErrUnavailable", err)
	}
	if d := ts.domains["0"]; d != nil {
		t.Fatalf("a domain taken by a wait that failed is still held: %+v", d)
	}

	// A waiter gets its turn when one is given back.
	got := make(chan error, 1)
	go func() {
		release, err := ts.take(ctx, hot, 0)
		if err == nil {
			release()
		}
		got <- err
	}()
	awaitUsers(t, &ts, "a", turnDepth+1)
	select {
	case err := <-got:
		t.Fatalf("took a turn in a full domain: %v", err)
	default:
	}
	releases[0]()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	for _, release := range releases[1:] {
		release()
	}
	releaseOther()
	if len(ts.domains) != 0 {
		t.Fatalf("entries left with nobody holding or awaiting them: %v", ts.domains)
	}
}

// TestHotDomainLeavesThePool writes to one lock domain from more
// goroutines than the pool has connections while one of them holds the
// lock: the others wait without taking the pool, so a read of other data
// still gets a connection, and every write lands once the lock is free.
func TestHotDomainLeavesThePool(t *testing.T) {
	const conns, writers = 3, 6
	s := openStore(t, freshSchema(t), Options{MaxConns: conns, StatementTimeout: 30 * time.Second})
	ctx := context.Background()
	lock := [][]byte{[]byte("lock/hot")}
	letGo := holdLock(t, s, lock)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			errs <- s.UpdateLocked(ctx, lock, func(w storage.Writer) error {
				return w.Set(fmt.Appendf(nil, "k/%d", i), []byte("v"))
			})
		})
	}
	awaitUsers(t, &s.turns, "lock/hot", writers+1)

	readCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := s.Get(readCtx, []byte("elsewhere")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a read while writers queue on one lock: %v, want ErrNotFound", err)
	}
	if n := s.pool.Stat().AcquiredConns(); n > turnDepth {
		t.Errorf("the hot domain's writers hold %d connections, want at most %d", n, turnDepth)
	}

	if err := letGo(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range writers {
		if _, err := s.Get(ctx, fmt.Appendf(nil, "k/%d", i)); err != nil {
			t.Errorf("writer %d's key: %v", i, err)
		}
	}
	if len(s.turns.domains) != 0 {
		t.Errorf("entries left after every writer finished: %v", s.turns.domains)
	}
}

// TestHotDomainWaitIsBounded checks that writers queued behind a lock
// that is not given back fail after the statement timeout, whether they
// wait at the database's row lock or in the process's queue, as storage
// being unavailable for now (a 503 the SDKs retry).
func TestHotDomainWaitIsBounded(t *testing.T) {
	const waiters = turnDepth + 1 // one at the row lock, the rest in the queue
	s := openStore(t, freshSchema(t), Options{StatementTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	lock := [][]byte{[]byte("lock/stuck")}
	letGo := holdLock(t, s, lock)
	errs := make(chan error, waiters)
	for range waiters {
		go func() {
			errs <- s.UpdateLocked(ctx, lock, func(w storage.Writer) error {
				return w.Set([]byte("k"), []byte("v"))
			})
		}()
	}
	for range waiters {
		if err := <-errs; !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("a writer behind a lock held past the statement timeout: %v, want ErrUnavailable", err)
		}
	}
	if err := letGo(); err != nil {
		t.Fatal(err)
	}
}

// holdLock starts a transaction in the domain of lock that has taken the
// lock when holdLock returns and keeps it until letGo is called; letGo
// returns the transaction's error. The lock's row is written first, as
// the engine writes a partition's state before any write in it: SELECT …
// FOR UPDATE locks only rows that exist. However the test ends, the
// transaction is let go before the store closes, which would otherwise
// wait for its connection.
func holdLock(t *testing.T, s *Store, lock [][]byte) (letGo func() error) {
	t.Helper()
	ctx := context.Background()
	if err := s.Update(ctx, func(w storage.Writer) error { return w.Set(lock[0], []byte("state")) }); err != nil {
		t.Fatal(err)
	}
	holding, free, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.UpdateLocked(ctx, lock, func(w storage.Writer) error {
			if _, err := w.Get(lock[0]); err != nil {
				return err
			}
			close(holding)
			<-free
			return nil
		})
	}()
	select {
	case <-holding:
	case err := <-done:
		t.Fatalf("taking the lock: %v", err)
	}
	letGo = sync.OnceValue(func() error {
		close(free)
		return <-done
	})
	t.Cleanup(func() { letGo() })
	return letGo
}

// awaitUsers polls until n transactions hold or await a turn in the
// domain of lock.
func awaitUsers(t *testing.T, ts *turns, lock string, n int) {
	t.Helper()
	for waited := clock.NewSystem(); ; runtime.Gosched() {
		ts.mu.Lock()
		users := 0
		if d := ts.domains[lock]; d != nil {
			users = d.users
		}
		ts.mu.Unlock()
		if users == n {
			return
		}
		if waited.Elapsed() > 10*time.Second {
			t.Fatalf("%d of %d transactions reached the queue of %s", users, n, lock)
		}
	}
}
