package engine

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// catalogLoads counts the catalog loads made through a store: the scans
// of the databases' keys, which a load begins with.
type catalogLoads struct {
	storage.Store
	n atomic.Int64
}

func (s *catalogLoads) View(ctx context.Context, fn func(storage.Reader) error) error {
	return s.Store.View(ctx, func(r storage.Reader) error { return fn(countingReader{r, s}) })
}

type countingReader struct {
	storage.Reader
	s *catalogLoads
}

func (r countingReader) Scan(start, end []byte, reverse bool) storage.Iterator {
	if bytes.Equal(start, []byte{keyspace.CatDB}) {
		r.s.n.Add(1)
	}
	return r.Reader.Scan(start, end, reverse)
}

// TestCatalogRefresh: a node of a cluster whose catalog looks stale
// reloads it only when the store's has changed, and once for every
// request that found the same change at the same time.
func TestCatalogRefresh(t *testing.T) {
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	loads := &catalogLoads{Store: store}
	// The nodes' watches never run: only requests refresh.
	quiet := Options{Shared: true, CatalogPoll: 1 << 62}
	a, _ := openEngine(t, store, withNode(quiet, "a"))
	b, _ := openEngine(t, loads, withNode(quiet, "b"))
	ctx := context.Background()
	mustCreateWith(t, a, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, ThroughputHeaders{Partitions: "1"})

	concurrently := func(n int, fn func(i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = fn(i) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
	}
	counted := func(what string, want int64, fn func()) {
		t.Helper()
		before := loads.n.Load()
		fn()
		if got := loads.n.Load() - before; got != want {
			t.Fatalf("%s: %d catalog loads, want %d", what, got, want)
		}
	}

	// Created on node a a moment ago: node b's requests find it, with
	// one load between them.
	counted("reads of a new container", 1, func() {
		concurrently(16, func(int) error {
			_, err := b.ReadContainer(ctx, "db", "c", false)
			return err
		})
	})
	// Nothing changed: a miss costs a read of the counter, not a load.
	counted("reads of a missing container", 0, func() {
		for range 16 {
			if _, err := b.ReadContainer(ctx, "db", "missing", false); !IsKind(err, KindNotFound) {
				t.Fatalf("missing container: %v", err)
			}
		}
	})
	// Split on node a: node b's writes, all routed to the parent by its
	// cached catalog, go on in the children after one load.
	if _, err := a.SplitPartition(ctx, "db", "c", "0"); err != nil {
		t.Fatal(err)
	}
	counted("writes after a split", 1, func() {
		concurrently(16, func(i int) error {
			id := strconv.Itoa(i)
			ref := ItemRef{DB: "db", Coll: "c", PK: `["` + id + `"]`, HasPK: true}
			_, err := b.WriteItem(ctx, ref, Upsert, []byte(`{"id":"`+id+`","pk":"`+id+`"}`), "")
			return err
		})
	})
	if got := len(mustContainer(t, b, "c").layout.live); got != 2 {
		t.Fatalf("node b sees %d live partitions, want 2", got)
	}
}

func withNode(opts Options, id string) Options {
	opts.NodeID = id
	return opts
}
