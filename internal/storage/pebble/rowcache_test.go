package pebble

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

func set(t testing.TB, s *Store, key, value string) {
	t.Helper()
	if err := s.Update(context.Background(), func(w storage.Writer) error { return w.Set([]byte(key), []byte(value)) }); err != nil {
		t.Fatal(err)
	}
}

func lend(t testing.TB, s *Store, key string) (string, error) {
	t.Helper()
	var got string
	err := s.Lend(context.Background(), []byte(key), func(v []byte) error {
		got = string(v)
		return nil
	})
	return got, err
}

// TestRowCache: point reads of the live store are served from the cache
// once read, and every kind of write replaces or removes what it holds.
func TestRowCache(t *testing.T) {
	s, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	want := func(key, value string) {
		t.Helper()
		got, err := lend(t, s, key)
		if value == "" {
			if !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("Lend(%s) = %q, %v; want ErrNotFound", key, got, err)
			}
			return
		}
		if err != nil || got != value {
			t.Fatalf("Lend(%s) = %q, %v; want %q", key, got, err, value)
		}
	}
	set(t, s, "a", "1")
	want("a", "1")
	want("a", "1")
	if st := s.RowCacheStats(); st.Hits != 1 || st.Misses != 1 || st.Bytes != 2 {
		t.Fatalf("stats after a miss and a hit: %+v", st)
	}
	set(t, s, "a", "2")
	want("a", "2")
	if err := s.Update(ctx, func(w storage.Writer) error { return w.Delete([]byte("a")) }); err != nil {
		t.Fatal(err)
	}
	want("a", "")
	for _, k := range []string{"b1", "b2", "c"} {
		set(t, s, k, k)
		want(k, k)
	}
	if err := s.Update(ctx, func(w storage.Writer) error { return w.DeleteRange([]byte("b"), []byte("c")) }); err != nil {
		t.Fatal(err)
	}
	want("b1", "")
	want("b2", "")
	want("c", "c")
	// Get hands out a copy: changing it changes nothing cached.
	got, err := s.Get(ctx, []byte("c"))
	if err != nil {
		t.Fatal(err)
	}
	got[0] = 'x'
	want("c", "c")
	// A failed update leaves the cache as it was.
	boom := errors.New("boom")
	if err := s.Update(ctx, func(w storage.Writer) error {
		if err := w.Set([]byte("c"), []byte("never")); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	want("c", "c")
}

// TestRowCacheTickets: a value read before an update began, or while one
// was in flight, is never added.
func TestRowCacheTickets(t *testing.T) {
	s, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.rows
	key := []byte("k")

	_, _, before := c.lookup(key)
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(key, []byte("new"), nil); err != nil {
		t.Fatal(err)
	}
	marked := c.writeBegin(b)
	c.add(before, key, []byte("old")) // read before the update began
	_, _, during := c.lookup(key)
	c.add(during, key, []byte("old")) // read while it is in flight
	c.writeEnd(marked)
	if _, hit, _ := c.lookup(key); hit {
		t.Fatal("a value read before or during an update was added")
	}
	_, _, after := c.lookup(key)
	c.add(after, key, []byte("new"))
	if v, hit, _ := c.lookup(key); !hit || string(v) != "new" {
		t.Fatalf("a value read after the update: %q, %v", v, hit)
	}
	// An update of another shard does not stop the add.
	fresh, other := []byte("fresh"), []byte("other")
	for c.shardOf(other) == c.shardOf(fresh) {
		other = append(other, 'x')
	}
	_, _, t1 := c.lookup(fresh)
	b2 := s.db.NewBatch()
	defer b2.Close()
	if err := b2.Set(other, nil, nil); err != nil {
		t.Fatal(err)
	}
	c.writeEnd(c.writeBegin(b2))
	c.add(t1, fresh, []byte("newer"))
	if v, _, _ := c.lookup(fresh); string(v) != "newer" {
		t.Fatalf("after an update of another shard: %q", v)
	}
}

// TestRowCacheSize: the cache never holds more than it was given.
func TestRowCacheSize(t *testing.T) {
	const size = 64 << 10
	s, err := OpenMemoryWith(Options{RowCacheSize: size})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	value := string(make([]byte, 1000))
	for i := range 500 {
		k := fmt.Sprintf("k%03d", i)
		set(t, s, k, value)
		if _, err := lend(t, s, k); err != nil {
			t.Fatal(err)
		}
		if b := s.RowCacheStats().Bytes; b > size {
			t.Fatalf("after %d reads the cache holds %d bytes, more than %d", i+1, b, size)
		}
	}
	if b := s.RowCacheStats().Bytes; b < size/2 {
		t.Fatalf("the cache holds %d bytes of %d after 500 KB read", b, size)
	}
	if off, err := OpenMemoryWith(Options{RowCacheSize: -1}); err != nil || off.rows != nil {
		t.Fatalf("RowCacheSize -1: %v, cache %v", err, off.rows)
	}
}

// TestRowCacheNeverStale: readers racing writers never see a value older
// than one already acknowledged, nor go back.
func TestRowCacheNeverStale(t *testing.T) {
	s, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const keys, writes = 8, 3000
	var acked [keys]atomic.Uint64
	key := func(i int) []byte { return []byte{'k', byte(i)} }
	for i := range keys {
		set(t, s, string(key(i)), string(binary.BigEndian.AppendUint64(nil, 0)))
	}
	ctx, stop := context.WithCancel(context.Background())
	var readers, writers sync.WaitGroup
	errs := make(chan error, 8)
	for r := range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			var last [keys]uint64
			for n := 0; ctx.Err() == nil; n++ {
				i := (n + r) % keys
				floor := acked[i].Load()
				var v uint64
				err := s.Lend(context.Background(), key(i), func(b []byte) error {
					v = binary.BigEndian.Uint64(b)
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
				if v < floor || v < last[i] {
					errs <- fmt.Errorf("key %d: read %d after %d was acknowledged and %d read", i, v, floor, last[i])
					return
				}
				last[i] = v
			}
		}()
	}
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for n := 1; n <= writes; n++ {
				i := (n*2 + w) % keys
				v := acked[i].Load() + 1
				// Writers take turns per key: w writes the even or odd keys.
				if err := s.Update(context.Background(), func(wr storage.Writer) error {
					return wr.Set(key(i), binary.BigEndian.AppendUint64(nil, v))
				}); err != nil {
					errs <- err
					return
				}
				acked[i].Store(v)
			}
		}()
	}
	writers.Wait()
	stop()
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := s.RowCacheStats(); st.Hits == 0 {
		t.Errorf("no read was served from the cache: %+v", st)
	}
}
