package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// stepClock is a monotonic clock that moves by a millisecond each time
// it is read: a page's budget of n milliseconds runs out at its n-th
// check, whatever the machine's speed, and no test waits for real time.
type stepClock struct{ reads atomic.Int64 }

func (c *stepClock) Elapsed() time.Duration {
	return time.Duration(c.reads.Add(1)) * time.Millisecond
}

// withCheckEvery sets the meter's check interval for one test.
func withCheckEvery(t *testing.T, n int) {
	t.Helper()
	old := checkEvery
	checkEvery = n
	t.Cleanup(func() { checkEvery = old })
}

// orderedDocs is an OrderedSource over documents already in the order of
// an ORDER BY c.n: each document is a run of its own, sorted. It skips
// the runs before after's, as an index does.
type orderedDocs struct{ memSource }

func (s orderedDocs) ScanOrdered(after []byte, yield func(run []byte, sorted bool, key, doc []byte) bool) error {
	for _, d := range s.memSource {
		if after != nil && bytes.Compare(d.key, after) < 0 {
			continue
		}
		if !yield(d.key, true, d.key, d.doc) {
			return nil
		}
	}
	return nil
}

func (orderedDocs) Descending() bool { return false }

// TestBudget runs testdata/budget: queries paged under a budget on a
// clock that moves by itself. Commands:
//
//	docs                      the input lines are the documents
//	run budget=N [page-size=N] [check-every=N] [ordered]
//	                          the input is the query; prints each page's
//	                          rows (or the error that ended it), and
//	                          checks that the rows of all pages are those
//	                          of one unbudgeted run, in order
func TestBudget(t *testing.T) {
	var src memSource
	datadriven.RunTest(t, "testdata/budget", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "docs":
			var js []string
			for line := range strings.Lines(d.Input) {
				if line = strings.TrimSpace(line); line != "" {
					js = append(js, line)
				}
			}
			src = docs(js...)
			return ""
		case "run":
			return runBudgeted(t, d, src)
		}
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		return ""
	})
}

func runBudgeted(t *testing.T, d *datadriven.TestData, docs memSource) string {
	var budget, pageSize int
	d.ScanArgs(t, "budget", &budget)
	pageSize = DefaultMaxItemCount
	if d.HasArg("page-size") {
		d.ScanArgs(t, "page-size", &pageSize)
	}
	every := 4
	if d.HasArg("check-every") {
		d.ScanArgs(t, "check-every", &every)
	}
	withCheckEvery(t, every)
	var src Source = docs
	if d.HasArg("ordered") {
		src = orderedDocs{docs}
	}
	q, err := Parse(strings.TrimSpace(d.Input))
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	want := allRows(t, p, src)

	var out strings.Builder
	var got []string
	var tok []byte
	for i := 1; ; i++ {
		if i > 1000 {
			t.Fatalf("%s: more than 1000 pages", d.Pos)
		}
		clk := &stepClock{}
		pg, err := p.Page(context.Background(), src, PageRequest{
			MaxItemCount: pageSize, Continuation: tok,
			Env: Env{Now: evalNow, Elapsed: clk.Elapsed}, Budget: time.Duration(budget) * time.Millisecond,
		})
		if err != nil {
			var be *BudgetError
			if !errors.As(err, &be) {
				t.Fatalf("%s: page %d: %v", d.Pos, i, err)
			}
			fmt.Fprintf(&out, "page %d: %v\n", i, err)
			return out.String()
		}
		rows := make([]string, len(pg.Rows()))
		for j, r := range pg.Rows() {
			rows[j] = string(r)
		}
		got = append(got, rows...)
		fmt.Fprintf(&out, "page %d: %s", i, strings.Join(rows, " "))
		if pg.Next == nil {
			out.WriteString("\n")
			break
		}
		out.WriteString(" …\n")
		tok = pg.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: the pages' rows\n%v\ndiffer from one unbudgeted run's\n%v", d.Pos, got, want)
	}
	return out.String()
}

// allRows is the whole result of p in one unbudgeted run.
func allRows(t *testing.T, p *Plan, src Source) []string {
	t.Helper()
	var rows []string
	var tok []byte
	for {
		pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: 1000, Continuation: tok, Env: Env{Now: evalNow}})
		if err != nil {
			t.Fatalf("unbudgeted run: %v", err)
		}
		for _, r := range pg.Rows() {
			rows = append(rows, string(r))
		}
		if pg.Next == nil {
			return rows
		}
		tok = pg.Next
	}
}

// cartesian is a document whose arr holds n numbers: a three-way JOIN
// over it is n³ combinations in one document.
func cartesian(n int) memSource {
	var b bytes.Buffer
	b.WriteString(`{"id":"big","arr":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString("]}")
	return docs(b.String())
}

const runawayJoin = "SELECT VALUE [a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE a + b + d = -1"

// TestBudgetEndsRunawayJoin: a page of a JOIN that would evaluate 10⁹
// combinations in one document stops at its budget and returns no rows
// with a continuation, and the next page resumes further on: each
// continuation names a later combination.
func TestBudgetEndsRunawayJoin(t *testing.T) {
	src := cartesian(1000)
	p := mustPlan(t, runawayJoin)
	var tok []byte
	var prev []int
	for i := range 3 {
		clk := &stepClock{}
		pg, err := p.Page(context.Background(), src, PageRequest{
			Continuation: tok, Env: Env{Now: evalNow, Elapsed: clk.Elapsed}, Budget: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		if len(pg.Rows()) != 0 || pg.Next == nil {
			t.Fatalf("page %d: %d rows, continuation %v; want none and a continuation", i, len(pg.Rows()), pg.Next != nil)
		}
		cur, err := p.decodeCursor(pg.Next)
		if err != nil {
			t.Fatal(err)
		}
		if !cur.hasPartial || slices.Compare(cur.partialPos, prev) <= 0 {
			t.Fatalf("page %d resumes at %v, not after the previous page's %v", i, cur.partialPos, prev)
		}
		prev, tok = cur.partialPos, pg.Next
	}
}

// TestCancelStopsEvaluation: cancelling the context of a page that would
// run for minutes ends it with the context's error at the evaluator's
// next check, inside the one document it is evaluating.
func TestCancelStopsEvaluation(t *testing.T) {
	src := cartesian(1000)
	p := mustPlan(t, runawayJoin)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The clock is read when the page starts and at every check while
	// the context is live. Its tenth read, thousands of combinations
	// into the JOIN, cancels the context: the next check must see that
	// and stop, without reading the clock again.
	var reads atomic.Int64
	elapsed := func() time.Duration {
		if reads.Add(1) == 10 {
			cancel()
		}
		return 0
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Page(ctx, src, PageRequest{Env: Env{Now: evalNow, Elapsed: elapsed}, Budget: time.Hour})
		done <- err
	}()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Page = %v, want context.Canceled", err)
	}
	if n := reads.Load(); n != 10 {
		t.Errorf("the clock was read %d times, want 10: work went on after the cancellation", n)
	}
}

// TestCancelledBeforeStart: a page whose context is already done does
// no work at all.
func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, q := range []string{runawayJoin, "SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr", "SELECT * FROM c ORDER BY c.id"} {
		if _, err := mustPlan(t, q).Page(ctx, cartesian(1000), PageRequest{}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Page = %v, want context.Canceled", q, err)
		}
	}
}

// TestBudgetNeedsElapsed: a budget without a clock is a mistake, not a
// page without a bound.
func TestBudgetNeedsElapsed(t *testing.T) {
	if _, err := mustPlan(t, "SELECT * FROM c").Page(context.Background(), docs(`{}`), PageRequest{Budget: time.Second}); err == nil {
		t.Fatal("Page with a budget and no Env.Elapsed succeeded")
	}
}

// TestSpatialBudget: the spatial functions compare two geometries
// position by position, within one evaluation; that work is counted to
// the meter, so one document holding two long lines stops at the page's
// budget instead of running on.
func TestSpatialBudget(t *testing.T) {
	line := func(lat int) string {
		var b strings.Builder
		b.WriteString(`{"type":"LineString","coordinates":[`)
		for i := range 2000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "[%g,%d]", float64(i)/100, lat)
		}
		b.WriteString("]}")
		return b.String()
	}
	src := docs(`{"id":"1","a":` + line(0) + `,"b":` + line(40) + `}`)
	for _, q := range []string{"SELECT VALUE ST_DISTANCE(c.a, c.b) FROM c", "SELECT VALUE ST_INTERSECTS(c.a, c.b) FROM c"} {
		var ticks time.Duration
		elapsed := func() time.Duration { ticks += time.Millisecond; return ticks }
		_, err := mustPlan(t, q).Page(context.Background(), src, PageRequest{Env: Env{Now: evalNow, Elapsed: elapsed}, Budget: 5 * time.Millisecond})
		var be *BudgetError
		if !errors.As(err, &be) || be.AllRows {
			t.Errorf("%s: Page = %v, want the budget to run out in the row", q, err)
		}
	}
}
