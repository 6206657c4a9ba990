package buffered_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/buffered"
	"github.com/ebbdb/ebb/internal/storage/pebble"
	"github.com/ebbdb/ebb/internal/storage/storagetest"
)

// store runs every Update in a buffered.Writer over a snapshot and
// applies it afterwards. Updates take turns, so the store stays
// serializable and the whole conformance suite applies to the Writer.
type store struct {
	storage.Store
	mu sync.Mutex
}

func (s *store) UpdateLocked(ctx context.Context, _ [][]byte, fn func(storage.Writer) error) error {
	return s.Update(ctx, fn)
}

func (s *store) Update(ctx context.Context, fn func(storage.Writer) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w *buffered.Writer
	err := s.Store.View(ctx, func(r storage.Reader) error {
		w = buffered.New(r)
		return fn(w)
	})
	if err != nil {
		return err
	}
	return s.Store.Update(ctx, w.Apply)
}

func openMemory(t testing.TB) storage.Store {
	s, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return &store{Store: openMemory(t)} })
}

// TestModel runs random writes both through a Writer and straight into
// a transaction, and compares every read the two give.
func TestModel(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		key := func() []byte { return []byte{byte('a' + rng.IntN(12))} }
		direct, viaBuffer := openMemory(t), openMemory(t)
		for _, s := range []storage.Store{direct, viaBuffer} {
			err := s.Update(ctx, func(w storage.Writer) error {
				for i := range 8 {
					if err := w.Set([]byte{byte('a' + 2*i)}, []byte("base")); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		var ops []func(storage.Writer) error
		var trace []string
		for i := range 1 + rng.IntN(12) {
			k, v := key(), []byte(fmt.Sprint(i))
			switch rng.IntN(4) {
			case 0, 1:
				trace = append(trace, fmt.Sprintf("set %s", k))
				ops = append(ops, func(w storage.Writer) error { return w.Set(k, v) })
			case 2:
				trace = append(trace, fmt.Sprintf("delete %s", k))
				ops = append(ops, func(w storage.Writer) error { return w.Delete(k) })
			case 3:
				end := key()
				trace = append(trace, fmt.Sprintf("delete [%s,%s)", k, end))
				ops = append(ops, func(w storage.Writer) error { return w.DeleteRange(k, end) })
			}
		}
		var want []string
		err := direct.Update(ctx, func(w storage.Writer) error {
			for _, op := range ops {
				if err := op(w); err != nil {
					return err
				}
			}
			want = readAll(t, w)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = viaBuffer.View(ctx, func(r storage.Reader) error {
			w := buffered.New(r)
			for _, op := range ops {
				if err := op(w); err != nil {
					return err
				}
			}
			if got := readAll(t, w); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d after %q:\n got %q\nwant %q", seed, trace, got, want)
			}
			return viaBuffer.Update(ctx, w.Apply)
		})
		if err != nil {
			t.Fatal(err)
		}
		err = viaBuffer.View(ctx, func(r storage.Reader) error {
			if got := readAll(t, r); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d after %q applied:\n got %q\nwant %q", seed, trace, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		direct.Close()
		viaBuffer.Close()
	}
}

// readAll is every read of r over the keys a…l: forward and reverse
// scans of a few ranges, Get of each key, and GetMany of all of them.
func readAll(t *testing.T, r storage.Reader) []string {
	t.Helper()
	var out []string
	for _, bounds := range [][2][]byte{{nil, nil}, {[]byte("c"), []byte("h")}, {[]byte("b\x00"), nil}} {
		for _, reverse := range []bool{false, true} {
			it := r.Scan(bounds[0], bounds[1], reverse)
			var got []string
			for it.Next() {
				got = append(got, string(it.Key())+"="+string(it.Value()))
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(got))
		}
	}
	var keys [][]byte
	for c := byte('a'); c <= 'l'; c++ {
		keys = append(keys, []byte{c})
		v, err := r.Get([]byte{c})
		out = append(out, fmt.Sprintf("get %c=%s %v", c, v, err))
	}
	err := r.GetMany(keys, func(i int, v []byte) error {
		out = append(out, fmt.Sprintf("many %s=%s", keys[i], v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
