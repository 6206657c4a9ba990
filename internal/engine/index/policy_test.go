package index

import (
	"strings"
	"testing"
)

// p parses a path as the walker builds it: "a/[]/b" is a, any element, b.
func p(s string) []pathSeg {
	var out []pathSeg
	for _, n := range strings.Split(s, "/") {
		if n == "[]" {
			out = append(out, pathSeg{elem: true})
		} else {
			out = append(out, pathSeg{name: n})
		}
	}
	return out
}

func TestIndexPolicyMatching(t *testing.T) {
	const def = `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`
	for _, tc := range []struct {
		name, policy string
		indexed      []string
		not          []string
	}{
		{"absent", "", []string{"a", "a/b", "tags/[]", "_ts", "id"}, []string{"_etag", "_rid", "_self", "_attachments", "_lsn"}},
		{"default", def, []string{"a", "a/b/c", "x/[]/y"}, []string{"_etag", "_rid"}},
		{"none", `{"indexingMode":"none"}`, nil, []string{"a", "id"}},
		{"lazy is consistent", `{"indexingMode":"lazy"}`, []string{"a"}, nil},
		{"root implied", `{"includedPaths":[{"path":"/a/?"}]}`, []string{"a", "b"}, nil},
		{"exclude subtree", `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/big/*"}]}`,
			[]string{"a", "bigger", "x/big"}, []string{"big", "big/x", "big/[]", "big/[]/y"}},
		{"exclude value only", `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/?"}]}`,
			[]string{"a/b", "b"}, []string{"a"}},
		{"include under exclusion", `{"includedPaths":[{"path":"/a/b/?"},{"path":"/c/*"}],"excludedPaths":[{"path":"/*"}]}`,
			[]string{"a/b", "c", "c/d/e", "c/[]"}, []string{"a", "a/b/c", "a/x", "d", "id"}},
		{"more specific wins", `{"includedPaths":[{"path":"/*"},{"path":"/a/b/*"}],"excludedPaths":[{"path":"/a/*"}]}`,
			[]string{"a/b", "a/b/c", "z"}, []string{"a", "a/c"}},
		{"? beats * at equal depth", `{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"},{"path":"/a/*"}]}`,
			[]string{"a"}, []string{"a/b", "b"}},
		{"exclusion wins a tie", `{"includedPaths":[{"path":"/*"},{"path":"/a/?"}],"excludedPaths":[{"path":"/a/?"}]}`,
			[]string{"b"}, []string{"a"}},
		{"quoted", `{"includedPaths":[{"path":"/\"x y\"/?"},{"path":"/\"a.b\"/*"}],"excludedPaths":[{"path":"/*"}]}`,
			[]string{"x y", "a.b", "a.b/c"}, []string{"a", "x"}},
		{"array elements", `{"includedPaths":[{"path":"/tags/[]/?"},{"path":"/items/[]/name/?"}],"excludedPaths":[{"path":"/*"}]}`,
			[]string{"tags/[]", "items/[]/name"}, []string{"tags", "items", "items/[]", "items/[]/price"}},
		{"system properties never", `{"includedPaths":[{"path":"/_rid/?"},{"path":"/*"}]}`, []string{"_ts"}, []string{"_rid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw []byte
			if tc.policy != "" {
				raw = []byte(tc.policy)
			}
			pol, err := ParsePolicy(raw)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.indexed {
				if !pol.indexes(p(s)) {
					t.Errorf("%s: /%s not indexed, want indexed", tc.policy, s)
				}
			}
			for _, s := range tc.not {
				if pol.indexes(p(s)) {
					t.Errorf("%s: /%s indexed, want not", tc.policy, s)
				}
				// Pruning may only skip what is not indexed.
				if pol.prunes(p(s)) {
					for _, s2 := range tc.indexed {
						if strings.HasPrefix(s2+"/", s+"/") {
							t.Errorf("%s: prunes /%s but /%s is indexed", tc.policy, s, s2)
						}
					}
				}
			}
		})
	}
}

func TestIndexPolicyFingerprint(t *testing.T) {
	same := []string{
		``,
		`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`,
		`{"indexingMode":"Consistent","automatic":false,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/_etag/?"}],"compositeIndexes":[]}`,
	}
	var fp uint64
	for i, s := range same {
		var raw []byte
		if s != "" {
			raw = []byte(s)
		}
		pol, err := ParsePolicy(raw)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && pol.fp != fp {
			t.Errorf("%s: fingerprint differs from the default's", s)
		}
		fp = pol.fp
		// The canonical form compiles to the same policy.
		again, err := compilePolicy(pol.canon)
		if err != nil || again.fp != pol.fp {
			t.Errorf("canonical %s: %v, fingerprint %x want %x", pol.canon, err, again.fp, pol.fp)
		}
	}
	other, _ := ParsePolicy([]byte(`{"excludedPaths":[{"path":"/a/?"}]}`))
	none, _ := ParsePolicy([]byte(`{"indexingMode":"none"}`))
	if other.fp == fp || none.fp == fp || other.fp == none.fp {
		t.Error("different policies share a fingerprint")
	}
	// Composite indexes are part of what is indexed: written either way
	// they give one fingerprint, and a different one than without them.
	comp1, err := ParsePolicy([]byte(`{"compositeIndexes":[[{"path":"/a"},{"path":"/b","order":"Descending"}],[{"path":"/c","order":"ascending"},{"path":"/\"d\"","order":"ascending"}]]}`))
	if err != nil {
		t.Fatal(err)
	}
	comp2, _ := ParsePolicy([]byte(`{"compositeIndexes":[[{"path":"/c"},{"path":"/d"}],[{"path":"/a","order":"ascending"},{"path":"/b","order":"descending"}],[{"path":"/c"},{"path":"/d"}]]}`))
	flipped, _ := ParsePolicy([]byte(`{"compositeIndexes":[[{"path":"/a"},{"path":"/b"}],[{"path":"/c"},{"path":"/d"}]]}`))
	if comp1.fp != comp2.fp || comp1.fp == fp || flipped.fp == comp1.fp || len(comp1.composites) != 2 {
		t.Errorf("composite fingerprints: %x %x %x (default %x); %s", comp1.fp, comp2.fp, flipped.fp, fp, comp1.canon)
	}
	if again, err := compilePolicy(comp1.canon); err != nil || again.fp != comp1.fp {
		t.Errorf("canonical %s: %v", comp1.canon, err)
	}
}

func TestIndexPolicyErrors(t *testing.T) {
	for _, tc := range []struct{ policy, want string }{
		{`{"indexingMode":"sometimes"}`, "The indexing mode 'sometimes' is invalid"},
		{`{"includedPaths":[{"path":"a/?"}]}`, "The indexing path 'a/?' could not be accepted, failed near position 0"},
		{`{"includedPaths":[{"path":"/a"}]}`, "The indexing path '/a' could not be accepted"},
		{`{"includedPaths":[{"path":"/?"}]}`, "The indexing path '/?' could not be accepted"},
		{`{"excludedPaths":[{"path":"/a/*/b/?"}]}`, "The indexing path '/a/*/b/?' could not be accepted"},
		{`{"excludedPaths":[{"path":"/\"a/?"}]}`, `The indexing path '/"a/?' could not be accepted`},
		{`{"excludedPaths":[{}]}`, `missing its "path"`},
		{`{"includedPaths":"/*"}`, "The indexingPolicy is invalid"},
		{`{"compositeIndexes":[[{"path":"a","order":"ascending"},{"path":"/b"}]]}`, "The composite index path 'a' is invalid"},
		{`{"compositeIndexes":[[{"path":"/a","order":"up"},{"path":"/b"}]]}`, "The composite index order 'up' is invalid"},
		{`{"compositeIndexes":[[{"path":"/a"}]]}`, "A composite index must have at least two paths"},
		{`{"compositeIndexes":[[{"path":"/a/*"},{"path":"/b"}]]}`, "The composite index path '/a/*' is invalid"},
		{`{"compositeIndexes":[[{"path":"/a/?"},{"path":"/b"}]]}`, "The composite index path '/a/?' is invalid"},
		{`{"compositeIndexes":[[{"path":"/a/[]/b"},{"path":"/b"}]]}`, "The composite index path '/a/[]/b' is invalid"},
	} {
		_, err := ParsePolicy([]byte(tc.policy))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.policy, err, tc.want)
		}
	}
}

func TestAppendPath(t *testing.T) {
	for _, tc := range []struct {
		path []pathSeg
		want string
	}{
		{p("a/b"), "/a/b"},
		{p("tags/[]"), "/tags/[]"},
		{[]pathSeg{{name: "a/b"}, {name: ""}, {name: "[]"}, {name: "x y"}}, `/"a/b"/""/"[]"/x y`},
	} {
		if got := string(appendPath(nil, tc.path)); got != tc.want {
			t.Errorf("appendPath(%v) = %s, want %s", tc.path, got, tc.want)
		}
	}
}

// FuzzIndexingPolicy compiles arbitrary policies: no panic, and a policy
// that compiles has a canonical form that compiles to the same
// fingerprint.
func FuzzIndexingPolicy(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"indexingMode":"none"}`,
		`{"includedPaths":[{"path":"/a/?"},{"path":"/\"x\"/[]/*"}],"excludedPaths":[{"path":"/*"}]}`,
		`{"compositeIndexes":[[{"path":"/a"},{"path":"/b/c","order":"descending"}]]}`,
		`{"compositeIndexes":[[{"path":"/\"a/b\""},{"path":"/c","order":"Ascending"}],[]]}`,
		`{"compositeIndexes":[[{"path":"/"},{"path":"//"}]]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := ParsePolicy([]byte(raw))
		if err != nil {
			return
		}
		again, err := compilePolicy(p.canon)
		if err != nil || again.fp != p.fp {
			t.Fatalf("%s: canonical %s: %v", raw, p.canon, err)
		}
	})
}

// TestNormalizePolicy: the policy as the service stores and echoes it.
func TestNormalizePolicy(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`},
		{`{"indexingMode":"Consistent","includedPaths":[{"path":"/*"}]}`, `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`},
		{`{"includedPaths":[{"path":"/","indexes":[{"kind":"Range","dataType":"Number","precision":-1}]}]}`, `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"indexes":[{"kind":"Range","dataType":"Number","precision":-1}],"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`},
		{`{"automatic":false,"excludedPaths":[{"path":"/big/*"}],"compositeIndexes":[[{"path":"/a","order":"ascending"},{"path":"/b","order":"descending"}]]}`, `{"indexingMode":"consistent","automatic":false,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/big/*"},{"path":"/\"_etag\"/?"}],"compositeIndexes":[[{"path":"/a","order":"ascending"},{"path":"/b","order":"descending"}]]}`},
		{`{"excludedPaths":[{"path":"/\"_etag\"/?"}]}`, `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`},
		{`{"indexingMode":"none"}`, `{"indexingMode":"none","automatic":false,"includedPaths":[],"excludedPaths":[]}`},
	} {
		if _, err := ParsePolicy([]byte(tc.in)); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got := string(NormalizePolicy([]byte(tc.in))); got != tc.want {
			t.Errorf("NormalizePolicy(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
