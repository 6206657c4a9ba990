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
