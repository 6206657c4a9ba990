package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

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
