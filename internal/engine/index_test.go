package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// indexPaths lists the <path> of container coll's index entries, in key
// order, leaving out _ts (which moves with the clock) unless withTs. The
// entries' values are package index's to test; here CheckConsistency
// says they are exactly those of the stored items.
func indexPaths(t testing.TB, e *Engine, coll string, withTs bool) []string {
	t.Helper()
	c, err := e.container("db", coll)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	base := keyspace.IndexPrefix(c.rid)
	err = e.store.View(context.Background(), func(r storage.Reader) error {
		it := r.Scan(base, keys.PrefixEnd(base), false)
		defer it.Close()
		for it.Next() {
			path, _, err := keys.DecodeBytes(it.Key()[len(base):])
			if err != nil {
				return err
			}
			if string(path) == "/_ts" && !withTs {
				continue
			}
			out = append(out, string(path))
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkConsistent(t testing.TB, e *Engine) {
	t.Helper()
	if err := e.CheckConsistency(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// wantPaths fails the test unless coll's entries are at the paths want
// (without _ts) and agree with its items.
func wantPaths(t testing.TB, e *Engine, coll string, want ...string) {
	t.Helper()
	got := indexPaths(t, e, coll, false)
	if !slices.Equal(got, want) {
		t.Fatalf("index entries at:\n got  %s\n want %s", strings.Join(got, " "), strings.Join(want, " "))
	}
	checkConsistent(t, e)
}

// TestIndexEntriesFollowItems checks that every engine write path keeps
// the index entries with the items: a write, a replace, a patch, a
// batch, a delete.
func TestIndexEntriesFollowItems(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}

	write(t, e, "c", `{"id":"1","pk":"p","a":1,"b":{"c":"x","d":[]},"tags":["t1","t2","t1"],"n":null,"f":false}`)
	wantPaths(t, e, "c", "/a", "/b", "/b/c", "/b/d", "/f", "/id", "/n", "/pk", "/tags", "/tags/[]", "/tags/[]")
	if ts := indexPaths(t, e, "c", true); !slices.Contains(ts, "/_ts") {
		t.Fatalf("_ts is not indexed: %v", ts)
	}

	// A replace keeps what is unchanged and swaps the rest.
	write(t, e, "c", `{"id":"1","pk":"p","a":2,"tags":[{"k":true}]}`)
	wantPaths(t, e, "c", "/a", "/id", "/pk", "/tags", "/tags/[]", "/tags/[]/k")

	// Patches go through the same path.
	if _, err := e.PatchItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "1", PK: `["p"]`, HasPK: true},
		[]byte(`{"operations":[{"op":"set","path":"/a","value":"s"},{"op":"remove","path":"/tags"}]}`), ""); err != nil {
		t.Fatal(err)
	}
	wantPaths(t, e, "c", "/a", "/id", "/pk")

	// A batch too.
	res, err := e.ExecuteBatch(ctx, ref, []byte(`[{"operationType":"Create","resourceBody":{"id":"2","pk":"p","a":3,"z":1}},{"operationType":"Delete","id":"1"}]`), BatchOptions{Atomic: true})
	if err != nil || res.Failed {
		t.Fatalf("batch: %v %+v", err, res)
	}
	wantPaths(t, e, "c", "/a", "/id", "/pk", "/z")

	if _, err := e.DeleteItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "2", PK: `["p"]`, HasPK: true}, ""); err != nil {
		t.Fatal(err)
	}
	wantPaths(t, e, "c")
	if n := len(indexPaths(t, e, "c", true)); n != 0 {
		t.Fatalf("%d entries left after the last delete", n)
	}
}

func TestIndexEntriesPurged(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(`,"defaultTtl":10`))
	write(t, e, "c", `{"id":"short","pk":"p","a":1,"ttl":5,"s":1}`)
	write(t, e, "c", `{"id":"long","pk":"p","a":2}`)
	clk.Advance(5 * time.Second)
	waitUntil(t, "purge of the ttl-5 item", func() bool { return e.StoredItems() == 1 })
	wantPaths(t, e, "c", "/a", "/id", "/pk")

	// An expired item rewritten before the purger reaches it loses its
	// old entries with it.
	e2, clk2 := openEngine(t, memStore(t), Options{DisablePurger: true})
	mustCreate(t, e2, "db", "c", containerBodyWith(`,"defaultTtl":10`))
	write(t, e2, "c", `{"id":"x","pk":"p","old":1,"ttl":1}`)
	clk2.Advance(2 * time.Second)
	write(t, e2, "c", `{"id":"x","pk":"p","new":1}`)
	wantPaths(t, e2, "c", "/id", "/new", "/pk")
}

// memStore returns an in-memory store that outlives the engines opened
// on it (a restart is a new engine on the same store), strict
// (strictStore).
func memStore(t testing.TB) storage.Store {
	t.Helper()
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return strictStore(store)
}

// openEngine opens an engine on store with a manual clock unless opts
// has a clock.
func openEngine(t testing.TB, store storage.Store, opts Options) (*Engine, *clock.Manual) {
	t.Helper()
	m, _ := opts.Clock.(*clock.Manual)
	if opts.Clock == nil {
		m = clock.NewManual(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
		opts.Clock = m
	}
	e, err := Open(context.Background(), store, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, m
}
