package index

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/keys"
)

func TestEntries(t *testing.T) {
	h := newHarness(t, "")
	h.put("1", `{"id":"1","pk":"p","a":1,"b":{"c":"x","d":[]},"tags":["t1","t2","t1"],"n":null,"f":false,"a":-0,"_rid":"r","_etag":"e","_ts":5}`)
	h.wantEntries(
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
	if ts := h.entries(true); !slices.Contains(ts, `/_ts=5 1`) {
		t.Fatalf("_ts is not indexed: %v", ts)
	}

	// A replace keeps what is unchanged and swaps the rest.
	h.put("1", `{"id":"1","pk":"p","a":2,"tags":[{"k":true}]}`)
	h.wantEntries(`/a=2 1`, `/id="1" 1`, `/pk="p" 1`, `/tags=[] 1`, `/tags/[]={} 1`, `/tags/[]/k=true 1`)

	h.put("2", `{"id":"2","pk":"p","a":3}`)
	h.put("1", "")
	h.wantEntries(`/a=3 2`, `/id="2" 2`, `/pk="p" 2`)
	h.put("2", "")
	h.wantEntries()
}

func TestEntriesPolicy(t *testing.T) {
	h := newHarness(t, `{"includedPaths":[{"path":"/a/?"},{"path":"/tags/[]/?"}],"excludedPaths":[{"path":"/*"}]}`)
	h.put("1", `{"id":"1","pk":"p","a":1,"b":2,"tags":["x"],"o":{"a":1}}`)
	h.wantEntries(`/a=1 1`, `/tags/[]="x" 1`)

	h = newHarness(t, `{"indexingMode":"none"}`)
	h.put("1", `{"id":"1","pk":"p","a":1}`)
	h.wantEntries()
	if ts := h.entries(true); len(ts) != 0 {
		t.Fatalf("indexing none indexed %v", ts)
	}
}

func TestValueOrder(t *testing.T) {
	// Encoded values sort in Cosmos order and none is a prefix of another.
	vals := []string{`null`, `false`, `true`, `-1e300`, `-1`, `-0.5`, `0`, `1e-300`, `1`, `2`, `1e300`, `""`, `"\u0000"`, `"a"`, `"a\u0000"`, `"` + longA(256) + `"`, `"` + longA(257) + `"`, `"` + longA(255) + `b"`, `"ab"`, `"b"`, `[]`, `{}`}
	var enc [][]byte
	for _, v := range vals {
		var w entryWalker
		w.collect(defaultPolicy, []byte(`{"v":`+v+`}`))
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
	w.collect(defaultPolicy, []byte(`{"v":"`+longA(1000)+`"}`))
	if es := w.sorted(); len(es) != 1 || len(es[0]) > maxIndexedString+16 {
		t.Errorf("a 1,000-byte string has an entry of %d bytes", len(es[0]))
	}
	if got := renderValue(appendNumber(nil, math.Copysign(0, -1))); got != "0" {
		t.Errorf("-0 encodes as %s", got)
	}
}

// storable reports whether the engine would store doc: valid UTF-8 JSON,
// an object, within the engine's shape limits.
func storable(doc []byte) bool {
	if !json.Valid(doc) || !utf8.Valid(doc) || document.CheckShape(doc) != nil {
		return false
	}
	_, ok := document.ObjectMembers(doc)
	return ok
}

// FuzzIndexEntries walks arbitrary documents: no panic, every entry is
// a path and exactly one value, or a composite index's name and one
// value per path, and each composite index has one entry per document;
// under a policy with computed properties too.
func FuzzIndexEntries(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":[1,"x",{"b":null}],"a":{}}`, `{"":"\u0000","x y":[[[]]],"s":"` + longA(300) + `"}`, `{"n":-0.0e-0}`, `{"a":"x","b":{"c":[2]}}`, `{"b":{"c":"` + longA(260) + `"},"b":{"c":1}}`, `{"name":"Ada","tags":["x",{"y":1}],"cp_lower":"stored","a":2}`} {
		f.Add(s)
	}
	pol, _ := ParsePolicy([]byte(`{"excludedPaths":[{"path":"/a/[]/*"}]}`))
	comp, err := ParsePolicy([]byte(`{"excludedPaths":[{"path":"/*"}],"compositeIndexes":[[{"path":"/a"},{"path":"/b/c","order":"descending"}],[{"path":"/b/c","order":"descending"},{"path":"/\"x y\""}]]}`))
	if err != nil {
		f.Fatal(err)
	}
	cps := withComputed(f, `{"includedPaths":[{"path":"/*"},{"path":"/cp_lower/?"},{"path":"/cp_obj/*"}],
		"compositeIndexes":[[{"path":"/cp_obj/n"},{"path":"/a","order":"descending"}]]}`, cpDefs...)
	f.Fuzz(func(t *testing.T, doc string) {
		if !storable([]byte(doc)) {
			return
		}
		for _, p := range []*Policy{defaultPolicy, pol, comp, cps} {
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
