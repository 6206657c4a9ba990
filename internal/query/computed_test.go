package query

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestComputed runs testdata/computed: computed property definitions and
// the queries that read them.
//
//	computed      one definition a line, "name: query"; prints ok or the error
//	docs          the items, one JSON document a line
//	query [p=<s>] runs the input query (@p bound to the string s) in pages
//	              of two; prints one row a line, or the error
func TestComputed(t *testing.T) {
	var cs *Computed
	var src memSource
	datadriven.RunTest(t, "testdata/computed", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "computed":
			var defs []ComputedDef
			for _, line := range strings.Split(d.Input, "\n") {
				name, q, ok := strings.Cut(line, ":")
				if !ok {
					d.Fatalf(t, "want name: query, got %q", line)
				}
				defs = append(defs, ComputedDef{Name: name, Query: strings.TrimSpace(q)})
			}
			got, err := CompileComputed(defs)
			if err != nil {
				var ce *ComputedError
				if !errors.As(err, &ce) {
					d.Fatalf(t, "error of type %T: %v", err, err)
				}
				return "error: " + err.Error() + "\n"
			}
			cs = got
			return "ok\n"
		case "docs":
			src = docs(strings.Split(strings.TrimSpace(d.Input), "\n")...)
			return ""
		case "query":
			q, err := Parse(d.Input)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var params []Param
			if d.HasArg("p") {
				var s string
				d.ScanArgs(t, "p", &s)
				params = append(params, Param{Name: "@p", Value: StringValue(s)})
			}
			p, err := q.BindComputed(params, cs)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var out strings.Builder
			var tok []byte
			for range 100 {
				pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: 2, Continuation: tok, Env: Env{Now: evalNow}})
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				for _, r := range pg.Rows() {
					out.Write(r)
					out.WriteByte('\n')
				}
				if tok = pg.Next; tok == nil {
					return out.String()
				}
			}
			d.Fatalf(t, "too many pages")
		}
		d.Fatalf(t, "unknown command %q", d.Cmd)
		return ""
	})
}

// TestComputedReads checks what a plan decodes of each item: a query that
// reads no computed property is bound as if there were none, and one that
// does decodes the members its definitions read instead of the
// property's own name.
func TestComputedReads(t *testing.T) {
	cs, err := CompileComputed([]ComputedDef{
		{Name: "cp_lower", Query: "SELECT VALUE LOWER(c.name) FROM c"},
		{Name: "cp_sum", Query: "SELECT VALUE c.a + c.b FROM c"},
		{Name: "cp_doc", Query: "SELECT VALUE DocumentId(c) FROM c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query  string
		reads  bool
		fields string // "*" for the whole item
	}{
		{"SELECT * FROM c", false, ""},
		{"SELECT c.id FROM c WHERE c.x = 1", false, "id,x"},
		{"SELECT c.cp_lower FROM c", true, "name"},
		{"SELECT c.id FROM c WHERE c.cp_sum > 1 ORDER BY c.cp_lower", true, "id,a,b,name"},
		{"SELECT * FROM c WHERE c.cp_sum > 1", true, "a,b"},
		{"SELECT VALUE c.cp_doc FROM c", true, "*"},
		{"SELECT VALUE (SELECT VALUE c.cp_lower) FROM c", true, "name"},
		{"SELECT VALUE c[@p] FROM c", true, "*"},
		{"SELECT VALUE c FROM c WHERE c.cp_sum = 2", true, "*"},
		{"SELECT VALUE ch.cp_lower FROM c.children ch", false, "children"},
	} {
		q, err := Parse(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		p, err := q.BindComputed(nil, cs)
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Join(p.fields, ",")
		if p.wholeDoc {
			fields = "*"
		}
		if p.readsCps != tc.reads || fields != tc.fields {
			t.Errorf("%s: reads computed %v, decodes %q; want %v, %q", tc.query, p.readsCps, fields, tc.reads, tc.fields)
		}
	}
}

// TestComputedBudget: evaluating computed properties is work the page's
// meter counts, so a page over items whose computed properties are
// costly stops at its budget like any other.
func TestComputedBudget(t *testing.T) {
	defer func(n int) { checkEvery = n }(checkEvery)
	checkEvery = 4
	cs, err := CompileComputed([]ComputedDef{{Name: "cp", Query: "SELECT VALUE c.n IN (" + strings.Repeat("1,", 2000) + "2) FROM c"}})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := Parse("SELECT VALUE c.cp FROM c")
	p, err := q.BindComputed(nil, cs)
	if err != nil {
		t.Fatal(err)
	}
	var ticks time.Duration
	elapsed := func() time.Duration { ticks += time.Millisecond; return ticks }
	pg, err := p.Page(context.Background(), numberedDocs(50), PageRequest{MaxItemCount: 100, Env: Env{Now: evalNow, Elapsed: elapsed}, Budget: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if pg.Next == nil || len(pg.Rows()) >= 50 {
		t.Fatalf("a page of costly computed properties returned %d rows and no continuation within its budget", len(pg.Rows()))
	}
}

// FuzzComputed compiles arbitrary definitions and, when they compile,
// evaluates them over an item and through a query: no input panics.
func FuzzComputed(f *testing.F) {
	for _, s := range []string{
		"SELECT VALUE LOWER(c.name) FROM c",
		"SELECT VALUE c[CONCAT('a', c.k)] FROM root c",
		"SELECT VALUE {a: c.a, b: [c.b, c.a]} FROM c",
		"SELECT VALUE c FROM c",
		"SELECT VALUE (SELECT VALUE 1) FROM c",
		"SELECT VALUE c.x FROM c WHERE",
	} {
		f.Add(s, `{"id":"1","name":"Ada","a":1,"k":"a"}`)
	}
	f.Fuzz(func(t *testing.T, text, doc string) {
		cs, err := CompileComputed([]ComputedDef{{Name: "a", Query: text}, {Name: "b", Query: "SELECT VALUE 1 FROM c"}})
		if err != nil {
			return
		}
		if _, err := ParseJSON([]byte(doc)); err != nil {
			return
		}
		if _, err := cs.Values([]byte(doc)); err != nil {
			t.Fatalf("Values(%s) over %s: %v", text, doc, err)
		}
		q, err := Parse("SELECT c.a, c.b, c[c.k] AS d FROM c WHERE IS_DEFINED(c.a) OR true ORDER BY c.a")
		if err != nil {
			t.Fatal(err)
		}
		p, err := q.BindComputed(nil, cs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Page(context.Background(), docs(doc), PageRequest{Env: Env{Now: evalNow}}); err != nil && !strings.Contains(err.Error(), "stored document") {
			t.Fatalf("page over %s with %s: %v", doc, text, err)
		}
	})
}
