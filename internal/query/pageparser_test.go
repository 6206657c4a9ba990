package query

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// scribbleSource yields each document from one buffer that it
// overwrites after the yield, as a store's iterator may: a value that
// outlived its document would read the next document's bytes, or the
// scribble.
type scribbleSource struct{ memSource }

func (s scribbleSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	var buf []byte
	return s.memSource.Scan(after, func(key, doc []byte) bool {
		buf = append(buf[:0], doc...)
		ok := yield(key, buf)
		for i := range buf {
			buf[i] = '#'
		}
		return ok
	})
}

// TestPageParser runs streaming queries, whose documents one parser
// reads in place with its buffers reused from one document to the next,
// over documents of changing shapes (an array or object full in one
// document is empty or absent in the next), and checks the rows against
// those of the same documents read through the executor's other modes,
// which keep nothing of a document (ORDER BY on the storage key's
// order), and against copies that nothing overwrites.
func TestPageParser(t *testing.T) {
	var src memSource
	shapes := []string{
		`{"id":"%d","n":%d,"a":[1,2,{"x":[3,4]}],"o":{"p":"q","r":[5]},"s":"ab%%c","re":"^a.c$"}`,
		`{"id":"%d","n":%d,"a":[],"o":{},"s":"abc","re":"b"}`,
		`{"id":"%d","n":%d,"s":"a\"b\\u00e9","o":{"p":[[],{}]},"re":"x|é"}`,
		`{"id":"%d","n":%d,"a":[{"x":[]},{"x":[7,8,9]}],"o":{"p":{"q":{"r":"deep"}}},"s":"é","re":"^é$"}`,
	}
	for i := range 40 {
		src = append(src, memDoc{key: []byte(fmt.Sprintf("k%03d", i)), doc: []byte(fmt.Sprintf(shapes[i%len(shapes)], i, i))})
	}
	for _, q := range []string{
		"SELECT * FROM c WHERE c.n >= 0",
		"SELECT * FROM c WHERE ARRAY_LENGTH(c.a) > 0",
		"SELECT c.a, c.o FROM c",
		"SELECT VALUE c FROM c",
		"SELECT c.id, x FROM c JOIN x IN c.a",
		"SELECT VALUE {s: c.s, m: RegexMatch(c.s, c.re), l: c.s LIKE c.re, sub: ARRAY(SELECT VALUE y FROM y IN c.a WHERE IS_ARRAY(y.x))} FROM c",
		"SELECT c.o.p, c.s FROM c WHERE IS_DEFINED(c.o.p) OR c.s = 'abc'",
	} {
		want := flatten(pages(t, q, src, 0))
		sorted := flatten(pages(t, q+" ORDER BY c.id", src, 0))
		slices.Sort(want)
		slices.Sort(sorted)
		if !slices.Equal(want, sorted) {
			t.Fatalf("%s: streaming\n%s\nORDER BY\n%s", q, strings.Join(want, "\n"), strings.Join(sorted, "\n"))
		}
		for _, size := range []int{0, 3} {
			got := flatten(pages(t, q, scribbleSource{src}, size))
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s, pages of %d over a reused buffer:\n%s\nwant\n%s", q, size, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// TestPageParserAllocs: a streaming page that evaluates a WHERE on each
// document allocates nothing per document once its parser's buffers
// have grown.
func TestPageParserAllocs(t *testing.T) {
	src := benchDocs(2000)
	q, err := Parse("SELECT * FROM c WHERE c.n >= 0 AND c.nested.x >= 0 AND ARRAY_LENGTH(c.tags) = 3")
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func() {
		pg, err := p.Page(t.Context(), src, PageRequest{MaxItemCount: -1})
		if err != nil || pg.Body.Len() != len(src) {
			t.Fatalf("%d rows, %v", pg.Body.Len(), err)
		}
		pg.Body.Release()
	}
	run()
	if allocs := testing.AllocsPerRun(5, run); allocs > 100 {
		t.Errorf("a page of %d documents allocated %v times, want a few per page", len(src), allocs)
	}
}
