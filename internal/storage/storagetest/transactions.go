package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

func testReadYourWrites(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "old"}, kv{"b", "b"}, kv{"c", "c"}, kv{"d", "d"}, kv{"e", "e"})
	err := s.Update(context.Background(), func(w storage.Writer) error {
		steps := []struct {
			name string
			op   func() error
			asc  []kv
		}{
			{"overwrite a", func() error { return w.Set(b("a"), b("new")) },
				[]kv{{"a", "new"}, {"b", "b"}, {"c", "c"}, {"d", "d"}, {"e", "e"}}},
			{"insert a1", func() error { return w.Set(b("a1"), b("x")) },
				[]kv{{"a", "new"}, {"a1", "x"}, {"b", "b"}, {"c", "c"}, {"d", "d"}, {"e", "e"}}},
			{"delete b", func() error { return w.Delete(b("b")) },
				[]kv{{"a", "new"}, {"a1", "x"}, {"c", "c"}, {"d", "d"}, {"e", "e"}}},
			{"delete range [c, e)", func() error { return w.DeleteRange(b("c"), b("e")) },
				[]kv{{"a", "new"}, {"a1", "x"}, {"e", "e"}}},
			{"set d inside the deleted range", func() error { return w.Set(b("d"), b("again")) },
				[]kv{{"a", "new"}, {"a1", "x"}, {"d", "again"}, {"e", "e"}}},
			{"reset b after its delete", func() error { return w.Set(b("b"), b("back")) },
				[]kv{{"a", "new"}, {"a1", "x"}, {"b", "back"}, {"d", "again"}, {"e", "e"}}},
			{"delete range [a1, b\\x00) over pending sets", func() error { return w.DeleteRange(b("a1"), b("b\x00")) },
				[]kv{{"a", "new"}, {"d", "again"}, {"e", "e"}}},
		}
		for _, st := range steps {
			if err := st.op(); err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			got, err := collect(w, nil, nil, false)
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(st.asc) {
				return fmt.Errorf("%s: Scan asc = %v, want %v", st.name, got, st.asc)
			}
			got, err = collect(w, nil, nil, true)
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			var desc []kv
			for i := len(st.asc) - 1; i >= 0; i-- {
				desc = append(desc, st.asc[i])
			}
			if fmt.Sprint(got) != fmt.Sprint(desc) {
				return fmt.Errorf("%s: Scan desc = %v, want %v", st.name, got, desc)
			}
			for _, k := range []string{"a", "a1", "b", "c", "d", "e"} {
				want, wantFound := "", false
				for _, p := range st.asc {
					if p.k == k {
						want, wantFound = p.v, true
					}
				}
				v, found, err := read(w, k)
				if err != nil {
					return fmt.Errorf("%s: %w", st.name, err)
				}
				if found != wantFound || v != want {
					return fmt.Errorf("%s: Get(%q) = %q found=%v, want %q found=%v", st.name, k, v, found, want, wantFound)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := scan(t, s, nil, nil, false)
	want := []kv{{"a", "new"}, {"d", "again"}, {"e", "e"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after commit: %v, want %v", got, want)
	}
}

// testScanAndDeleteInUpdate is the purger's pattern: walk a range and
// delete what was visited, in one Update.
func testScanAndDeleteInUpdate(t *testing.T, s storage.Store) {
	const n = 600
	var pairs []kv
	for i := range n {
		pairs = append(pairs, kv{fmt.Sprintf("exp/%04d", i), "x"}, kv{fmt.Sprintf("doc/%04d", i), "d"})
	}
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reverse=%v", reverse), func(t *testing.T) {
			set(t, s, pairs...)
			seen := 0
			update(t, s, func(w storage.Writer) error {
				seen = 0
				it := w.Scan(b("exp/"), b("exp0"), reverse)
				defer it.Close()
				for it.Next() {
					seen++
					id := bytes.TrimPrefix(it.Key(), b("exp/"))
					if err := w.Delete(append(b("doc/"), id...)); err != nil {
						return err
					}
					if err := w.Delete(it.Key()); err != nil {
						return err
					}
				}
				return it.Err()
			})
			if seen != n {
				t.Fatalf("visited %d keys, want %d", seen, n)
			}
			if got := scan(t, s, nil, nil, false); len(got) != 0 {
				t.Fatalf("%d keys left, first %v", len(got), got[0])
			}
		})
	}
}

func testUpdateErrorWritesNothing(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "1"}, kv{"b", "2"}, kv{"c", "3"})
	before := scan(t, s, nil, nil, false)
	errBoom := errors.New("boom")
	err := s.Update(context.Background(), func(w storage.Writer) error {
		if err := w.Set(b("a"), b("changed")); err != nil {
			return err
		}
		if err := w.Set(b("new"), b("x")); err != nil {
			return err
		}
		if err := w.Delete(b("b")); err != nil {
			return err
		}
		if err := w.DeleteRange(b("c"), nil); err != nil {
			return err
		}
		// Force a backend that buffers writes to send them.
		if _, _, err := read(w, "a"); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want the error fn returned", err)
	}
	if after := scan(t, s, nil, nil, false); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("failed Update changed the store: %v, want %v", after, before)
	}
}

func testEmptyUpdate(t *testing.T, s storage.Store) {
	update(t, s, func(storage.Writer) error { return nil })
	set(t, s, kv{"a", "1"})
	update(t, s, func(w storage.Writer) error {
		_, _, err := read(w, "a") // read-only Update
		return err
	})
	wantValue(t, s, "a", "1")
}

func testPanicInFn(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "1"})
	mustPanic := func(name string, call func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("%s: the panic in fn did not reach the caller", name)
			}
		}()
		call()
	}
	mustPanic("Update", func() {
		s.Update(context.Background(), func(w storage.Writer) error {
			if err := w.Set(b("a"), b("2")); err != nil {
				return err
			}
			if _, _, err := read(w, "a"); err != nil { // sends the write, if buffered
				return err
			}
			w.Scan(nil, nil, false) // left open
			panic("boom")
		})
	})
	mustPanic("View", func() {
		s.View(context.Background(), func(r storage.Reader) error {
			r.Scan(nil, nil, false).Next()
			panic("boom")
		})
	})
	// Both kinds of call still work, and the Update wrote nothing.
	wantValue(t, s, "a", "1")
	set(t, s, kv{"a", "3"})
	wantValue(t, s, "a", "3")
}

func testViewSnapshotIsolation(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "1"}, kv{"b", "1"}, kv{"gone", "1"})
	ctx := context.Background()
	started := make(chan struct{})
	committed := make(chan error)
	go func() {
		<-started
		committed <- s.Update(ctx, func(w storage.Writer) error {
			return errors.Join(
				w.Set(b("a"), b("2")),
				w.Set(b("b"), b("2")),
				w.Set(b("new"), b("2")),
				w.Delete(b("gone")),
			)
		})
	}()
	want := []kv{{"a", "1"}, {"b", "1"}, {"gone", "1"}}
	err := s.View(ctx, func(r storage.Reader) error {
		if v, _, err := read(r, "a"); err != nil || v != "1" {
			return fmt.Errorf("first read: %q, %v", v, err)
		}
		close(started)
		if err := <-committed; err != nil {
			return fmt.Errorf("concurrent Update: %w", err)
		}
		// The Update has committed; this View must not see any of it.
		for _, p := range want {
			if v, found, err := read(r, p.k); err != nil || !found || v != p.v {
				return fmt.Errorf("Get(%q) after a concurrent commit = %q found=%v err=%v, want %q", p.k, v, found, err, p.v)
			}
		}
		if _, found, err := read(r, "new"); err != nil || found {
			return fmt.Errorf("Get(new) after a concurrent commit: found=%v err=%v, want not found", found, err)
		}
		for _, reverse := range []bool{false, true} {
			got, err := collect(r, nil, nil, reverse)
			if err != nil {
				return err
			}
			if reverse {
				for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
					got[i], got[j] = got[j], got[i]
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("Scan(reverse=%v) after a concurrent commit = %v, want %v", reverse, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, "a", "2")
	wantAbsent(t, s, "gone")
}

func testCanceledContext(t *testing.T, s storage.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := s.View(ctx, func(storage.Reader) error { ran = true; return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("View(canceled) = %v, want context.Canceled", err)
	}
	if err := s.Update(ctx, func(storage.Writer) error { ran = true; return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Update(canceled) = %v, want context.Canceled", err)
	}
	if ran {
		t.Error("fn ran under a canceled context")
	}
}

func testClosed(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "1"})
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ran := false
	if err := s.View(context.Background(), func(storage.Reader) error { ran = true; return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("View after Close = %v, want ErrClosed", err)
	}
	if err := s.Update(context.Background(), func(storage.Writer) error { ran = true; return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Update after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if ran {
		t.Error("fn ran on a closed store")
	}
}
