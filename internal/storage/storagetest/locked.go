package storagetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

// testLockedCounters runs read-increment-writes of two counters in one
// lock domain (the lock key is not one of them) from many goroutines:
// some in the domain (UpdateLocked), some in it and a second domain at
// once, and some as Updates that write the lock, as the contract allows;
// and, meanwhile, increments in the second domain alone. A lost update
// shows up as a short total.
func testLockedCounters(t *testing.T, s storage.Store) {
	set(t, s, kv{"lock/a", "state"}, kv{"lock/b", "state"})
	const workers, increments = 6, 60
	ctx := context.Background()
	incr := func(w storage.Writer, keys ...string) error {
		for _, k := range keys {
			n, err := readInt(w, k)
			if err != nil {
				return err
			}
			if err := writeInt(w, k, n+1); err != nil {
				return err
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for range increments {
				var err error
				both := false
				switch i % 3 {
				case 0: // in domain a
					err = s.UpdateLocked(ctx, [][]byte{[]byte("lock/a")}, func(w storage.Writer) error {
						return incr(w, "a/x", "a/y")
					})
				case 1: // in both domains at once, the locks given out of order
					both = true
					err = s.UpdateLocked(ctx, [][]byte{[]byte("lock/b"), []byte("lock/a")}, func(w storage.Writer) error {
						return incr(w, "a/x", "a/y", "b/x")
					})
				case 2: // an Update that writes domain a's lock
					err = s.Update(ctx, func(w storage.Writer) error {
						v, err := w.Get([]byte("lock/a"))
						if err != nil {
							return err
						}
						if err := w.Set([]byte("lock/a"), v); err != nil {
							return err
						}
						return incr(w, "a/x", "a/y")
					})
				}
				if err == nil && !both {
					err = s.UpdateLocked(ctx, [][]byte{[]byte("lock/b")}, func(w storage.Writer) error {
						return incr(w, "b/x")
					})
				}
				if err != nil {
					t.Errorf("increment: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	total := strconv.Itoa(workers * increments)
	wantValue(t, s, "a/x", total)
	wantValue(t, s, "a/y", total)
	wantValue(t, s, "b/x", total)
	wantValue(t, s, "lock/a", "state")
}

// testLockedReads checks what fn sees of its lock: the value locked,
// then its own writes of it; an absent lock reads as absent and locks
// nothing, and the transaction still commits.
func testLockedReads(t *testing.T, s storage.Store) {
	set(t, s, kv{"lock", "v1"})
	ctx := context.Background()
	err := s.UpdateLocked(ctx, [][]byte{[]byte("lock")}, func(w storage.Writer) error {
		if v, _, err := read(w, "lock"); err != nil || v != "v1" {
			t.Errorf("lock reads %q, %v; want v1", v, err)
		}
		if err := w.Set([]byte("lock"), []byte("v2")); err != nil {
			return err
		}
		if v, _, err := read(w, "lock"); err != nil || v != "v2" {
			t.Errorf("lock after Set reads %q, %v; want v2", v, err)
		}
		if err := w.DeleteRange([]byte("l"), []byte("m")); err != nil {
			return err
		}
		if _, found, err := read(w, "lock"); err != nil || found {
			t.Errorf("lock after DeleteRange: found %t, %v", found, err)
		}
		return w.Set([]byte("lock"), []byte("v3"))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, "lock", "v3")

	err = s.UpdateLocked(ctx, [][]byte{[]byte("absent")}, func(w storage.Writer) error {
		if _, err := w.Get([]byte("absent")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("absent lock: Get = %v, want ErrNotFound", err)
		}
		return w.Set([]byte("other"), []byte("x"))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, "other", "x")
	if _, found := get(t, s, "absent"); found {
		t.Error("an absent lock was created")
	}

	// An error writes nothing, the lock included.
	boom := errors.New("boom")
	err = s.UpdateLocked(ctx, [][]byte{[]byte("lock")}, func(w storage.Writer) error {
		w.Set([]byte("lock"), []byte("v4"))
		w.Set([]byte("other"), []byte("y"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateLocked = %v, want fn's error", err)
	}
	wantValue(t, s, "lock", "v3")
	wantValue(t, s, "other", "x")
}
