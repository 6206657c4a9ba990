// Package storagetest is the conformance suite for storage.Store. Every
// backend runs it from its own tests (Pebble in memory and on disk,
// PostgreSQL when a database is configured), so the engine can rely on
// exactly the behaviour the suite pins down and nothing a single backend
// happens to do.
//
// Besides what storage.go states, the suite fixes a few details the
// contract leaves implicit:
//   - a nil end in DeleteRange means no upper bound, as it does in Scan;
//   - an empty or inverted range scans and deletes nothing;
//   - Set copies its arguments: the caller may reuse the slices at once;
//   - a value may be empty (Get returns it with a nil error), and so may a
//     key;
//   - a panic in fn propagates to the caller, writes nothing, and leaves
//     the store usable;
//   - View and Update with a context that is already done fail with the
//     context's error without running fn;
//   - the second Close returns storage.ErrClosed.
//
// What the suite deliberately does not pin down: whether an iterator that
// is open inside Update observes writes made after it was created.
//
// For the tests of the store's callers, the package also has stores that
// enforce what a backend may do but Pebble seldom does: Replaying runs
// every transaction function twice, Scribbling overwrites every lent
// slice when its loan ends.
package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

// Run runs the conformance suite. open returns a fresh, empty store each
// time it is called; Run closes every store it opens.
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	fresh := func(t *testing.T) storage.Store {
		t.Helper()
		s := open(t)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"GetSetDelete", testGetSetDelete},
		{"PointGet", testPointGet},
		{"Lend", testLend},
		{"GetMany", testGetMany},
		{"NotFoundInsideUpdate", testNotFoundInsideUpdate},
		{"EmptyValue", testEmptyValue},
		{"EmptyKey", testEmptyKey},
		{"Scan", testScan},
		{"ScanValues", testScanValues},
		{"IteratorLifecycle", testIteratorLifecycle},
		{"InterleavedIterators", testInterleavedIterators},
		{"Skip", testSkip},
		{"SkipPages", testSkipPages},
		{"DeleteRange", testDeleteRange},
		{"ReadYourWrites", testReadYourWrites},
		{"ScanAndDeleteInUpdate", testScanAndDeleteInUpdate},
		{"UpdateErrorWritesNothing", testUpdateErrorWritesNothing},
		{"EmptyUpdate", testEmptyUpdate},
		{"PanicInFn", testPanicInFn},
		{"ViewSnapshotIsolation", testViewSnapshotIsolation},
		{"ValueLifetime", testValueLifetime},
		{"SetCopiesArguments", testSetCopiesArguments},
		{"ConcurrentCounter", testConcurrentCounter},
		{"ConcurrentTransfer", testConcurrentTransfer},
		{"WriteSkew", testWriteSkew},
		{"LockedCounters", testLockedCounters},
		{"LockedReads", testLockedReads},
		{"LargeValue", testLargeValue},
		{"ManyKeys", testManyKeys},
		{"CanceledContext", testCanceledContext},
		{"Closed", testClosed},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh(t)) })
	}
}

// kv is one key/value pair as a test sees it.
type kv struct{ k, v string }

func (p kv) String() string { return fmt.Sprintf("%q=%q", p.k, p.v) }

func set(t testing.TB, s storage.Store, pairs ...kv) {
	t.Helper()
	err := s.Update(context.Background(), func(w storage.Writer) error {
		for _, p := range pairs {
			if err := w.Set([]byte(p.k), []byte(p.v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update(set %v): %v", pairs, err)
	}
}

func update(t testing.TB, s storage.Store, fn func(w storage.Writer) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t testing.TB, s storage.Store, fn func(r storage.Reader) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// get reads key in its own View; found is false on ErrNotFound.
func get(t testing.TB, s storage.Store, key string) (value string, found bool) {
	t.Helper()
	view(t, s, func(r storage.Reader) error {
		var err error
		value, found, err = read(r, key)
		return err
	})
	return value, found
}

// read is Get with ErrNotFound turned into found == false.
func read(r storage.Reader, key string) (value string, found bool, err error) {
	v, err := r.Get([]byte(key))
	if errors.Is(err, storage.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("Get(%q): %w", key, err)
	}
	return string(v), true, nil
}

func wantValue(t testing.TB, s storage.Store, key, want string) {
	t.Helper()
	got, found := get(t, s, key)
	if !found {
		t.Fatalf("Get(%q): not found, want %q", key, want)
	}
	if got != want {
		t.Fatalf("Get(%q) = %q, want %q", key, got, want)
	}
}

func wantAbsent(t testing.TB, s storage.Store, key string) {
	t.Helper()
	if got, found := get(t, s, key); found {
		t.Fatalf("Get(%q) = %q, want ErrNotFound", key, got)
	}
}

// collect drains a Scan, copying keys and values, and closes it.
func collect(r storage.Reader, start, end []byte, reverse bool) ([]kv, error) {
	it := r.Scan(start, end, reverse)
	var out []kv
	for it.Next() {
		out = append(out, kv{string(it.Key()), string(it.Value())})
	}
	if err := it.Err(); err != nil {
		it.Close()
		return out, fmt.Errorf("Scan(%q, %q, %v): %w", start, end, reverse, err)
	}
	if err := it.Close(); err != nil {
		return out, fmt.Errorf("Scan(%q, %q, %v): Close: %w", start, end, reverse, err)
	}
	return out, nil
}

func scan(t testing.TB, s storage.Store, start, end []byte, reverse bool) []kv {
	t.Helper()
	var out []kv
	view(t, s, func(r storage.Reader) error {
		var err error
		out, err = collect(r, start, end, reverse)
		return err
	})
	return out
}

func keysOf(pairs []kv) []string {
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p.k
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// b is shorthand for a byte-slice bound in tables; b() is nil.
func b(s ...string) []byte {
	if len(s) == 0 {
		return nil
	}
	return []byte(s[0])
}
