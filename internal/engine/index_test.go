package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// indexEntries renders container coll's index entries as
// "<path>=<value> <id>", in key order, leaving out _ts (which moves with
// the clock) unless withTs.
func indexEntries(t testing.TB, e *Engine, coll string, withTs bool) []string {
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
			path, rest, err := keys.DecodeBytes(it.Key()[len(base):])
			if err != nil {
				return err
			}
			val := rest[:len(rest)-len(mustSkip(t, rest))]
			_, rest, err = document.DecodePK(mustSkip(t, rest), len(c.pk.Paths))
			if err != nil {
				return err
			}
			id, _, err := keys.DecodeBytes(rest)
			if err != nil {
				return err
			}
			if string(path) == "/_ts" && !withTs {
				continue
			}
			out = append(out, fmt.Sprintf("%s=%s %s", path, renderIndexValue(val), id))
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustSkip(t testing.TB, b []byte) []byte {
	rest, err := skipIndexValue(b)
	if err != nil {
		t.Fatalf("index value %x: %v", b, err)
	}
	return rest
}

func renderIndexValue(v []byte) string {
	switch v[0] {
	case idxArray:
		return "[]"
	case idxObject:
		return "{}"
	}
	pk, _, err := document.DecodePK(v, 1)
	if err != nil {
		return fmt.Sprintf("?%x", v)
	}
	return string(pk.AppendJSON(nil)[1 : len(pk.AppendJSON(nil))-1])
}

func checkConsistent(t testing.TB, e *Engine) {
	t.Helper()
	if err := e.CheckConsistency(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func wantEntries(t testing.TB, e *Engine, coll string, want ...string) {
	t.Helper()
	got := indexEntries(t, e, coll, false)
	if !slices.Equal(got, want) {
		t.Fatalf("index entries:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	checkConsistent(t, e)
}

func TestIndexEntriesFollowItems(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}

	write(t, e, "c", `{"id":"1","pk":"p","a":1,"b":{"c":"x","d":[]},"tags":["t1","t2","t1"],"n":null,"f":false,"a":-0}`)
	wantEntries(t, e, "c",
		`/a=0 1`, // duplicate names: the last wins
		`/b={} 1`,
		`/b/c="x" 1`,
		`/b/d=[] 1`,
		`/f=false 1`,
		`/id="1" 1`,
		`/n=null 1`,
		`/pk="p" 1`,
		`/tags=[] 1`,
		`/tags/[]="t1" 1`,
		`/tags/[]="t2" 1`,
	)
	if ts := indexEntries(t, e, "c", true); !slices.ContainsFunc(ts, func(s string) bool { return strings.HasPrefix(s, "/_ts=") }) {
		t.Fatalf("_ts is not indexed: %v", ts)
	}

	// A replace keeps what is unchanged and swaps the rest.
	write(t, e, "c", `{"id":"1","pk":"p","a":2,"tags":[{"k":true}]}`)
	wantEntries(t, e, "c", `/a=2 1`, `/id="1" 1`, `/pk="p" 1`, `/tags=[] 1`, `/tags/[]={} 1`, `/tags/[]/k=true 1`)

	// Patches go through the same path.
	if _, err := e.PatchItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "1", PK: `["p"]`, HasPK: true},
		[]byte(`{"operations":[{"op":"set","path":"/a","value":"s"},{"op":"remove","path":"/tags"}]}`), ""); err != nil {
		t.Fatal(err)
	}
	wantEntries(t, e, "c", `/a="s" 1`, `/id="1" 1`, `/pk="p" 1`)

	// A batch too.
	res, err := e.ExecuteBatch(ctx, ref, []byte(`[{"operationType":"Create","resourceBody":{"id":"2","pk":"p","a":3}},{"operationType":"Delete","id":"1"}]`), BatchOptions{Atomic: true})
	if err != nil || res.Failed {
		t.Fatalf("batch: %v %+v", err, res)
	}
	wantEntries(t, e, "c", `/a=3 2`, `/id="2" 2`, `/pk="p" 2`)

	if _, err := e.DeleteItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "2", PK: `["p"]`, HasPK: true}, ""); err != nil {
		t.Fatal(err)
	}
	wantEntries(t, e, "c")
}

func TestIndexEntriesPolicy(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"includedPaths":[{"path":"/a/?"},{"path":"/tags/[]/?"}],"excludedPaths":[{"path":"/*"}]}}`)
	write(t, e, "c", `{"id":"1","pk":"p","a":1,"b":2,"tags":["x"],"o":{"a":1}}`)
	wantEntries(t, e, "c", `/a=1 1`, `/tags/[]="x" 1`)

	mustCreate(t, e, "db", "n", `{"id":"n","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"indexingMode":"none"}}`)
	write(t, e, "n", `{"id":"1","pk":"p","a":1}`)
	wantEntries(t, e, "n")
}

func TestIndexEntriesPurged(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(`,"defaultTtl":10`))
	write(t, e, "c", `{"id":"short","pk":"p","a":1,"ttl":5}`)
	write(t, e, "c", `{"id":"long","pk":"p","a":2}`)
	clk.Advance(5 * time.Second)
	waitUntil(t, "purge of the ttl-5 item", func() bool { return e.StoredItems() == 1 })
	wantEntries(t, e, "c", `/a=2 long`, `/id="long" long`, `/pk="p" long`)

	// An expired item rewritten before the purger reaches it loses its
	// old entries with it.
	e2, clk2 := openEngine(t, memStore(t), Options{DisablePurger: true})
	mustCreate(t, e2, "db", "c", containerBodyWith(`,"defaultTtl":10`))
	write(t, e2, "c", `{"id":"x","pk":"p","old":1,"ttl":1}`)
	clk2.Advance(2 * time.Second)
	write(t, e2, "c", `{"id":"x","pk":"p","new":1}`)
	wantEntries(t, e2, "c", `/id="x" x`, `/new=1 x`, `/pk="p" x`)
}

// memStore returns an in-memory store that outlives the engines opened
// on it (a restart is a new engine on the same store).
func memStore(t testing.TB) storage.Store {
	t.Helper()
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
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

func TestIndexValueOrder(t *testing.T) {
	// Encoded values sort in Cosmos order and none is a prefix of another.
	vals := []string{`null`, `false`, `true`, `-1e300`, `-1`, `-0.5`, `0`, `1e-300`, `1`, `2`, `1e300`, `""`, `"\u0000"`, `"a"`, `"a\u0000"`, `"` + longA(256) + `"`, `"` + longA(257) + `"`, `"` + longA(255) + `b"`, `"ab"`, `"b"`, `[]`, `{}`}
	var enc [][]byte
	for _, v := range vals {
		var w entryWalker
		w.collect(defaultIndexPolicy, []byte(`{"v":`+v+`}`))
		es := w.sorted()
		if len(es) != 1 {
			t.Fatalf("%s: %d entries", v, len(es))
		}
		enc = append(enc, es[0])
	}
	for i := 1; i < len(enc); i++ {
		if string(enc[i-1]) >= string(enc[i]) {
			t.Errorf("%s does not sort before %s", vals[i-1], vals[i])
		}
		if strings.HasPrefix(string(enc[i]), string(enc[i-1])) {
			t.Errorf("%s is a prefix of %s", vals[i-1], vals[i])
		}
	}
	var w entryWalker
	w.collect(defaultIndexPolicy, []byte(`{"v":"`+longA(1000)+`"}`))
	if es := w.sorted(); len(es) != 1 || len(es[0]) > maxIndexedString+16 {
		t.Errorf("a 1,000-byte string has an entry of %d bytes", len(es[0]))
	}
	if got := renderIndexValue(appendIndexNumber(nil, math.Copysign(0, -1))); got != "0" {
		t.Errorf("-0 encodes as %s", got)
	}
}

// FuzzIndexEntries walks arbitrary documents: no panic, every entry is
// a path and exactly one value, or a composite index's name and one
// value per path, and each composite index has one entry per document.
func FuzzIndexEntries(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":[1,"x",{"b":null}],"a":{}}`, `{"":"\u0000","x y":[[[]]],"s":"` + longA(300) + `"}`, `{"n":-0.0e-0}`, `{"a":"x","b":{"c":[2]}}`, `{"b":{"c":"` + longA(260) + `"},"b":{"c":1}}`} {
		f.Add(s)
	}
	pol, _ := parseIndexingPolicy([]byte(`{"excludedPaths":[{"path":"/a/[]/*"}]}`))
	comp, err := parseIndexingPolicy([]byte(`{"excludedPaths":[{"path":"/*"}],"compositeIndexes":[[{"path":"/a"},{"path":"/b/c","order":"descending"}],[{"path":"/b/c","order":"descending"},{"path":"/\"x y\""}]]}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if _, err := objectBody([]byte(doc)); err != nil {
			return
		}
		for _, p := range []*indexPolicy{defaultIndexPolicy, pol, comp} {
			var w entryWalker
			w.collect(p, []byte(doc))
			composites := 0
			for _, e := range w.sorted() {
				path, rest, err := keys.DecodeBytes(e)
				if err != nil {
					t.Fatalf("%s: entry %q: path: %v", doc, e, err)
				}
				parts := []byte{0}
				if path[0] == '(' {
					composites++
					ci := slices.IndexFunc(p.composites, func(c compositeIndex) bool { return string(c.name) == string(path) })
					if ci < 0 {
						t.Fatalf("%s: entry %q of no composite index", doc, e)
					}
					parts = parts[:0]
					for _, d := range p.composites[ci].desc {
						parts = append(parts, map[bool]byte{false: 0, true: 0xFF}[d])
					}
				}
				for _, x := range parts {
					if rest, _, err = skipValueX(rest, x); err != nil {
						t.Fatalf("%s: entry %q: value: %v", doc, e, err)
					}
				}
				if len(rest) != 0 {
					t.Fatalf("%s: entry %q: %d bytes left", doc, e, len(rest))
				}
			}
			if composites != len(p.composites) {
				t.Fatalf("%s: %d composite entries, want %d", doc, composites, len(p.composites))
			}
		}
	})
}
