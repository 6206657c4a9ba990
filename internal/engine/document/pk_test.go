package document

import (
	"fmt"
	"slices"
	"testing"
)

// FuzzPartitionKeyHeader checks the header parser: errors are fine,
// panics are not, and what parses re-encodes to a header that parses to
// the same key.
func FuzzPartitionKeyHeader(f *testing.F) {
	for _, s := range []string{`["a"]`, `[5]`, `[true]`, `[null]`, `[{}]`, `[]`, `["a","b",3]`, `[`, `["\u00e9"]`, `["a\u0000b"]`, `["x",null,false]`, `[-0.5,"y"]`, `[1e999]`, `[[1]]`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		pk, err := ParsePKHeader(h)
		if err != nil {
			return
		}
		again, err := ParsePKHeader(string(pk.AppendJSON(nil)))
		if err != nil || !again.Equal(pk) {
			t.Fatalf("%q parsed to %v, which re-encodes to %s and parses to %v, %v", h, pk, pk.AppendJSON(nil), again, err)
		}
		enc := pk.Encode(nil)
		dec, rest, err := DecodePK(enc, len(pk))
		if err != nil || len(rest) != 0 || !dec.Equal(pk) {
			t.Fatalf("%q: key encoding does not round-trip: %v, %v", h, dec, err)
		}
		// The EPK hashed from the encoding, followed by an item id as in
		// an item's key, is the EPK of the key.
		itemKey := append(slices.Clip(enc), "\x06id\x00\x01"...)
		for _, def := range pkDefsFor(t, len(pk)) {
			if got, err := def.EPKOfKey(itemKey); err != nil || got != def.EPK(pk) {
				t.Fatalf("%q under %+v: EPKOfKey %q, %v; EPK %q", h, def, got, err, def.EPK(pk))
			}
			// Its head is its first 32 digits, as bytes.
			head, err := def.EPKHeadOfKey(itemKey)
			if def.HashV1() {
				if err == nil {
					t.Fatalf("%q under %+v: a head of a key of version 1", h, def)
				}
				continue
			}
			if epk := def.EPK(pk); err != nil || fmt.Sprintf("%X", head) != epk[:32] || def.EPKHead(pk) != head {
				t.Fatalf("%q under %+v: EPKHeadOfKey %X, EPKHead %X, %v; EPK %q", h, def, head, def.EPKHead(pk), err, epk)
			}
		}
	})
}

// pkDefsFor returns the partition key definitions a key of n components
// can have: Hash of either version for one, MultiHash for two or three.
func pkDefsFor(t *testing.T, n int) []PKDef {
	var specs []string
	switch n {
	case 1:
		specs = []string{`{"paths":["/a"],"kind":"Hash","version":1}`, `{"paths":["/a"],"kind":"Hash","version":2}`}
	case 2:
		specs = []string{`{"paths":["/a","/b"],"kind":"MultiHash","version":2}`}
	case 3:
		specs = []string{`{"paths":["/a","/b","/c"],"kind":"MultiHash","version":2}`}
	}
	defs := make([]PKDef, len(specs))
	for i, spec := range specs {
		def, err := ParsePKDef([]byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		defs[i] = def
	}
	return defs
}

// TestFromDocumentNonPrimitive checks that an object or array at a
// partition key path is the None value, as the service extracts keys,
// while a header accepts only {} for it.
func TestFromDocumentNonPrimitive(t *testing.T) {
	def, err := ParsePKDef([]byte(`{"paths":["/a","/b"],"kind":"MultiHash","version":2}`))
	if err != nil {
		t.Fatal(err)
	}
	str := PKComponent{Kind: PKString, Str: "x"}
	none := PKComponent{Kind: PKNone}
	for _, tc := range []struct {
		doc  string
		want PartitionKey
	}{
		{`{"id":"1","a":"x","b":{}}`, PartitionKey{str, none}},
		{`{"id":"1","a":"x","b":{"c":1}}`, PartitionKey{str, none}},
		{`{"id":"1","a":"x","b":[1,2]}`, PartitionKey{str, none}},
		{`{"id":"1","a":"x"}`, PartitionKey{str, none}},
		{`{"id":"1","a":{},"b":"x"}`, PartitionKey{none, str}},
	} {
		ms, err := ObjectBody([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		got, err := def.FromDocument([]byte(tc.doc), ms)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("FromDocument(%s) = %s, %v; want %s", tc.doc, got.AppendJSON(nil), err, tc.want.AppendJSON(nil))
		}
	}
	for _, tc := range []struct {
		h  string
		ok bool
	}{
		{`["x",{}]`, true},
		{`["x",{"c":1}]`, false},
		{`["x",[1]]`, false},
	} {
		pk, err := ParsePKHeader(tc.h)
		if (err == nil) != tc.ok {
			t.Errorf("ParsePKHeader(%s) = %v, %v; want ok %v", tc.h, pk, err, tc.ok)
		}
	}
}

// TestEPKAllocations: an EPK costs one allocation, its string, and its
// head none, for a scan places every key it meets by one, and a write
// its key.
func TestEPKAllocations(t *testing.T) {
	for _, def := range []PKDef{{Paths: [][]string{{"a"}}, Kind: "Hash", version: 2}, {Paths: [][]string{{"a"}, {"b"}}, Kind: "MultiHash", version: 2}} {
		pk := PartitionKey{{Kind: PKString, Str: "hello"}, {Kind: PKNumber, Num: 3}}[:len(def.Paths)]
		enc := pk.Encode(nil)
		if n := testing.AllocsPerRun(100, func() { _, _ = def.EPKOfKey(enc) }); n > 1 {
			t.Errorf("%s: EPKOfKey allocates %v times", def.Kind, n)
		}
		if n := testing.AllocsPerRun(100, func() { _ = def.EPKV2(pk) }); n > 1 {
			t.Errorf("%s: EPKV2 allocates %v times", def.Kind, n)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = def.EPKHeadOfKey(enc) }); n > 0 {
			t.Errorf("%s: EPKHeadOfKey allocates %v times", def.Kind, n)
		}
		if n := testing.AllocsPerRun(100, func() { _ = def.EPKHead(pk) }); n > 0 {
			t.Errorf("%s: EPKHead allocates %v times", def.Kind, n)
		}
	}
}
