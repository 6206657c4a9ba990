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
package storagetest

import (
	"bytes"
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
		{"NotFoundInsideUpdate", testNotFoundInsideUpdate},
		{"EmptyValue", testEmptyValue},
		{"EmptyKey", testEmptyKey},
		{"Scan", testScan},
		{"ScanValues", testScanValues},
		{"IteratorLifecycle", testIteratorLifecycle},
		{"InterleavedIterators", testInterleavedIterators},
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

func testGetSetDelete(t *testing.T, s storage.Store) {
	wantAbsent(t, s, "a")

	set(t, s, kv{"a", "1"})
	wantValue(t, s, "a", "1")

	set(t, s, kv{"a", "2"})
	wantValue(t, s, "a", "2")

	update(t, s, func(w storage.Writer) error { return w.Delete([]byte("a")) })
	wantAbsent(t, s, "a")

	// Deleting an absent key is not an error.
	update(t, s, func(w storage.Writer) error { return w.Delete([]byte("never")) })

	err := s.View(context.Background(), func(r storage.Reader) error {
		_, err := r.Get([]byte("a"))
		return err
	})
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("View(Get missing) = %v, want ErrNotFound", err)
	}
}

func testNotFoundInsideUpdate(t *testing.T, s storage.Store) {
	err := s.Update(context.Background(), func(w storage.Writer) error {
		if _, err := w.Get([]byte("missing")); !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("Get(missing) = %v, want ErrNotFound", err)
		}
		return w.Set([]byte("present"), []byte("x"))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, "present", "x")
}

func testEmptyValue(t *testing.T, s storage.Store) {
	update(t, s, func(w storage.Writer) error {
		if err := w.Set([]byte("nil"), nil); err != nil {
			return err
		}
		return w.Set([]byte("empty"), []byte{})
	})
	for _, k := range []string{"nil", "empty"} {
		wantValue(t, s, k, "")
	}
	if got := scan(t, s, nil, nil, false); len(got) != 2 {
		t.Fatalf("Scan = %v, want two empty values", got)
	}
}

func testEmptyKey(t *testing.T, s storage.Store) {
	set(t, s, kv{"", "empty key"}, kv{"a", "1"})
	wantValue(t, s, "", "empty key")
	for _, start := range [][]byte{nil, {}} {
		got := scan(t, s, start, nil, false)
		if want := []kv{{"", "empty key"}, {"a", "1"}}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Scan(%q, nil) = %v, want %v", start, got, want)
		}
		if got := scan(t, s, start, b("a"), true); fmt.Sprint(got) != `[""="empty key"]` {
			t.Fatalf("Scan(%q, a, desc) = %v, want the empty key", start, got)
		}
	}
	update(t, s, func(w storage.Writer) error { return w.Delete(nil) })
	wantAbsent(t, s, "")
	set(t, s, kv{"", "again"})
	update(t, s, func(w storage.Writer) error { return w.DeleteRange(b(""), b("a")) })
	wantAbsent(t, s, "")
	wantValue(t, s, "a", "1")
}

// scanKeys is the fixture for testScan: it brackets 0x00 and 0xFF bytes
// and a prefix ("a") whose keys continue with 0x00 and 0xFF.
var scanKeys = []string{
	"\x00",
	"\x00\x00",
	"\x01",
	"a",
	"a\x00",
	"a\x00\xff",
	"ab",
	"a\xff",
	"a\xff\xff",
	"b",
	"\xff",
	"\xff\x00",
	"\xff\xff",
}

func testScan(t *testing.T, s storage.Store) {
	var pairs []kv
	for _, k := range scanKeys {
		pairs = append(pairs, kv{k, "v" + k})
	}
	set(t, s, pairs...)

	// all and between return the fixture keys in [lo, hi) by index.
	between := func(lo, hi int) []string { return append([]string(nil), scanKeys[lo:hi]...) }
	all := between(0, len(scanKeys))
	for _, tc := range []struct {
		name       string
		start, end []byte
		want       []string // ascending
	}{
		{"unbounded", b(), b(), all},
		{"empty start", b(""), b(), all},
		{"from zero byte", b("\x00"), b(), all},
		{"after zero byte", b("\x00\x00"), b(), between(1, 13)},
		{"below first", b(), b("\x00"), nil},
		{"prefix a", b("a"), b("b"), between(3, 9)},
		{"prefix a only", b("a"), b("a\x00"), between(3, 4)},
		{"prefix a\\x00", b("a\x00"), b("a\x01"), between(4, 6)},
		{"prefix a\\xff", b("a\xff"), b("a\xff\xff"), between(7, 8)},
		{"through a\\xff\\xff", b("a\xff"), b("a\xff\xff\x00"), between(7, 9)},
		{"prefix 0xff", b("\xff"), b(), between(10, 13)},
		{"before 0xff", b(), b("\xff"), between(0, 10)},
		{"0xff 0x00 exact", b("\xff\x00"), b("\xff\x00\x00"), between(11, 12)},
		{"between prefixes", b("a\x01"), b("a\xfe"), between(6, 7)},
		{"gap between keys", b("a\x01"), b("a`"), nil},
		{"empty range", b("a"), b("a"), nil},
		{"inverted range", b("b"), b("a"), nil},
		{"past the end", b("\xff\xff\x00"), b(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keysOf(scan(t, s, tc.start, tc.end, false))
			if !equalStrings(got, tc.want) {
				t.Errorf("Scan(%q, %q, asc) = %q, want %q", tc.start, tc.end, got, tc.want)
			}
			var rev []string
			for i := len(tc.want) - 1; i >= 0; i-- {
				rev = append(rev, tc.want[i])
			}
			got = keysOf(scan(t, s, tc.start, tc.end, true))
			if !equalStrings(got, rev) {
				t.Errorf("Scan(%q, %q, desc) = %q, want %q", tc.start, tc.end, got, rev)
			}
		})
	}
}

func testScanValues(t *testing.T, s storage.Store) {
	set(t, s, kv{"k1", "one"}, kv{"k2", "two"}, kv{"k3", "three"})
	got := scan(t, s, b("k"), b("l"), true)
	want := []kv{{"k3", "three"}, {"k2", "two"}, {"k1", "one"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Scan = %v, want %v", got, want)
	}
}

func testIteratorLifecycle(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "1"}, kv{"b", "2"}, kv{"c", "3"})
	view(t, s, func(r storage.Reader) error {
		// Exhausted: Next stays false and Err stays nil.
		it := r.Scan(nil, nil, false)
		n := 0
		for it.Next() {
			n++
		}
		if n != 3 {
			return fmt.Errorf("scanned %d keys, want 3", n)
		}
		if it.Next() {
			return errors.New("Next after exhaustion returned true")
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("Err after exhaustion: %w", err)
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("Close: %w", err)
		}

		// Closed early, the reader stays usable.
		it = r.Scan(nil, nil, true)
		if !it.Next() || string(it.Key()) != "c" {
			return errors.New("first key of a descending scan is not c")
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("Close mid-scan: %w", err)
		}
		if _, found, err := read(r, "a"); err != nil || !found {
			return fmt.Errorf("Get after an early Close: found=%v err=%v", found, err)
		}

		// An empty scan.
		it = r.Scan(b("x"), b("y"), false)
		if it.Next() {
			return fmt.Errorf("empty scan returned %q", it.Key())
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("Err of empty scan: %w", err)
		}
		return it.Close()
	})
}

// testInterleavedIterators keeps two scans open at once and reads between
// their steps, as a merge join or an index lookup does. The range is long
// enough that a paging backend must fetch more than one page per scan.
func testInterleavedIterators(t *testing.T, s storage.Store) {
	const n = 700
	var pairs []kv
	for i := range n {
		pairs = append(pairs, kv{fmt.Sprintf("k%04d", i), fmt.Sprint(i)})
	}
	set(t, s, pairs...)
	check := func(r storage.Reader) error {
		up := r.Scan(b("k"), b("l"), false)
		defer up.Close()
		down := r.Scan(b("k"), b("l"), true)
		defer down.Close()
		for i := range n {
			if !up.Next() || !down.Next() {
				return fmt.Errorf("scans ended at step %d", i)
			}
			if got, want := string(up.Key()), pairs[i].k; got != want {
				return fmt.Errorf("ascending step %d: key %q, want %q", i, got, want)
			}
			if got, want := string(down.Key()), pairs[n-1-i].k; got != want {
				return fmt.Errorf("descending step %d: key %q, want %q", i, got, want)
			}
			v, found, err := read(r, string(up.Key()))
			if err != nil || !found || v != string(up.Value()) {
				return fmt.Errorf("Get(%q) during scans: %q found=%v err=%v", up.Key(), v, found, err)
			}
		}
		if up.Next() || down.Next() {
			return errors.New("scans went past the end")
		}
		return errors.Join(up.Err(), down.Err())
	}
	view(t, s, check)
	update(t, s, func(w storage.Writer) error { return check(w) })
}

func testDeleteRange(t *testing.T, s storage.Store) {
	keys := []string{"a", "b", "b\x00", "b\xff", "c", "c\xff\xff", "d", "d\x00", "e"}
	reset := func() {
		t.Helper()
		update(t, s, func(w storage.Writer) error { return w.DeleteRange(nil, nil) })
		var pairs []kv
		for _, k := range keys {
			pairs = append(pairs, kv{k, k})
		}
		set(t, s, pairs...)
	}
	for _, tc := range []struct {
		name       string
		start, end []byte
		want       []string // keys left
	}{
		{"middle", b("b"), b("d"), []string{"a", "d", "d\x00", "e"}},
		{"exact key", b("c"), b("c\x00"), []string{"a", "b", "b\x00", "b\xff", "c\xff\xff", "d", "d\x00", "e"}},
		{"nil end", b("d"), b(), []string{"a", "b", "b\x00", "b\xff", "c", "c\xff\xff"}},
		{"nil start", b(), b("b\x00"), []string{"b\x00", "b\xff", "c", "c\xff\xff", "d", "d\x00", "e"}},
		{"everything", b(), b(), nil},
		{"empty range", b("c"), b("c"), keys},
		{"inverted range", b("d"), b("b"), keys},
		{"no keys inside", b("a\x00"), b("b"), keys},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			update(t, s, func(w storage.Writer) error { return w.DeleteRange(tc.start, tc.end) })
			got := keysOf(scan(t, s, nil, nil, false))
			if !equalStrings(got, tc.want) {
				t.Fatalf("after DeleteRange(%q, %q): keys %q, want %q", tc.start, tc.end, got, tc.want)
			}
		})
	}
}

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

func testValueLifetime(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "alpha"}, kv{"b", "beta"}, kv{"c", "gamma"})
	view(t, s, func(r storage.Reader) error {
		a, err := r.Get(b("a"))
		if err != nil {
			return err
		}
		// Other reads, including a full scan, must not disturb a.
		if _, err := r.Get(b("b")); err != nil {
			return err
		}
		if _, err := collect(r, nil, nil, false); err != nil {
			return err
		}
		if string(a) != "alpha" {
			return fmt.Errorf("value of a changed to %q during the View", a)
		}
		// Key and Value stay put until the iterator moves.
		it := r.Scan(nil, nil, false)
		defer it.Close()
		if !it.Next() {
			return errors.New("empty scan")
		}
		k, v := it.Key(), it.Value()
		if _, err := r.Get(b("c")); err != nil {
			return err
		}
		if string(k) != "a" || string(v) != "alpha" {
			return fmt.Errorf("Key/Value changed before Next: %q=%q", k, v)
		}
		return nil
	})
	update(t, s, func(w storage.Writer) error {
		a, err := w.Get(b("a"))
		if err != nil {
			return err
		}
		if err := w.Set(b("a"), b("overwritten")); err != nil {
			return err
		}
		if err := w.Delete(b("b")); err != nil {
			return err
		}
		if _, err := w.Get(b("a")); err != nil {
			return err
		}
		if string(a) != "alpha" {
			return fmt.Errorf("value read before Set changed to %q", a)
		}
		return nil
	})
}

func testSetCopiesArguments(t *testing.T, s storage.Store) {
	update(t, s, func(w storage.Writer) error {
		k, v := []byte("key1"), []byte("value1")
		if err := w.Set(k, v); err != nil {
			return err
		}
		copy(k, "key2")
		copy(v, "value2")
		if err := w.Set(k, v); err != nil {
			return err
		}
		copy(k, "key3")
		if err := w.Delete(k); err != nil {
			return err
		}
		copy(k, "XXXX")
		copy(v, "XXXXXX")
		return nil
	})
	got := scan(t, s, nil, nil, false)
	want := []kv{{"key1", "value1"}, {"key2", "value2"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after reusing the argument slices: %v, want %v", got, want)
	}
}

func testLargeValue(t *testing.T, s storage.Store) {
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>11)
	}
	update(t, s, func(w storage.Writer) error { return w.Set(b("big"), big) })
	view(t, s, func(r storage.Reader) error {
		v, err := r.Get(b("big"))
		if err != nil {
			return err
		}
		if !bytes.Equal(v, big) {
			return fmt.Errorf("Get returned %d bytes that differ from the %d written", len(v), len(big))
		}
		it := r.Scan(nil, nil, false)
		defer it.Close()
		if !it.Next() || !bytes.Equal(it.Value(), big) {
			return errors.New("Scan did not return the large value intact")
		}
		return it.Err()
	})
}

func testManyKeys(t *testing.T, s storage.Store) {
	const n = 10000
	// Written in a scrambled order, ten Updates of a thousand keys.
	perm := make([]int, n)
	for i := range perm {
		perm[i] = (i * 7919) % n // 7919 is prime, so this is a permutation
	}
	for lo := 0; lo < n; lo += 1000 {
		update(t, s, func(w storage.Writer) error {
			for _, i := range perm[lo : lo+1000] {
				if err := w.Set(key(i), []byte(fmt.Sprint(i))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, reverse := range []bool{false, true} {
		view(t, s, func(r storage.Reader) error {
			it := r.Scan(nil, nil, reverse)
			defer it.Close()
			i := 0
			for ; it.Next(); i++ {
				want := i
				if reverse {
					want = n - 1 - i
				}
				if !bytes.Equal(it.Key(), key(want)) || string(it.Value()) != fmt.Sprint(want) {
					return fmt.Errorf("reverse=%v step %d: %q=%q, want %q", reverse, i, it.Key(), it.Value(), key(want))
				}
			}
			if i != n {
				return fmt.Errorf("reverse=%v: scanned %d keys, want %d", reverse, i, n)
			}
			return it.Err()
		})
	}
	if got := scan(t, s, key(1234), key(5678), false); len(got) != 5678-1234 {
		t.Fatalf("sub-range scan: %d keys, want %d", len(got), 5678-1234)
	}
}

// key is a fixed-width big-endian key, so numeric and byte order agree and
// the encoding includes 0x00 bytes.
func key(i int) []byte {
	return []byte{'n', byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
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

// testPointGet: Store.Get reads what the last Update committed, outside
// any transaction, and reports ErrNotFound and closed stores.
func testPointGet(t *testing.T, s storage.Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, []byte("k")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
	}
	for _, v := range []string{"one", "", "three"} {
		if err := s.Update(ctx, func(w storage.Writer) error { return w.Set([]byte("k"), []byte(v)) }); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, []byte("k"))
		if err != nil || string(got) != v || got == nil {
			t.Fatalf("Get after Set(%q) = %q (nil %v), %v", v, got, got == nil, err)
		}
	}
	if err := s.Update(ctx, func(w storage.Writer) error { return w.Delete([]byte("k")) }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, []byte("k")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Get(cctx, []byte("k")); err == nil {
		t.Fatal("Get with a cancelled context succeeded")
	}
}
