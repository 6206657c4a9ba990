package engine

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
	"github.com/ebbdb/ebb/internal/ttl/purger"
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

// TestPurgeAcrossSplit: a purge pass that took its leases before a split
// of its partition takes the children's and purges their items, rather
// than passing over them until its next pass.
func TestPurgeAcrossSplit(t *testing.T) {
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, clk := openEngine(t, store, Options{Shared: true, NodeID: "a", DisablePurger: true})
	ctx := context.Background()
	mustCreateWith(t, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":5}`, ThroughputHeaders{Partitions: "1"})
	const items = 40
	for i := range items {
		id := strconv.Itoa(i)
		ref := ItemRef{DB: "db", Coll: "c", PK: `["` + id + `"]`, HasPK: true}
		if _, err := e.WriteItem(ctx, ref, Upsert, []byte(`{"id":"`+id+`","pk":"`+id+`"}`), ""); err != nil {
			t.Fatal(err)
		}
	}
	h := purgeHost{e}
	c := mustContainer(t, e, "c")
	if ok, _, err := h.HoldLease(c.rid); err != nil || !ok {
		t.Fatalf("lease: %v, %v", ok, err)
	}
	if _, err := e.SplitPartition(ctx, "db", "c", "0"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctx, keyspace.LeaseKey(c.rid, 0)); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the split parent's lease is still stored: %v", err)
	}
	clk.Advance(5 * time.Second)
	r, err := h.PurgeBatch(c.rid, purger.Cursor{}, clk.Now().Unix(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if r.Read != items || len(r.Expiries) != items {
		t.Fatalf("the batch found %d due and purged %d, want %d", r.Read, len(r.Expiries), items)
	}
	holders, err := e.leaseHolders(mustContainer(t, e, "c"))
	if err != nil || holders != "a" {
		t.Fatalf("lease holders %q, %v", holders, err)
	}
}
