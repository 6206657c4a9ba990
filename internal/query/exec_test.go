package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// docs builds a source from JSON documents, keyed k000, k001, ...
func docs(jsons ...string) memSource {
	src := make(memSource, len(jsons))
	for i, j := range jsons {
		src[i] = memDoc{key: []byte(fmt.Sprintf("k%03d", i)), doc: []byte(j)}
	}
	return src
}

// recordingSource records the after argument of every Scan.
type recordingSource struct {
	memSource
	afters []string
}

func (r *recordingSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	if after == nil {
		r.afters = append(r.afters, "<nil>")
	} else {
		r.afters = append(r.afters, string(after))
	}
	return r.memSource.Scan(after, yield)
}

// pages runs a query page by page and returns each page's rows.
func pages(t *testing.T, text string, src Source, pageSize int, params ...Param) [][]string {
	t.Helper()
	q, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	p, err := q.Bind(params)
	if err != nil {
		t.Fatalf("Bind: %v", err)
	}
	var out [][]string
	var tok []byte
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatalf("%s: too many pages", text)
		}
		pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: pageSize, Continuation: tok, Env: Env{Now: evalNow}})
		if err != nil {
			t.Fatalf("%s: page %d: %v", text, i, err)
		}
		if len(pg.Rows()) > pageSize && pageSize > 0 {
			t.Fatalf("%s: page %d has %d rows, more than %d", text, i, len(pg.Rows()), pageSize)
		}
		rows := []string{}
		for _, r := range pg.Rows() {
			rows = append(rows, string(r))
		}
		out = append(out, rows)
		if pg.Next == nil {
			return out
		}
		tok = pg.Next
	}
}

func flatten(ps [][]string) []string {
	var all []string
	for _, p := range ps {
		all = append(all, p...)
	}
	return all
}

func numberedDocs(n int) memSource {
	js := make([]string, n)
	for i := range js {
		js[i] = fmt.Sprintf(`{"id":"%d","n":%d,"g":"g%d","tags":["a%d","b%d","c%d"]}`, i, i, i%3, i, i, i)
	}
	return docs(js...)
}

func TestStreamingPaging(t *testing.T) {
	src := numberedDocs(20)
	tests := []struct {
		name, query string
		pageSize    int
		wantPages   []int // rows per page
		wantFirst   string
		wantLast    string
	}{
		{"full pages give a continuation, last page empty", "SELECT VALUE c.id FROM c", 5, []int{5, 5, 5, 5, 0}, `"0"`, `"19"`},
		{"partial last page has no continuation", "SELECT VALUE c.id FROM c", 6, []int{6, 6, 6, 2}, `"0"`, `"19"`},
		{"filtered", "SELECT VALUE c.n FROM c WHERE c.n % 2 = 0", 4, []int{4, 4, 2}, "0", "18"},
		{"top across pages", "SELECT TOP 7 VALUE c.n FROM c", 3, []int{3, 3, 1}, "0", "6"},
		{"top equal to page multiple ends without empty page", "SELECT TOP 6 VALUE c.n FROM c", 3, []int{3, 3}, "0", "5"},
		{"offset limit across pages", "SELECT VALUE c.n FROM c OFFSET 3 LIMIT 5", 2, []int{2, 2, 1}, "3", "7"},
		{"offset beyond end", "SELECT VALUE c.n FROM c OFFSET 30 LIMIT 5", 2, []int{0}, "", ""},
		{"top zero", "SELECT TOP 0 * FROM c", 5, []int{0}, "", ""},
		{"join rows straddle pages", "SELECT VALUE t FROM c JOIN t IN c.tags", 4, []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0}, `"a0"`, `"c19"`},
		{"join straddle with odd page", "SELECT VALUE t FROM c JOIN t IN c.tags WHERE c.n < 3", 2, []int{2, 2, 2, 2, 1}, `"a0"`, `"c2"`},
		{"join with offset and top", "SELECT TOP 4 VALUE t FROM c JOIN t IN c.tags OFFSET 2 LIMIT 10", 3, []int{3, 1}, `"c0"`, `"c1"`},
		{"value undefined rows are not rows", "SELECT VALUE c.tags[1] FROM c WHERE c.n < 4 OR c.missing", 3, []int{3, 1}, `"b0"`, `"b3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := pages(t, tt.query, src, tt.pageSize)
			var sizes []int
			for _, p := range ps {
				sizes = append(sizes, len(p))
			}
			if !slices.Equal(sizes, tt.wantPages) {
				t.Errorf("%s: got page sizes %v, want %v", tt.query, sizes, tt.wantPages)
			}
			all := flatten(ps)
			want := runQuery(t, tt.query, src)
			if !slices.Equal(all, want) {
				t.Errorf("%s: paged rows differ from one big page:\n got %v\nwant %v", tt.query, all, want)
			}
			if len(all) > 0 && (all[0] != tt.wantFirst || all[len(all)-1] != tt.wantLast) {
				t.Errorf("%s: got first %s last %s, want %s, %s", tt.query, all[0], all[len(all)-1], tt.wantFirst, tt.wantLast)
			}
		})
	}
}

func TestStreamingResumesAfterKey(t *testing.T) {
	src := &recordingSource{memSource: numberedDocs(10)}
	ps := pages(t, "SELECT * FROM c", src, 4)
	if got := len(ps); got != 3 {
		t.Fatalf("got %d pages, want 3", got)
	}
	if want := []string{"<nil>", "k003", "k007"}; !slices.Equal(src.afters, want) {
		t.Errorf("Scan after keys: got %v, want %v", src.afters, want)
	}
	// A JOIN page that ends inside a document resumes after the previous
	// document and skips the rows already returned.
	src.afters = nil
	ps = pages(t, "SELECT VALUE t FROM c JOIN t IN c.tags", src, 4)
	if want := []string{"<nil>", "k000", "k001", "k003"}; !slices.Equal(src.afters[:4], want) {
		t.Errorf("JOIN Scan after keys: got %v, want prefix %v", src.afters, want)
	}
	if got := ps[1]; !slices.Equal(got, []string{`"b1"`, `"c1"`, `"a2"`, `"b2"`}) {
		t.Errorf("second JOIN page: got %v", got)
	}
}

func TestSelectStarRowsAreRawBytes(t *testing.T) {
	raw := "{ \"id\" : \"x\",\n \"n\": 1.50, \"s\": \"\\u00e9\" }"
	src := docs(raw, `{"id":"y","n":2}`)
	for _, q := range []string{"SELECT * FROM c", "SELECT * FROM c WHERE c.n = 1.5", "SELECT * FROM root r WHERE r.id = 'x'", "SELECT * FROM c ORDER BY c.n", "SELECT TOP 1 * FROM c"} {
		rows := runQuery(t, q, src)
		if len(rows) == 0 || rows[0] != raw {
			t.Errorf("%s: got %q, want the stored bytes %q", q, rows, raw)
		}
	}
	// Projections re-encode, keeping number literals.
	rows := runQuery(t, "SELECT VALUE c FROM c WHERE c.id = 'x'", src)
	if want := `{"id":"x","n":1.50,"s":"é"}`; len(rows) != 1 || rows[0] != want {
		t.Errorf("SELECT VALUE c: got %v, want %s", rows, want)
	}
}

func TestOrderByPaging(t *testing.T) {
	src := docs(
		`{"id":"a","x":2,"y":"b"}`,
		`{"id":"b","x":1,"y":"z"}`,
		`{"id":"c","x":2,"y":"a"}`,
		`{"id":"d","y":"q"}`,
		`{"id":"e","x":null,"y":"q"}`,
		`{"id":"f","x":"s","y":"q"}`,
		`{"id":"g","x":1,"y":"z"}`,
		`{"id":"h","x":[1],"y":"q"}`,
		`{"id":"i","x":true,"y":"q"}`,
		`{"id":"j","x":{"a":1},"y":"q"}`,
		`{"id":"k","x":false,"y":"q"}`,
		`{"id":"l","x":2,"y":"b"}`,
	)
	tests := []struct {
		name, query string
		want        string
	}{
		{"type order ascending, undefined first, ties by key", "SELECT VALUE c.id FROM c ORDER BY c.x", "d e k i b g a c l f h j"},
		{"descending, ties by key descending", "SELECT VALUE c.id FROM c ORDER BY c.x DESC", "j h f l c a g b i k e d"},
		{"two keys", "SELECT VALUE c.id FROM c ORDER BY c.x, c.y DESC", "d e k i b g a l c f h j"},
		{"two keys mixed", "SELECT VALUE c.id FROM c ORDER BY c.y, c.x DESC", "c a l j h f i k e d b g"},
		{"string keys", "SELECT VALUE c.id FROM c ORDER BY c.id DESC", "l k j i h g f e d c b a"},
		{"with where", "SELECT VALUE c.id FROM c WHERE IS_NUMBER(c.x) ORDER BY c.x DESC, c.id", "a c l b g"},
		{"top", "SELECT TOP 3 VALUE c.id FROM c ORDER BY c.id DESC", "l k j"},
		{"offset limit", "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 4 LIMIT 5", "e f g h i"},
		{"offset past end", "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 40 LIMIT 5", ""},
		{"select list", "SELECT c.id FROM c WHERE c.x = 1 ORDER BY c.id", `{"id":"b"} {"id":"g"}`},
		{"order by two paths descending", "SELECT VALUE c.id FROM c WHERE IS_NUMBER(c.x) ORDER BY c[\"x\"] DESC, c.id DESC", "l c a g b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, 5, 100} {
				ps := pages(t, tt.query, src, size)
				got := strings.ReplaceAll(strings.Join(flatten(ps), " "), `"`, "")
				want := strings.ReplaceAll(tt.want, `"`, "")
				if got != want {
					t.Errorf("%s (page size %d):\n got %s\nwant %s", tt.query, size, got, want)
				}
				// A continuation only when rows remain: no empty last page
				// unless the result is empty.
				if last := ps[len(ps)-1]; len(last) == 0 && len(ps) > 1 {
					t.Errorf("%s (page size %d): empty last page", tt.query, size)
				}
			}
		})
	}
}

func TestOrderByPageCounts(t *testing.T) {
	src := numberedDocs(10)
	// The Go SDK asserts exactly 2 pages of 5 for 10 items.
	for _, q := range []string{"SELECT * FROM c ORDER BY c.id", "SELECT VALUE c.id FROM c ORDER BY c.id"} {
		ps := pages(t, q, src, 5)
		if len(ps) != 2 || len(ps[0]) != 5 || len(ps[1]) != 5 {
			t.Errorf("%s: got pages %v, want two pages of 5", q, ps)
		}
	}
}

func TestOrderByJoinAndLargeOffset(t *testing.T) {
	saved := offsetChunk
	offsetChunk = 4
	defer func() { offsetChunk = saved }()
	src := numberedDocs(12)
	q := "SELECT VALUE t FROM c JOIN t IN c.tags ORDER BY c.n DESC OFFSET 5 LIMIT 20"
	ref := runQuery(t, "SELECT VALUE t FROM c JOIN t IN c.tags ORDER BY c.n DESC", src)[5:25]
	for _, size := range []int{1, 3, 7, 50} {
		got := flatten(pages(t, q, src, size))
		if !slices.Equal(got, ref) {
			t.Errorf("page size %d:\n got %v\nwant %v", size, got, ref)
		}
	}
	if got := ref[0]; got != `"c10"` {
		t.Errorf("row 5: got %s, want \"c10\" (rows of one document keep their order)", got)
	}
}

func TestAggregates(t *testing.T) {
	src := docs(
		`{"id":"1","n":1,"s":"b","g":"x","m":1}`,
		`{"id":"2","n":2,"s":"a","g":"y","m":"a"}`,
		`{"id":"3","n":3,"g":"x","m":true}`,
		`{"id":"4","s":"c","g":"y","m":[1]}`,
	)
	empty := docs()
	tests := []struct {
		name, query string
		src         Source
		want        string
	}{
		{"count value", "SELECT VALUE COUNT(1) FROM c", src, "[4]"},
		{"count named", "SELECT COUNT(1) AS n FROM c", src, `[{"n":4}]`},
		{"count unnamed", "SELECT COUNT(1) FROM c", src, `[{"$1":4}]`},
		{"two unnamed", "SELECT COUNT(1), SUM(c.n) FROM c", src, `[{"$1":4,"$2":6}]`},
		{"count expr counts defined", "SELECT VALUE COUNT(c.n) FROM c", src, "[3]"},
		{"sum", "SELECT VALUE SUM(c.n) FROM c", src, "[6]"},
		{"sum with non-number is undefined", "SELECT VALUE SUM(c.m) FROM c", src, "[]"},
		{"avg", "SELECT VALUE AVG(c.n) FROM c", src, "[2]"},
		{"avg with string is undefined", "SELECT AVG(c.s) AS a FROM c", src, "[{}]"},
		{"min max numbers", "SELECT MIN(c.n) AS lo, MAX(c.n) AS hi FROM c", src, `[{"lo":1,"hi":3}]`},
		{"min max strings", "SELECT MIN(c.s) AS lo, MAX(c.s) AS hi FROM c", src, `[{"lo":"a","hi":"c"}]`},
		{"min mixed types by type order", "SELECT VALUE MIN(c.m) FROM c WHERE NOT IS_ARRAY(c.m)", src, "[true]"},
		{"max mixed types by type order", "SELECT VALUE MAX(c.m) FROM c WHERE NOT IS_ARRAY(c.m)", src, `["a"]`},
		{"min with array is undefined", "SELECT VALUE MIN(c.m) FROM c", src, "[]"},
		{"countif", "SELECT VALUE COUNTIF(c.n > 1) FROM c", src, "[2]"},
		{"where", "SELECT VALUE COUNT(1) FROM c WHERE c.g = 'x'", src, "[2]"},
		{"expression of aggregates", "SELECT VALUE {total: SUM(c.n), avg: SUM(c.n) / COUNT(c.n), one: 1} FROM c", src, `[{"total":6,"avg":2,"one":1}]`},
		{"count zero rows", "SELECT VALUE COUNT(1) FROM c", empty, "[0]"},
		{"sum zero rows", "SELECT VALUE SUM(c.n) FROM c", empty, "[0]"},
		{"avg zero rows", "SELECT VALUE AVG(c.n) FROM c", empty, "[]"},
		{"min zero rows named", "SELECT MIN(c.n) AS m FROM c", empty, "[{}]"},
		{"count over join", "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags", numberedDocs(5), "[15]"},
		{"group by", "SELECT c.g, COUNT(1) AS n, SUM(c.n) AS s FROM c GROUP BY c.g", src, `[{"g":"x","n":2,"s":4},{"g":"y","n":2,"s":2}]`},
		{"group by value", "SELECT VALUE c.g FROM c GROUP BY c.g", src, `["x","y"]`},
		{"group by expression", "SELECT UPPER(c.g) AS G, MAX(c.n) AS m FROM c GROUP BY UPPER(c.g)", src, `[{"G":"X","m":3},{"G":"Y","m":2}]`},
		{"group by undefined group", "SELECT c.s, COUNT(1) AS n FROM c GROUP BY c.s", src, `[{"s":"b","n":1},{"s":"a","n":1},{"n":1},{"s":"c","n":1}]`},
		{"group by two keys", "SELECT c.g, IS_DEFINED(c.n) AS hasN, COUNT(1) AS n FROM c GROUP BY c.g, IS_DEFINED(c.n)", src, `[{"g":"x","hasN":true,"n":2},{"g":"y","hasN":true,"n":1},{"g":"y","hasN":false,"n":1}]`},
		{"group by with top", "SELECT TOP 1 c.g FROM c GROUP BY c.g", src, `[{"g":"x"}]`},
		{"group by zero rows", "SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g", empty, `[]`},
		{"distinct value", "SELECT DISTINCT VALUE c.g FROM c", src, `["x","y"]`},
		{"distinct objects", "SELECT DISTINCT c.g FROM c", src, `[{"g":"x"},{"g":"y"}]`},
		{"distinct ordered", "SELECT DISTINCT VALUE c.g FROM c ORDER BY c.g DESC", src, `["y","x"]`},
		{"distinct top", "SELECT DISTINCT TOP 1 VALUE c.g FROM c", src, `["x"]`},
		{"distinct star", "SELECT DISTINCT * FROM c WHERE c.id = '1'", src, `[{"id":"1","n":1,"s":"b","g":"x","m":1}]`},
		{"no from", "SELECT VALUE 1 + 1", empty, "[2]"},
		{"no from object", "SELECT 1 AS a, 'x'", empty, `[{"a":1,"$1":"x"}]`},
		{"no from where false", "SELECT VALUE 1 WHERE false", empty, "[]"},
		{"no from aggregate", "SELECT VALUE COUNT(1)", empty, "[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := "[" + strings.Join(runQuery(t, tt.query, tt.src), ",") + "]"
			if got != tt.want {
				t.Errorf("%s: got %s, want %s", tt.query, got, tt.want)
			}
		})
	}
}

func TestMaterializedPaging(t *testing.T) {
	src := numberedDocs(30)
	for _, q := range []string{
		"SELECT DISTINCT VALUE c.n % 7 FROM c",
		"SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g",
		"SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags WHERE c.n < 5",
	} {
		want := runQuery(t, q, src)
		for _, size := range []int{1, 2, 4} {
			ps := pages(t, q, src, size)
			if got := flatten(ps); !slices.Equal(got, want) {
				t.Errorf("%s (page size %d): got %v, want %v", q, size, got, want)
			}
			if last := ps[len(ps)-1]; len(last) == 0 {
				t.Errorf("%s (page size %d): empty last page", q, size)
			}
		}
	}
}

func TestProjection(t *testing.T) {
	src := docs(`{"id":"1","a":{"b":{"x":1}},"arr":[{"v":1},{"v":2}],"name":"n1","x y":5}`)
	checkQueries(t, src, []queryCase{
		{"SELECT c.id, c.a.b.x FROM c", `{"id":"1","x":1}`},
		{"SELECT c.missing FROM c", `{}`},
		{"SELECT c.id, c.missing, c.name FROM c", `{"id":"1","name":"n1"}`},
		{"SELECT c.id, 1, c.arr[0], 'two' FROM c", `{"id":"1","$1":1,"$2":{"v":1},"$3":"two"}`},
		{`SELECT c["x y"] FROM c`, `{"x y":5}`},
		{"SELECT c.a.b FROM c", `{"b":{"x":1}}`},
		{"SELECT c.id AS ident, c.name n FROM c", `{"ident":"1","n":"n1"}`},
		{"SELECT c FROM c", `{"c":{"id":"1","a":{"b":{"x":1}},"arr":[{"v":1},{"v":2}],"name":"n1","x y":5}}`},
		{"SELECT * FROM c.a.b", `{"x":1}`},
		{"SELECT b.x FROM c.a.b", `{"x":1}`},
		{"SELECT * FROM x IN c.arr", `{"v":1} {"v":2}`},
		{"SELECT x.v FROM x IN c.arr", `{"v":1} {"v":2}`},
		{"SELECT VALUE c.missing FROM c", ``},
		{"SELECT c.id, x.v FROM c JOIN x IN c.arr WHERE x.v > 1", `{"id":"1","v":2}`},
		{"SELECT * FROM c.missing", ``},
		{"SELECT {id: c.id, vs: ARRAY(SELECT VALUE x.v FROM x IN c.arr)} AS o FROM c", `{"o":{"id":"1","vs":[1,2]}}`},
	})
}

func TestBadContinuation(t *testing.T) {
	src := numberedDocs(10)
	first := func(q string, params ...Param) (*Plan, []byte) {
		t.Helper()
		qq, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		p, err := qq.Bind(params)
		if err != nil {
			t.Fatal(err)
		}
		pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: 3})
		if err != nil || pg.Next == nil {
			t.Fatalf("first page: %v, next %v", err, pg.Next)
		}
		return p, pg.Next
	}
	p, tok := first("SELECT * FROM c WHERE c.n >= @lo", Param{"@lo", NumberValue(1)})
	other, _ := first("SELECT * FROM c WHERE c.n >= @lo", Param{"@lo", NumberValue(2)})
	otherQuery, _ := first("SELECT * FROM c")
	orderBy, obTok := first("SELECT * FROM c ORDER BY c.n")
	flipped := slices.Clone(tok)
	flipped[len(flipped)/2] ^= 1
	tests := []struct {
		name string
		plan *Plan
		tok  []byte
	}{
		{"garbage", p, []byte("hello, world")},
		{"empty", p, []byte{}},
		{"truncated", p, tok[:len(tok)-1]},
		{"bit flipped", p, flipped},
		{"other parameters", other, tok},
		{"other query", otherQuery, tok},
		{"other mode", orderBy, tok},
		{"stream token to order by", p, obTok},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.plan.Page(context.Background(), src, PageRequest{MaxItemCount: 3, Continuation: tt.tok})
			if !errors.Is(err, ErrBadContinuation) {
				t.Errorf("got %v, want ErrBadContinuation", err)
			}
		})
	}
	// The right plan accepts its own token.
	if _, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: 3, Continuation: tok}); err != nil {
		t.Errorf("own token: %v", err)
	}
	// An ORDER BY token is bound to the query without its WHERE, which
	// an SDK replaces with a filter on the last row's sort values when it
	// resumes (TestOrderByTokenUnderSDKFilter), but not to another
	// ordering, projection or parameter value.
	for _, q := range []string{
		"SELECT * FROM c ORDER BY c.n DESC",
		"SELECT * FROM c ORDER BY c.g",
		"SELECT c.n FROM c ORDER BY c.n",
		"SELECT TOP 5 * FROM c ORDER BY c.n",
	} {
		other, _ := first(q)
		if _, err := other.Page(context.Background(), src, PageRequest{MaxItemCount: 3, Continuation: obTok}); !errors.Is(err, ErrBadContinuation) {
			t.Errorf("%s with the token of SELECT * FROM c ORDER BY c.n: got %v, want ErrBadContinuation", q, err)
		}
	}
}

// TestOrderByTokenUnderSDKFilter resumes an ORDER BY query the way the
// SDKs resume one across partitions: the rewritten query again, with a
// filter on the last row's sort value where the first page had true,
// and the token of the page before. The rows are those the unchanged
// query returns.
func TestOrderByTokenUnderSDKFilter(t *testing.T) {
	src := numberedDocs(10)
	const rewritten = `SELECT c._rid, [{"item": c.n}] AS orderByItems, c.id AS payload FROM c WHERE (c.g != "g1") AND (%s) ORDER BY c.n DESC`
	page := func(filter string, max int, tok []byte) (rows []string, next []byte) {
		t.Helper()
		q, err := Parse(fmt.Sprintf(rewritten, filter))
		if err != nil {
			t.Fatal(err)
		}
		p, err := q.Bind(nil)
		if err != nil {
			t.Fatal(err)
		}
		pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: max, Continuation: tok})
		if err != nil {
			t.Fatalf("filter %s: %v", filter, err)
		}
		for _, r := range pg.Rows() {
			rows = append(rows, string(r))
		}
		return rows, pg.Next
	}
	all, _ := page("true", -1, nil)
	got, tok := page("true", 2, nil)
	for tok != nil {
		// The filter an SDK sends the range it stopped in: its last
		// row's sort value, itself included (the token skips it).
		var last struct{ OrderByItems []struct{ Item float64 } }
		if err := json.Unmarshal([]byte(got[len(got)-1]), &last); err != nil {
			t.Fatal(err)
		}
		var rows []string
		rows, tok = page(fmt.Sprintf("c.n <= %v", last.OrderByItems[0].Item), 2, tok)
		got = append(got, rows...)
	}
	if !slices.Equal(got, all) {
		t.Errorf("resumed under the filter:\n got %v\nwant %v", got, all)
	}
}

func TestPageSizesAndStats(t *testing.T) {
	src := numberedDocs(1500)
	q, _ := Parse("SELECT VALUE c.id FROM c WHERE c.n < 1200")
	p, _ := q.Bind(nil)
	tick := time.Duration(0)
	env := Env{Elapsed: func() time.Duration { tick += time.Millisecond; return tick }}
	for _, tt := range []struct{ max, want int }{{0, 100}, {-5, 100}, {-1, 1200}, {7, 7}, {5000, 1200}} {
		pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: tt.max, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Rows()) != tt.want {
			t.Errorf("MaxItemCount %d: got %d rows, want %d", tt.max, len(pg.Rows()), tt.want)
		}
		if pg.Stats.OutputDocumentCount != int64(len(pg.Rows())) || pg.Stats.RetrievedDocumentCount < int64(len(pg.Rows())) {
			t.Errorf("MaxItemCount %d: stats %+v", tt.max, pg.Stats)
		}
		if pg.Stats.TotalExecutionTime <= 0 {
			t.Errorf("MaxItemCount %d: no execution time with Env.Elapsed set", tt.max)
		}
	}
	pg, _ := p.Page(context.Background(), src, PageRequest{MaxItemCount: 2})
	if got, want := pg.Stats.OutputDocumentSize, int64(len(`"0"`)+len(`"1"`)); got != want {
		t.Errorf("OutputDocumentSize: got %d, want %d", got, want)
	}
	if got, want := pg.Stats.RetrievedDocumentSize, int64(len(src[0].doc)+len(src[1].doc)); got != want {
		t.Errorf("RetrievedDocumentSize: got %d, want %d", got, want)
	}
}

// TestUnboundedPages checks the page sizes of MaxItemCount -1: a
// streaming query fills a page up to UnboundedPageBytes of output, a
// sorting one up to UnboundedMaxItemCount rows.
func TestUnboundedPages(t *testing.T) {
	pad := strings.Repeat("x", 100<<10)
	js := make([]string, 1500)
	for i := range js {
		js[i] = fmt.Sprintf(`{"id":"%d","n":%d}`, i, i)
		if i < 100 {
			js[i] = fmt.Sprintf(`{"id":"%d","n":%d,"pad":"%s"}`, i, i, pad)
		}
	}
	src := docs(js...)
	for _, tc := range []struct {
		query string
		want  []int // rows per page
	}{
		// 41 documents of 100 KB make the first 4 MB; the rest fit.
		{"SELECT * FROM c", []int{41, 41, 1418}},
		{"SELECT VALUE c.n FROM c ORDER BY c.n", []int{1000, 500}},
	} {
		q, _ := Parse(tc.query)
		p, _ := q.Bind(nil)
		var got []int
		var tok []byte
		for {
			pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: -1, Continuation: tok})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, len(pg.Rows()))
			if tok = pg.Next; tok == nil {
				break
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: pages of %v rows, want %v", tc.query, got, tc.want)
		}
	}
}

type failingSource struct{ err error }

func (f failingSource) Scan([]byte, func(key, doc []byte) bool) error { return f.err }

func TestSourceErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, q := range []string{"SELECT * FROM c", "SELECT * FROM c ORDER BY c.id", "SELECT VALUE COUNT(c.id) FROM c", "SELECT VALUE c FROM c"} {
		qq, _ := Parse(q)
		p, _ := qq.Bind(nil)
		if _, err := p.Page(context.Background(), failingSource{boom}, PageRequest{}); !errors.Is(err, boom) {
			t.Errorf("%s: got %v, want the source's error", q, err)
		}
		// A corrupt document is an error when the query reads the broken
		// part (SELECT * without WHERE passes documents through untouched).
		if _, err := p.Page(context.Background(), docs(`{"id":`), PageRequest{}); err == nil && q != "SELECT * FROM c" {
			t.Errorf("%s: corrupt document: got no error", q)
		}
	}
}

func TestStreamingDocumentDeletedBetweenPages(t *testing.T) {
	src := numberedDocs(6)
	q, _ := Parse("SELECT VALUE t FROM c JOIN t IN c.tags")
	p, _ := q.Bind(nil)
	pg, _ := p.Page(context.Background(), src, PageRequest{MaxItemCount: 4})
	// Page one ended inside k001; delete it before asking for page two.
	smaller := append(memSource{}, src[0])
	smaller = append(smaller, src[2:]...)
	pg2, err := p.Page(context.Background(), smaller, PageRequest{MaxItemCount: 4, Continuation: pg.Next})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(pg2.Rows()[0]); got != `"a2"` {
		t.Errorf("after deleting the straddled document: got %s first, want \"a2\"", got)
	}
	_ = bytes.Equal
}

// TestPagingMatrix checks, for many queries and page sizes, that paging
// returns exactly the rows of a single unbounded run, in order.
func TestPagingMatrix(t *testing.T) {
	js := make([]string, 17)
	for i := range js {
		tags := make([]string, i%4)
		for j := range tags {
			tags[j] = fmt.Sprintf(`"t%d_%d"`, i, j)
		}
		js[i] = fmt.Sprintf(`{"id":"%02d","n":%d,"m":%d,"tags":[%s]}`, i, i, (i*7)%5, strings.Join(tags, ","))
	}
	src := docs(js...)
	queries := []string{
		"SELECT * FROM c",
		"SELECT VALUE t FROM c JOIN t IN c.tags",
		"SELECT VALUE t FROM c JOIN t IN c.tags WHERE t != 't3_1'",
		"SELECT c.id, t FROM c JOIN t IN c.tags OFFSET 3 LIMIT 9",
		"SELECT TOP 11 VALUE [c.id, t] FROM c JOIN t IN c.tags",
		"SELECT VALUE c.id FROM c WHERE c.m > 1 OFFSET 2 LIMIT 100",
		"SELECT VALUE c.id FROM c ORDER BY c.m, c.id DESC",
		"SELECT VALUE [c.m, t] FROM c JOIN t IN c.tags ORDER BY c.m DESC",
		"SELECT TOP 9 VALUE c.id FROM c ORDER BY c.m OFFSET 1 LIMIT 20",
		"SELECT VALUE c.id FROM c ORDER BY c.m OFFSET 5 LIMIT 4",
		"SELECT DISTINCT VALUE c.m FROM c",
		"SELECT c.m, COUNT(1) AS n FROM c GROUP BY c.m",
	}
	for _, q := range queries {
		want := runQuery(t, q, src)
		for size := 1; size <= 8; size++ {
			if got := flatten(pages(t, q, src, size)); !slices.Equal(got, want) {
				t.Errorf("%s (page size %d):\n got %v\nwant %v", q, size, got, want)
			}
		}
	}
}

// TestMakeListAndSet runs MAKELIST and MAKESET, alone, with GROUP BY and
// in a query plan.
func TestMakeListAndSet(t *testing.T) {
	src := docs(
		`{"id":"1","g":"a","h":1}`,
		`{"id":"2","g":"b","h":1}`,
		`{"id":"3","g":"a","h":2}`,
		`{"id":"4","h":2}`,
		`{"id":"5","g":"a","h":{"x":1}}`,
		`{"id":"6","g":"c","h":{"x":1}}`,
	)
	checkQueries(t, src, []queryCase{
		{"SELECT VALUE MAKELIST(c.g) FROM c", `["a","b","a","a","c"]`},
		{"SELECT VALUE MAKESET(c.g) FROM c", `["a","b","c"]`},
		{"SELECT VALUE MakeSet(c.h) FROM c", `[1,2,{"x":1}]`},
		{"SELECT MAKESET(c.h) AS hs FROM c WHERE c.g = 'a'", `{"hs":[1,2,{"x":1}]}`},
		{"SELECT VALUE MAKELIST(c.g) FROM c WHERE c.h = 9", `[]`},
		{"SELECT c.h, MAKELIST(c.id) AS ids FROM c WHERE IS_NUMBER(c.h) GROUP BY c.h", `{"h":1,"ids":["1","2"]} {"h":2,"ids":["3","4"]}`},
	})
}

// TestInSubquery: "x IN (SELECT …)" iterates the elements of the
// subquery's array rows, "(SELECT …) x" the rows themselves.
func TestInSubquery(t *testing.T) {
	src := docs(`{"id":"1","arr":[1,2,3],"tags":[{"n":"a"},{"n":"b"}]}`)
	checkQueries(t, src, []queryCase{
		{"SELECT VALUE t FROM c JOIN (SELECT VALUE x FROM x IN c.arr) t", "1 2 3"},
		{"SELECT VALUE t FROM c JOIN t IN (SELECT VALUE x FROM x IN c.arr)", ""},
		{"SELECT VALUE t FROM c JOIN t IN (SELECT VALUE ARRAY(SELECT VALUE x FROM x IN c.arr WHERE x > 1))", "2 3"},
		{"SELECT VALUE t FROM c JOIN t IN (SELECT VALUE [x, x * 10] FROM x IN c.arr)", "1 10 2 20 3 30"},
		{"SELECT VALUE n.t.n FROM c JOIN n IN (SELECT VALUE ARRAY(SELECT t FROM t IN c.tags WHERE t.n != 'a'))", `"b"`},
		{"SELECT VALUE t FROM c JOIN t IN c.arr", "1 2 3"},
	})
}

// TestAggregateOrderBy: an ORDER BY in a query that aggregates without
// GROUP BY is taken, as the service takes it, and orders its one row;
// the query plan merges it as the aggregate it is.
func TestAggregateOrderBy(t *testing.T) {
	src := docs(`{"id":"1","n":1,"s":"b"}`, `{"id":"2","n":3}`, `{"id":"3","n":5,"s":"a"}`)
	if got := strings.Join(runQuery(t, "SELECT VALUE AVG(c.n + 1) FROM c WHERE c.n > 1 ORDER BY c.s", src), " "); got != "5" {
		t.Errorf("AVG with ORDER BY: %s", got)
	}
	q, _ := Parse("SELECT VALUE COUNT(1) FROM c ORDER BY c.s DESC")
	p, _ := q.Bind(nil)
	if qi := p.QueryInfo(); len(qi.OrderBy) != 0 || len(qi.Aggregates) != 1 || !strings.HasPrefix(qi.RewrittenQuery, "SELECT VALUE [{") {
		t.Errorf("plan: %+v", qi)
	}
	if _, err := Parse("SELECT c.s, COUNT(1) AS n FROM c GROUP BY c.s ORDER BY c.s"); err == nil {
		t.Error("ORDER BY with GROUP BY was taken")
	}
}

// TestFirstLastSubquery: FIRST(SELECT …) and LAST(SELECT …) are the
// subquery's first and last rows, undefined without one.
func TestFirstLastSubquery(t *testing.T) {
	src := docs(`{"id":"1","prices":[10,12,9,15]}`, `{"id":"2","prices":[]}`)
	checkQueries(t, src, []queryCase{
		{"SELECT VALUE [FIRST(SELECT VALUE p FROM p IN c.prices), LAST(SELECT VALUE p FROM p IN c.prices)] FROM c WHERE c.id = '1'", "[10,15]"},
		{"SELECT VALUE c.id FROM c WHERE LAST(SELECT VALUE p FROM p IN c.prices) > first(SELECT VALUE p FROM p IN c.prices)", `"1"`},
		{"SELECT VALUE {f: FIRST(SELECT VALUE p FROM p IN c.prices)} FROM c WHERE c.id = '2'", "{}"},
		{"SELECT VALUE LAST(SELECT VALUE p FROM p IN c.prices WHERE p < 12) FROM c WHERE c.id = '1'", "9"},
	})
	checkString(t, "SELECT VALUE LAST(SELECT VALUE p FROM p IN c.prices) FROM c", "SELECT VALUE LAST(SELECT VALUE p FROM p IN c.prices) FROM c")
}

// queryCase is a query and its rows, as JSON joined by spaces.
type queryCase struct{ query, want string }

// checkQueries runs each case's query over src and compares its rows.
func checkQueries(t *testing.T, src Source, cases []queryCase) {
	t.Helper()
	for _, tc := range cases {
		if got := strings.Join(runQuery(t, tc.query, src), " "); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.query, got, tc.want)
		}
	}
}

// checkString checks the canonical form of a query that parses.
func checkString(t *testing.T, text, want string) {
	t.Helper()
	q, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := q.String(); got != want {
		t.Errorf("String of %s: got %s, want %s", text, got, want)
	}
}
