package document

import "testing"

// FuzzPartitionKeyHeader checks the header parser: errors are fine,
// panics are not, and what parses re-encodes to a header that parses to
// the same key.
func FuzzPartitionKeyHeader(f *testing.F) {
	for _, s := range []string{`["a"]`, `[5]`, `[true]`, `[null]`, `[{}]`, `[]`, `["a","b",3]`, `[`, `["\u00e9"]`, `[1e999]`, `[[1]]`, `{}`} {
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
	})
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
