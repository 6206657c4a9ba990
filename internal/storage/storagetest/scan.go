package storagetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

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

// testSkip checks an iterator that implements storage.Skipper: SkipTo
// lands on the first key at or after its target (ascending) or the last
// before it (descending), within the scan's bounds, and the iteration
// goes on from there. A backend whose iterators do not skip passes.
func testSkip(t *testing.T, s storage.Store) {
	set(t, s, kv{"a1", "1"}, kv{"a2", "2"}, kv{"b1", "3"}, kv{"b2", "4"}, kv{"c1", "5"}, kv{"d1", "6"})
	for _, tc := range []struct {
		name       string
		start, end string
		reverse    bool
		to         string
		want       []string // from the first key, then from the skip on
	}{
		{"ascending", "a", "d", false, "b\xff", []string{"a1", "c1"}},
		{"ascending onto a key", "a", "d", false, "b2", []string{"a1", "b2", "c1"}},
		{"ascending past the end", "a", "d", false, "c2", []string{"a1"}},
		{"descending", "a", "d", true, "b", []string{"c1", "a2", "a1"}},
		{"descending past the start", "b", "d", true, "b1", []string{"c1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scanSkipping(t, s, tc.start, tc.end, tc.reverse, tc.to); !equalStrings(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// testSkipPages is testSkip over more keys than a paged backend fetches
// at first, so that a skip lands within the fetched keys or beyond them.
func testSkipPages(t *testing.T, s storage.Store) {
	var pairs []kv
	var all []string
	for i := range 300 {
		k := fmt.Sprintf("k%03d", i)
		pairs, all = append(pairs, kv{k, "v"}), append(all, k)
	}
	set(t, s, pairs...)
	for _, tc := range []struct {
		reverse bool
		to      int // SkipTo("k<to>"), after the first key
	}{{false, 5}, {false, 40}, {false, 299}, {true, 290}, {true, 100}, {true, 1}} {
		t.Run(fmt.Sprintf("reverse=%v,to=%d", tc.reverse, tc.to), func(t *testing.T) {
			var want []string
			if tc.reverse {
				want = append(want, all[len(all)-1])
				for i := tc.to - 1; i >= 0; i-- {
					want = append(want, all[i])
				}
			} else {
				want = append(append(want, all[0]), all[tc.to:]...)
			}
			if got := scanSkipping(t, s, "k", "l", tc.reverse, all[tc.to]); !equalStrings(got, want) {
				t.Errorf("got %d keys %q…, want %d %q…", len(got), got[:min(len(got), 3)], len(want), want[:min(len(want), 3)])
			}
		})
	}
}

// scanSkipping scans [start, end) and returns its first key and, after
// SkipTo(to), the keys from there on. It skips the test when the
// iterator does not implement storage.Skipper.
func scanSkipping(t *testing.T, s storage.Store, start, end string, reverse bool, to string) []string {
	t.Helper()
	var got []string
	skips := true
	view(t, s, func(r storage.Reader) error {
		it := r.Scan(b(start), b(end), reverse)
		defer it.Close()
		sk, ok := it.(storage.Skipper)
		if skips = ok; !ok {
			return nil
		}
		if !it.Next() {
			return fmt.Errorf("empty scan")
		}
		got = append(got, string(it.Key()))
		for more := sk.SkipTo(b(to)); more; more = it.Next() {
			got = append(got, string(it.Key()))
		}
		return it.Err()
	})
	if !skips {
		t.Skip("the iterator does not skip")
	}
	return got
}
