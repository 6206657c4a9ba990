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

// groupWrite is one brief transaction of a group test: domain's lock,
// and what its fn does.
type groupWrite struct {
	domain string
	fn     func(w storage.Writer) error
}

// inOneGroup runs writes as the members of one group: all of the
// process's groups in flight are first held up by a member that waits,
// so that writes all join the group forming behind them, which runs once
// those members are let go. It returns each write's error.
func inOneGroup(t *testing.T, s *Store, writes []groupWrite) []error {
	t.Helper()
	ctx := storage.Brief(context.Background())
	free := make(chan struct{})
	var holders sync.WaitGroup
	for i := range cap(s.grouper.slots) {
		holders.Go(func() {
			err := s.UpdateLocked(ctx, [][]byte{fmt.Appendf(nil, "lock/holder/%d", i)}, func(w storage.Writer) error {
				<-free
				return nil
			})
			if err != nil {
				t.Errorf("holder %d: %v", i, err)
			}
		})
		awaitGroups(t, s, func() bool { return len(s.grouper.slots) == i+1 && s.grouper.forming == nil })
	}

	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panicked: %v", p)
				}
			}()
			errs[i] = s.UpdateLocked(ctx, [][]byte{[]byte(w.domain)}, w.fn)
		})
	}
	awaitGroups(t, s, func() bool { return s.grouper.forming != nil && len(s.grouper.forming.members) == len(writes) })
	close(free)
	holders.Wait()
	wg.Wait()
	if s.grouper.forming != nil {
		t.Errorf("a forming group left behind: %v", s.grouper.forming)
	}
	return errs
}

// checkNothingLeft checks that no turn is held or awaited.
func checkNothingLeft(t *testing.T, s *Store) {
	t.Helper()
	if len(s.turns.domains) != 0 {
		t.Errorf("turns left behind: %v", s.turns.domains)
	}
}

// awaitGroups polls until done, which reads the store's groups, holds.
func awaitGroups(t *testing.T, s *Store, done func() bool) {
	t.Helper()
	for waited := clock.NewSystem(); ; runtime.Gosched() {
		s.grouper.mu.Lock()
		ok := done()
		s.grouper.mu.Unlock()
		if ok {
			return
		}
		if waited.Elapsed() > 10*time.Second {
			t.Fatal("the groups did not reach the state the test waits for")
		}
	}
}

// readThenWrite reads key and then writes it, and the domain's lock.
func readThenWrite(domain, key string) groupWrite {
	return groupWrite{domain, func(w storage.Writer) error {
		if _, err := w.Get([]byte(key)); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if err := w.Set([]byte(key), []byte("v")); err != nil {
			return err
		}
		return w.Set([]byte(domain), []byte("state"))
	}}
}

// TestGroupsCommitTogether checks that brief transactions of different
// domains that wait for a slot run as one group and all commit.
func TestGroupsCommitTogether(t *testing.T) {
	s := openStore(t, freshSchema(t), Options{MaxConns: 6})
	var writes []groupWrite
	for i := range 6 {
		writes = append(writes, readThenWrite(fmt.Sprintf("lock/%d", i), fmt.Sprintf("k/%d", i)))
	}
	for i, err := range inOneGroup(t, s, writes) {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if got := s.Stats().Grouped; got != 6 {
		t.Errorf("%d transactions ran in groups of several, want 6", got)
	}
	if got := s.Stats().Regrouped; got != 0 {
		t.Errorf("%d transactions ran again alone, want 0", got)
	}
	checkNothingLeft(t, s)
	for i := range 6 {
		if v, err := s.Get(context.Background(), fmt.Appendf(nil, "k/%d", i)); err != nil || string(v) != "v" {
			t.Errorf("k/%d = %q, %v", i, v, err)
		}
	}
}

// TestGroupMemberFailures checks what a member's failure does to the
// others: one that fails having written nothing to the database leaves
// them to commit; one that fails after sending writes ahead of a read
// rolls the group back, and the others run again alone and commit; one
// that panics does not hang them. Nothing of a failed member lands.
func TestGroupMemberFailures(t *testing.T) {
	s := openStore(t, freshSchema(t), Options{MaxConns: 6})
	errOwn := errors.New("the transaction's own failure")
	writes := []groupWrite{
		readThenWrite("lock/0", "k/0"),
		readThenWrite("lock/1", "k/1"),
		{"lock/flushed", func(w storage.Writer) error {
			if err := w.Set([]byte("k/flushed"), []byte("v")); err != nil {
				return err
			}
			if _, err := w.Get([]byte("k/0")); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			return errOwn
		}},
		{"lock/buffered", func(w storage.Writer) error {
			if err := w.Set([]byte("k/buffered"), []byte("v")); err != nil {
				return err
			}
			return errOwn
		}},
		{"lock/panics", func(w storage.Writer) error {
			if err := w.Set([]byte("k/panics"), []byte("v")); err != nil {
				return err
			}
			panic("a bug in fn")
		}},
	}
	errs := inOneGroup(t, s, writes)
	for i, err := range errs[:2] {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	for i, err := range errs[2:4] {
		if !errors.Is(err, errOwn) {
			t.Errorf("failing write %d: %v, want its own error", i+2, err)
		}
	}
	if errs[4] == nil {
		t.Error("the panicking write returned nil")
	}
	if got := s.Stats().Regrouped; got != 2 {
		t.Errorf("%d transactions ran again alone, want 2 (the group was rolled back)", got)
	}
	checkNothingLeft(t, s)
	ctx := context.Background()
	for _, k := range []string{"k/0", "k/1"} {
		if v, err := s.Get(ctx, []byte(k)); err != nil || string(v) != "v" {
			t.Errorf("%s = %q, %v", k, v, err)
		}
	}
	for _, k := range []string{"k/flushed", "k/buffered", "k/panics"} {
		if _, err := s.Get(ctx, []byte(k)); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s of a failed write: %v, want ErrNotFound", k, err)
		}
	}
}

// TestGroupMemberStuck checks that a member whose lock another
// transaction holds past the statement timeout fails alone: the group
// fails with it, and the others run again alone and commit.
func TestGroupMemberStuck(t *testing.T) {
	s := openStore(t, freshSchema(t), Options{MaxConns: 6, StatementTimeout: 300 * time.Millisecond})
	stuck := "lock/stuck"
	letGo := holdLock(t, s, [][]byte{[]byte(stuck)})
	writes := []groupWrite{readThenWrite(stuck, "k/stuck")}
	for i := range 3 {
		writes = append(writes, readThenWrite(fmt.Sprintf("lock/%d", i), fmt.Sprintf("k/%d", i)))
	}
	errs := inOneGroup(t, s, writes)
	if !errors.Is(errs[0], storage.ErrUnavailable) {
		t.Errorf("the stuck write: %v, want ErrUnavailable", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if err := letGo(); err != nil {
		t.Fatal(err)
	}
	checkNothingLeft(t, s)
}
