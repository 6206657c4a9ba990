package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

// lend is what Lend hands fn for key, copied, as "value" or "absent".
func lend(lendFn func(key []byte, fn func([]byte) error) error, key string) (string, error) {
	var got string
	called := false
	err := lendFn([]byte(key), func(v []byte) error {
		called = true
		got = string(v)
		return nil
	})
	switch {
	case errors.Is(err, storage.ErrNotFound) && !called:
		return "absent", nil
	case errors.Is(err, storage.ErrNotFound):
		return "", fmt.Errorf("Lend(%q) called fn and returned ErrNotFound", key)
	case err != nil:
		return "", fmt.Errorf("Lend(%q): %w", key, err)
	case !called:
		return "", fmt.Errorf("Lend(%q) returned nil without calling fn", key)
	}
	return got, nil
}

// testLend checks Lend against Get: on the store, in a View and in an
// Update before and after it writes (it sees its own writes), for a
// present, an empty and an absent key; and that fn's error comes back.
func testLend(t *testing.T, s storage.Store) {
	set(t, s, kv{"a", "1"}, kv{"e", ""}, kv{"big", string(make([]byte, 100<<10))})
	ctx := context.Background()
	check := func(where string, lendFn func([]byte, func([]byte) error) error, want map[string]string) error {
		for k, w := range want {
			got, err := lend(lendFn, k)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if got != w {
				return fmt.Errorf("%s: Lend(%q) gave %q, want %q", where, k, truncate(got), truncate(w))
			}
		}
		return nil
	}
	want := map[string]string{"a": "1", "e": "", "big": string(make([]byte, 100<<10)), "z": "absent"}
	storeLend := func(k []byte, fn func([]byte) error) error { return s.Lend(ctx, k, fn) }
	if err := check("store", storeLend, want); err != nil {
		t.Fatal(err)
	}
	view(t, s, func(r storage.Reader) error { return check("view", r.Lend, want) })
	update(t, s, func(w storage.Writer) error {
		// Before and after the update's first write.
		if err := check("update", w.Lend, map[string]string{"a": "1", "z": "absent"}); err != nil {
			return err
		}
		if v, found, err := read(w, "a"); err != nil || !found || v != "1" {
			return fmt.Errorf("update: Get(a) = %q, %v, %v before any write", v, found, err)
		}
		if err := w.Set([]byte("a"), []byte("2")); err != nil {
			return err
		}
		if err := w.Set([]byte("z"), []byte("26")); err != nil {
			return err
		}
		if err := w.Delete([]byte("e")); err != nil {
			return err
		}
		return check("update", w.Lend, map[string]string{"a": "2", "z": "26", "e": "absent"})
	})

	stop := errors.New("stop")
	if err := s.Lend(ctx, []byte("a"), func([]byte) error { return stop }); err != stop {
		t.Errorf("store: Lend returned %v, want fn's error", err)
	}
	view(t, s, func(r storage.Reader) error {
		if err := r.Lend([]byte("a"), func([]byte) error { return stop }); err != stop {
			t.Errorf("view: Lend returned %v, want fn's error", err)
		}
		return nil
	})
}

func truncate(s string) string {
	if len(s) > 20 {
		return fmt.Sprintf("%q… (%d bytes)", s[:20], len(s))
	}
	return s
}
