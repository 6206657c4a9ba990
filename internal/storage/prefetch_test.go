package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// TestPrefetch checks that a prefetched writer answers what it read
// ahead, absent keys included, and never an answer its own writes have
// made stale.
func TestPrefetch(t *testing.T) {
	s, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	err = s.Update(ctx, func(w storage.Writer) error {
		for _, k := range []string{"a", "b", "c"} {
			if err := w.Set([]byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := func(w storage.Writer, key, value string) {
		t.Helper()
		got, err := w.Get([]byte(key))
		if value == "" {
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Get(%s) = %q, %v; want not found", key, got, err)
			}
			return
		}
		if err != nil || string(got) != value {
			t.Errorf("Get(%s) = %q, %v; want %q", key, got, err, value)
		}
		lent := ""
		if err := w.Lend([]byte(key), func(v []byte) error { lent = string(v); return nil }); err != nil || lent != value {
			t.Errorf("Lend(%s) = %q, %v; want %q", key, lent, err, value)
		}
	}
	err = s.Update(ctx, func(tx storage.Writer) error {
		w, err := storage.Prefetch(tx, [][]byte{[]byte("c"), []byte("a"), []byte("x"), []byte("a")})
		if err != nil {
			return err
		}
		want(w, "a", "va")
		want(w, "c", "vc")
		want(w, "x", "")
		want(w, "b", "vb") // not prefetched: read through
		w.Set([]byte("a"), []byte("new"))
		w.Set([]byte("x"), []byte("vx"))
		want(w, "a", "new")
		want(w, "x", "vx")
		w.Delete([]byte("x"))
		want(w, "x", "")
		w.DeleteRange([]byte("b"), []byte("d"))
		want(w, "c", "")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
