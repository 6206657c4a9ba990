package index

import (
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/query"
)

// computedSet compiles "name: query" definitions.
func computedSet(t testing.TB, defs ...string) *query.Computed {
	t.Helper()
	var ds []query.ComputedDef
	for _, d := range defs {
		name, q, _ := strings.Cut(d, ":")
		ds = append(ds, query.ComputedDef{Name: name, Query: strings.TrimSpace(q)})
	}
	cs, err := query.CompileComputed(ds)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// withComputed is the policy raw ("" for the default) for a container
// with computed properties defs.
func withComputed(t testing.TB, raw string, defs ...string) *Policy {
	t.Helper()
	pol := defaultPolicy
	if raw != "" {
		pol = mustPolicy(raw)
	}
	pol, err := pol.WithComputed(computedSet(t, defs...))
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

var cpDefs = []string{
	"cp_lower: SELECT VALUE LOWER(c.name) FROM c",
	"cp_obj: SELECT VALUE {n: c.name, tags: c.tags} FROM c",
	"cp_off: SELECT VALUE 1 FROM c",
}

func TestComputedPolicyMatching(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		indexed      []string
		not          []string
	}{
		{"/* does not cover them", "", []string{"a", "name"}, []string{"cp_lower", "cp_obj", "cp_obj/n", "cp_off"}},
		{"one value", `{"includedPaths":[{"path":"/*"},{"path":"/cp_lower/?"}]}`, []string{"cp_lower", "a"}, []string{"cp_obj", "cp_obj/n", "cp_off"}},
		{"a subtree", `{"includedPaths":[{"path":"/cp_obj/*"}],"excludedPaths":[{"path":"/*"}]}`,
			[]string{"cp_obj", "cp_obj/n", "cp_obj/tags/[]"}, []string{"a", "name", "cp_lower", "cp_off"}},
		{"an exclusion under one", `{"includedPaths":[{"path":"/*"},{"path":"/cp_obj/*"}],"excludedPaths":[{"path":"/cp_obj/tags/*"}]}`,
			[]string{"cp_obj", "cp_obj/n", "a"}, []string{"cp_obj/tags", "cp_obj/tags/[]"}},
		{"a path inside one", `{"includedPaths":[{"path":"/cp_obj/n/?"}]}`, []string{"cp_obj/n", "a"}, []string{"cp_obj", "cp_obj/tags"}},
		{"excluded only", `{"excludedPaths":[{"path":"/cp_lower/?"}]}`, []string{"a"}, []string{"cp_lower"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := withComputed(t, tc.policy, cpDefs...)
			for _, s := range tc.indexed {
				if !pol.indexes(p(s)) {
					t.Errorf("/%s not indexed, want indexed", s)
				}
			}
			for _, s := range tc.not {
				if pol.indexes(p(s)) {
					t.Errorf("/%s indexed, want not", s)
				}
				if pol.prunes(p(s)) {
					for _, s2 := range tc.indexed {
						if strings.HasPrefix(s2+"/", s+"/") {
							t.Errorf("prunes /%s but /%s is indexed", s, s2)
						}
					}
				}
			}
		})
	}
}

func TestComputedEntries(t *testing.T) {
	h := newHarnessWith(t, withComputed(t, `{"includedPaths":[{"path":"/*"},{"path":"/cp_lower/?"},{"path":"/cp_obj/*"}],"excludedPaths":[{"path":"/cp_obj/tags/[]/?"}],
		"compositeIndexes":[[{"path":"/cp_lower"},{"path":"/n","order":"descending"}]]}`, cpDefs...))
	// Stored members named as computed properties are not indexed; the
	// indexed computed properties are, from the item's values.
	h.put("1", `{"id":"1","pk":"p","name":"Ada","tags":["x"],"cp_lower":"stored","cp_off":"stored","n":1}`)
	h.wantEntries(
		`/cp_lower="ada" 1`,
		`/cp_obj={} 1`,
		`/cp_obj/n="Ada" 1`,
		`/cp_obj/tags=[] 1`,
		`/id="1" 1`,
		`/n=1 1`,
		`/name="Ada" 1`,
		`/pk="p" 1`,
		`/tags=[] 1`,
		`/tags/[]="x" 1`,
	)
	if ce := h.compositeEntries(); len(ce) != 1 || !strings.Contains(ce[0], "ada") || strings.Contains(ce[0], "stored") {
		t.Fatalf("composite entries %q, want one of the computed value", ce)
	}
	// An undefined computed property has no entry; a replace moves them.
	h.put("1", `{"id":"1","pk":"p","name":7}`)
	h.wantEntries(`/cp_obj={} 1`, `/cp_obj/n=7 1`, `/id="1" 1`, `/name=7 1`, `/pk="p" 1`)
	h.put("1", "")
	h.wantEntries()
}

func TestComputedFingerprint(t *testing.T) {
	const indexLower = `{"includedPaths":[{"path":"/*"},{"path":"/cp_lower/?"}]}`
	base := mustPolicy(indexLower)
	pol := withComputed(t, indexLower, cpDefs...)
	fp := func(defs ...string) uint64 { return withComputed(t, indexLower, defs...).fp }
	if pol.fp == base.fp {
		t.Error("computed properties do not change the fingerprint")
	}
	if base.fp != mustPolicy(indexLower).fp || strings.Contains(string(base.canon), "computed") {
		t.Errorf("a policy without computed properties has a new canonical form: %s", base.canon)
	}
	// Definition order does not matter; the query of a property the
	// policy does not index does not either; the names and the indexed
	// queries do.
	if fp(cpDefs[2], cpDefs[0], cpDefs[1]) != pol.fp {
		t.Error("the order of the definitions changes the fingerprint")
	}
	if fp(cpDefs[0], cpDefs[1], "cp_off: SELECT VALUE 2 FROM c") != pol.fp {
		t.Error("the query of an unindexed computed property changes the fingerprint")
	}
	if fp("cp_lower: SELECT VALUE UPPER(c.name) FROM c", cpDefs[1], cpDefs[2]) == pol.fp {
		t.Error("the query of an indexed computed property does not change the fingerprint")
	}
	if fp(cpDefs[0], cpDefs[1]) == pol.fp {
		t.Error("dropping an unindexed computed property (whose name stored members may have) does not change the fingerprint")
	}
	// The canonical form, as the index state stores it, compiles to the
	// same policy.
	again, err := compileCanonical(pol.canon)
	if err != nil || again.fp != pol.fp {
		t.Fatalf("canonical %s: %v", pol.canon, err)
	}
	if !again.indexes(p("cp_lower")) || again.indexes(p("cp_off")) || !again.isComputed("cp_off") || again.cpEval.Len() != 1 {
		t.Errorf("the canonical form compiles to another policy: %s", again.canon)
	}
	// A client's indexingPolicy cannot define computed properties.
	if smuggled, err := ParsePolicy(pol.canon); err != nil || smuggled.computed != nil || smuggled.fp != base.fp {
		t.Errorf("an indexingPolicy with computedProperties: %v, %v", err, smuggled.computed)
	}
}

func TestComputedServes(t *testing.T) {
	const indexLower = `{"includedPaths":[{"path":"/*"},{"path":"/cp_lower/?"}]}`
	pol := withComputed(t, indexLower, cpDefs...)
	for _, tc := range []struct {
		defs   []string
		serves bool
	}{
		{cpDefs, true},
		{[]string{cpDefs[2], cpDefs[1], cpDefs[0]}, true},
		{[]string{cpDefs[0], cpDefs[1], "cp_off: SELECT VALUE 2 FROM c"}, true},
		{[]string{"cp_lower: SELECT VALUE UPPER(c.name) FROM c", cpDefs[1], cpDefs[2]}, false},
		{cpDefs[:2], false},
		{nil, false},
	} {
		var cs *query.Computed
		if tc.defs != nil {
			cs = computedSet(t, tc.defs...)
		}
		if got := pol.ServesComputed(cs); got != tc.serves {
			t.Errorf("%v: serves %v, want %v", tc.defs, got, tc.serves)
		}
	}
	if !defaultPolicy.ServesComputed(nil) || defaultPolicy.ServesComputed(computedSet(t, cpDefs...)) {
		t.Error("a policy without computed properties")
	}
}

func TestComputedPolicyNames(t *testing.T) {
	pol := mustPolicy(`{"includedPaths":[{"path":"/*"},{"path":"/a/b/?"}],"excludedPaths":[{"path":"/\"x y\"/*"}],
		"compositeIndexes":[[{"path":"/c/d"},{"path":"/e"}]],"spatialIndexes":[{"path":"/geo/*","types":["Point"]}]}`)
	for name, want := range map[string]bool{"a": true, "x y": true, "c": true, "e": true, "geo": true, "b": false, "d": false, "_etag": false, "z": false} {
		if got := pol.NamesProperty(name); got != want {
			t.Errorf("NamesProperty(%q) = %v, want %v", name, got, want)
		}
	}
	if _, err := pol.WithComputed(computedSet(t, "geo: SELECT VALUE c.loc FROM c")); err == nil || !strings.Contains(err.Error(), "computed properties cannot have a spatial index") {
		t.Errorf("a spatial index on a computed property: %v", err)
	}
}
