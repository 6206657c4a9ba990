package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestCache pins the cache's bounds and order: entries and bytes of
// text, least recently used out first, no errors and no texts over an
// eighth of the byte bound kept.
func TestCache(t *testing.T) {
	text := func(i int) string { return fmt.Sprintf("SELECT * FROM c WHERE c.n = %d", i) } // 29 or 30 bytes
	type step struct {
		text  string
		fresh bool // parsed, not found in the cache
	}
	for _, tc := range []struct {
		name                 string
		maxEntries, maxBytes int
		steps                []step
		entries              int
	}{
		{"hit", 4, 1 << 10, []step{{text(1), true}, {text(1), false}, {text(2), true}, {text(1), false}}, 2},
		{"entries bound, least recently used out", 2, 1 << 10, []step{
			{text(1), true}, {text(2), true}, {text(1), false}, {text(3), true}, // 2 goes
			{text(1), false}, {text(3), false}, {text(2), true}}, 2},
		{"bytes bound", 100, 240, []step{
			{text(1), true}, {text(2), true}, {text(3), true}, {text(4), true}, {text(5), true}, {text(6), true}, {text(7), true}, {text(8), true},
			{text(9), true}, // 9 × 29 bytes: 1 goes
			{text(9), false}, {text(2), false}, {text(1), true}}, 8},
		{"too long to keep", 100, 200, []step{{text(10), true}, {text(10), true}}, 0},
		{"errors not kept", 4, 1 << 10, []step{{"SELECT FROM", true}, {"SELECT FROM", true}}, 0},
		{"no entries", 0, 1 << 10, []step{{text(1), true}, {text(1), true}}, 0},
	} {
		c := NewCache(tc.maxEntries, tc.maxBytes)
		var hits, misses int64
		for i, s := range tc.steps {
			q, err := c.Parse(s.text)
			want, wantErr := Parse(s.text)
			if (err == nil) != (wantErr == nil) || (err == nil && q.String() != want.String()) {
				t.Fatalf("%s: step %d: Parse(%q) = %v, %v; want %v, %v", tc.name, i, s.text, q, err, want, wantErr)
			}
			st := c.Stats()
			if s.fresh {
				misses++
			} else {
				hits++
			}
			if st.Hits != hits || st.Misses != misses {
				t.Fatalf("%s: step %d (%q): %d hits, %d misses; want %d, %d", tc.name, i, s.text, st.Hits, st.Misses, hits, misses)
			}
			if st.Entries > tc.maxEntries || st.Bytes > tc.maxBytes {
				t.Fatalf("%s: step %d: %d entries of %d bytes, over %d, %d", tc.name, i, st.Entries, st.Bytes, tc.maxEntries, tc.maxBytes)
			}
		}
		if st := c.Stats(); st.Entries != tc.entries {
			t.Errorf("%s: %d entries at the end, want %d", tc.name, st.Entries, tc.entries)
		}
	}
}

// TestCacheConcurrent runs the queries of one cache from many goroutines
// at once, each with parameters of its own, and checks every page
// against a run of a query parsed for that goroutine alone. Run it with
// -race: a plan that wrote to its shared syntax tree while it ran (a
// compiled pattern, a cached value) would be reported.
func TestCacheConcurrent(t *testing.T) {
	var src memSource
	for i := range 60 {
		src = append(src, memDoc{key: []byte(fmt.Sprintf("k%03d", i)),
			doc: []byte(fmt.Sprintf(`{"id":"i%d","n":%d,"g":"g%d","s":"s%dx","tags":["t%d","t%d"]}`, i, i, i%4, i, i%3, i%5))})
	}
	texts := []string{
		"SELECT * FROM c WHERE c.n >= @lo AND c.n < @lo + 10",
		"SELECT c.id, t FROM c JOIN t IN c.tags WHERE t = @tag",
		"SELECT VALUE c.id FROM c WHERE c.s LIKE 's1%' OR RegexMatch(c.s, @re) OR RegexMatch(c.id, '^i[0-2]$')",
		"SELECT TOP @lo c.id, c.n FROM c ORDER BY c.n DESC",
		"SELECT c.g, COUNT(1) AS n, MAX(c.n) AS m FROM c WHERE c.n > @lo GROUP BY c.g",
		"SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags WHERE t != @tag) FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = @tag)",
		"SELECT DISTINCT VALUE c.g FROM c WHERE c.n < @lo",
	}
	params := func(g int) []Param {
		return []Param{
			{Name: "@lo", Value: NumberValue(float64(g % 50))},
			{Name: "@tag", Value: StringValue(fmt.Sprintf("t%d", g%5))},
			{Name: "@re", Value: StringValue(fmt.Sprintf("^s%d", g%7))},
		}
	}
	const goroutines = 16
	want := make([][]string, goroutines*len(texts))
	for g := range goroutines {
		for i, text := range texts {
			want[g*len(texts)+i] = flatten(pages(t, text, src, 7, params(g)...))
		}
	}
	c := NewCache(len(texts), 1<<20)
	var wg sync.WaitGroup
	errs := make(chan string, goroutines*len(texts))
	for g := range goroutines {
		wg.Go(func() {
			for round := range 3 {
				for i := range texts {
					text := texts[(i+g+round)%len(texts)]
					got, err := cachedPages(c, text, src, 7, params(g))
					w := want[g*len(texts)+(i+g+round)%len(texts)]
					if err != nil || !slices.Equal(got, w) {
						errs <- fmt.Sprintf("goroutine %d: %s: %v\n got %s\nwant %s", g, text, err, strings.Join(got, " "), strings.Join(w, " "))
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if st := c.Stats(); st.Misses > goroutines*int64(len(texts)) || st.Hits == 0 {
		t.Errorf("cache stats %+v: every query should have been parsed about once", st)
	}
}

// cachedPages is pages for a query from c, reporting errors instead of
// failing (it runs off the test's goroutine).
func cachedPages(c *Cache, text string, src Source, pageSize int, params []Param) ([]string, error) {
	q, err := c.Parse(text)
	if err != nil {
		return nil, err
	}
	p, err := q.Bind(params)
	if err != nil {
		return nil, err
	}
	var rows []string
	var tok []byte
	for range 1000 {
		pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: pageSize, Continuation: tok, Env: Env{Now: evalNow}})
		if err != nil {
			return nil, err
		}
		for _, r := range pg.Rows() {
			rows = append(rows, string(r))
		}
		pg.Body.Release()
		if tok = pg.Next; tok == nil {
			return rows, nil
		}
	}
	return nil, fmt.Errorf("too many pages")
}
