package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

// getMany collects what r.GetMany finds of keys, as "index=value".
func getMany(r storage.Reader, keys ...string) ([]string, error) {
	ks := make([][]byte, len(keys))
	for i, k := range keys {
		ks[i] = []byte(k)
	}
	var got []string
	err := r.GetMany(ks, func(i int, v []byte) error {
		got = append(got, fmt.Sprintf("%d=%s", i, v))
		return nil
	})
	return got, err
}

func testGetMany(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "1"}, kv{"c", "3"}, kv{"e", ""}, kv{"g", "7"})
	check := func(r storage.Reader, want []string, keys ...string) error {
		got, err := getMany(r, keys...)
		if err != nil {
			return err
		}
		if !equalStrings(got, want) {
			return fmt.Errorf("GetMany(%q) = %q, want %q", keys, got, want)
		}
		return nil
	}
	view(t, s, func(r storage.Reader) error {
		// Absent keys before, between and after; an empty value is
		// present; a repeated key is found twice.
		if err := check(r, []string{"1=1", "3=3", "4=3", "5="}, "0", "a", "b", "c", "c", "e", "f", "z"); err != nil {
			return err
		}
		if err := check(r, nil); err != nil {
			return err
		}
		return check(r, nil, "h", "i")
	})
	// Inside an update GetMany sees the update's own writes.
	update(t, s, func(w storage.Writer) error {
		if err := w.Set([]byte("b"), []byte("2")); err != nil {
			return err
		}
		if err := w.Delete([]byte("c")); err != nil {
			return err
		}
		return check(w, []string{"0=1", "1=2", "3=7"}, "a", "b", "c", "g")
	})
	// found's error stops the call and is returned.
	stop := errors.New("stop")
	n := 0
	err := s.View(context.Background(), func(r storage.Reader) error {
		return r.GetMany([][]byte{[]byte("a"), []byte("b"), []byte("g")}, func(int, []byte) error { n++; return stop })
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("GetMany with a failing callback: err %v after %d calls, want stop after 1", err, n)
	}
}
