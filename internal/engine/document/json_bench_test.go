package document

import (
	"strconv"
	"strings"
	"testing"
)

// benchDocs are the shapes a write's validation sees: a typical small
// item, a 1 KB item (what the engine's write benchmarks store), an
// object with many members and a deeply nested one.
func benchDocs() []struct {
	name string
	doc  []byte
} {
	var wide strings.Builder
	wide.WriteString(`{"id":"w","pk":"p"`)
	for i := range 500 {
		wide.WriteString(`,"field` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	wide.WriteByte('}')
	deep := `{"id":"d","pk":"p","a":` + strings.Repeat(`{"k":1,"a":`, 100) + `null` + strings.Repeat(`}`, 100) + `}`
	return []struct {
		name string
		doc  []byte
	}{
		{"small", []byte(`{"id":"item-42","pk":"tenant-7","name":"R-410 Road Bicycle","price":455.95,"inventory":{"quantity":15,"tags":["a","b"]},"used":false}`)},
		{"1KB", []byte(`{"id":"1","pk":"p","pad":"` + strings.Repeat("x", 1000) + `"}`)},
		{"wide-500", []byte(wide.String())},
		{"deep-100", []byte(deep)},
	}
}

// BenchmarkCheckShape measures the validation scan every write runs over
// the client's document.
func BenchmarkCheckShape(b *testing.B) {
	for _, tc := range benchDocs() {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.doc)))
			for b.Loop() {
				if err := CheckShape(tc.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkObjectBody measures the whole validation of a write's body:
// JSON, UTF-8, the shape and the top-level members, in one scan.
func BenchmarkObjectBody(b *testing.B) {
	for _, tc := range benchDocs() {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.doc)))
			for b.Loop() {
				if _, err := ObjectBody(tc.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
