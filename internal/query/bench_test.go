package query

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// benchDocs returns n documents of about 1 KB each.
func benchDocs(n int) memSource {
	src := make(memSource, n)
	pad := strings.Repeat("x", 800)
	for i := range src {
		src[i] = memDoc{
			key: []byte(fmt.Sprintf("doc/%08d", i)),
			doc: []byte(fmt.Sprintf(`{"id":"item-%d","pk":"p%d","n":%d,"price":%d.25,"tags":["a","b","c"],"nested":{"x":%d,"y":"yy"},"pad":%q,"_ts":1700000000}`, i, i%10, i, i%100, i, pad)),
		}
	}
	return src
}

func benchQuery(b *testing.B, text string, pageSize int) {
	src := benchDocs(5000)
	q, err := Parse(text)
	if err != nil {
		b.Fatal(err)
	}
	p, err := q.Bind([]Param{{Name: "@n", Value: NumberValue(2500)}})
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, d := range src {
		size += int64(len(d.doc))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var tok []byte
		rows := 0
		for {
			pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: pageSize, Continuation: tok})
			if err != nil {
				b.Fatal(err)
			}
			rows += pg.Body.Len()
			pg.Body.Release() // as a server does once it has sent the rows
			if pg.Next == nil {
				break
			}
			tok = pg.Next
		}
		if rows == 0 {
			b.Fatal("no rows")
		}
	}
}

func BenchmarkSelectStar(b *testing.B)      { benchQuery(b, "SELECT * FROM c", 5000) }
func BenchmarkSelectStarWhere(b *testing.B) { benchQuery(b, "SELECT * FROM c WHERE c.n >= @n", 5000) }
func BenchmarkSelectProject(b *testing.B)   { benchQuery(b, "SELECT c.id, c.nested.x AS x FROM c", 5000) }
func BenchmarkOrderByPaged(b *testing.B) {
	benchQuery(b, "SELECT * FROM c ORDER BY c.price DESC", 1000)
}
func BenchmarkCountWhere(b *testing.B) {
	benchQuery(b, "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'p3'", 100)
}
func BenchmarkGroupBy(b *testing.B) {
	benchQuery(b, "SELECT c.pk, SUM(c.price) AS s FROM c GROUP BY c.pk", 100)
}

func BenchmarkParseJSON(b *testing.B) {
	doc := benchDocs(1)[0].doc
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseJSON(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseQuery(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse("SELECT c.id, c.name AS n FROM c JOIN t IN c.tags WHERE c.a > 1 AND STARTSWITH(c.name, 'x') ORDER BY c.id"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCartesianJoin evaluates a three-way JOIN over one document's
// 100-element array, 10⁶ combinations none of which passes WHERE: the
// cost of a step of the FROM/JOIN loops, and of the meter that counts
// them, with (budget, on the real clock) and without a page budget.
func BenchmarkCartesianJoin(b *testing.B) {
	src := cartesian(100)
	q, err := Parse("SELECT VALUE [a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE a + b + d = -1")
	if err != nil {
		b.Fatal(err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bench := range []struct {
		name string
		req  PageRequest
	}{
		{"unbounded", PageRequest{}},
		{"budget", PageRequest{Env: Env{Elapsed: clock.NewSystem().Elapsed}, Budget: time.Hour}},
	} {
		b.Run(bench.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := p.Page(context.Background(), src, bench.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
