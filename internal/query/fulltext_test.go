package query

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	if got := strings.Join(Analyze("The Foxes were RUNNING, and it jumped!"), " "); got != "fox were run jump" {
		t.Fatalf("Analyze: %q", got)
	}
}

// TestFullTextScore ranks a small corpus by BM25, checked against the
// formula worked by hand for one document.
func TestFullTextScore(t *testing.T) {
	src := docs(`{"id":"a","t":"alpha beta beta"}`, `{"id":"b","t":"alpha gamma"}`, `{"id":"c","t":"gamma gamma gamma"}`)
	q, err := Parse("SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'beta', 'alpha')")
	if err != nil {
		t.Fatal(err)
	}
	if got := q.String(); !strings.Contains(got, "ORDER BY RANK FullTextScore(") {
		t.Fatalf("canonical form %q", got)
	}
	p, _ := q.Bind(nil)
	qs := p.FullTextQueries()
	if len(qs) != 1 || qs[0].Path != "/t" || strings.Join(qs[0].Terms, ",") != "beta,alpha" {
		t.Fatalf("FullTextQueries: %+v", qs)
	}
	stats, err := FullTextStats(src, qs)
	if err != nil {
		t.Fatal(err)
	}
	st := stats["/t"]
	if st.Docs != 3 || st.Words != 8 || st.DocFreq["alpha"] != 2 || st.DocFreq["beta"] != 1 {
		t.Fatalf("stats: %+v", st)
	}
	// Document a: |D| = 3, avgdl = 8/3; beta tf 2, n 1; alpha tf 1, n 2.
	idf := func(n float64) float64 { return math.Log(1 + (3-n+0.5)/(n+0.5)) }
	norm := 1.2 * (0.25 + 0.75*3/(8.0/3))
	want := idf(1)*2*2.2/(2+norm) + idf(2)*1*2.2/(1+norm)
	if got := bm25(Analyze("alpha beta beta"), []string{"beta", "alpha"}, st); math.Abs(got-want) > 1e-12 {
		t.Fatalf("bm25 = %v, want %v", got, want)
	}
	pg, err := p.Page(context.Background(), src, PageRequest{Env: Env{TextStats: func(string) *TextStats { return st }}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range pg.Rows() {
		ids = append(ids, string(r))
	}
	if strings.Join(ids, ",") != `"a","b","c"` {
		t.Fatalf("ranked %v", ids)
	}
	for _, bad := range []string{
		"SELECT FullTextScore(c.t, 'a') FROM c",
		"SELECT * FROM c ORDER BY RANK c.t",
		"SELECT * FROM c ORDER BY RANK FullTextScore(c.t, 'a'), c.id",
		"SELECT RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b')) FROM c",
		"SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'))",
		"SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), c.x)",
		"SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b'), [1])",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// TestRRF fuses a full-text ranking with a vector ranking: each row's
// fused score is the sum of 1/(60 + its rank) over the two.
func TestRRF(t *testing.T) {
	src := docs(`{"id":"a","t":"alpha","v":[0,1]}`, `{"id":"b","t":"alpha alpha beta","v":[1,0]}`, `{"id":"c","t":"beta","v":[0.9,0.1]}`)
	q, err := Parse("SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'alpha'), VectorDistance(c.v, [1, 0]), [1, 2])")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := q.Bind(nil)
	stats, _ := FullTextStats(src, p.FullTextQueries())
	pg, err := p.Page(context.Background(), src, PageRequest{Env: Env{TextStats: func(path string) *TextStats { return stats[path] }}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range pg.Rows() {
		ids = append(ids, string(r))
	}
	// Full text: a (one alpha in one word) scores above b (two in
	// three), c has none. Vector (cosine to [1,0]): b, c, a. Weighted 1
	// and 2: b 1/62+2/61 = .04892, a 1/61+2/63 = .04814, c 1/63+2/62 =
	// .04813.
	if strings.Join(ids, ",") != `"b","a","c"` {
		t.Fatalf("fused %v", ids)
	}
}
