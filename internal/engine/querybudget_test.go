package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/query"
)

// arrayDoc is an item whose arr holds 0…n-1.
func arrayDoc(id, kind string, n int) string {
	nums := make([]string, n)
	for i := range nums {
		nums[i] = strconv.Itoa(i)
	}
	return fmt.Sprintf(`{"id":%q,"pk":"p","kind":%q,"arr":[%s]}`, id, kind, strings.Join(nums, ","))
}

// budgetEngine is an engine whose query pages have the given budget on a
// step clock, with items holding arrays of 0…39.
func budgetEngine(t *testing.T, budget time.Duration) (*Engine, *clocktest.Step) {
	t.Helper()
	qc := clocktest.NewStep(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	e, _ := openEngine(t, memStore(t), Options{QueryPageBudget: budget, QueryClock: qc})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	for i := range 6 {
		kind := "even"
		if i%2 == 1 {
			kind = "odd"
		}
		write(t, e, "c", arrayDoc("d"+strconv.Itoa(i), kind, 40))
	}
	return e, qc
}

func itemsQuery(body []byte) QueryRequest {
	return QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: body, CrossPartition: true, RangeID: "0"}
}

// pagesOf runs a query to its end and returns its rows and page count.
func pagesOf(t *testing.T, e *Engine, req QueryRequest) (rows []string, pages int) {
	t.Helper()
	for pages = 1; ; pages++ {
		if pages > 10000 {
			t.Fatalf("%s: no end of pages", req.Body)
		}
		res, err := e.QueryItems(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: page %d: %v", req.Body, pages, err)
		}
		for _, r := range res.Rows() {
			rows = append(rows, string(r))
		}
		if res.Continuation == "" {
			return rows, pages
		}
		req.Continuation = res.Continuation
	}
}

// TestQueryBudgetPartialPages: a query over JOINs that outlasts its page
// budget comes back in more pages, each cut where its budget ran out,
// and the pages together hold exactly the rows of an unbounded run,
// over a scan and over an index.
func TestQueryBudgetPartialPages(t *testing.T) {
	// A budget of 100 checks of the clock is about 100,000 steps of
	// the JOINs: more than one item's 64,000 combinations, less than
	// the six items'.
	bounded, _ := budgetEngine(t, 100*time.Millisecond)
	unbounded, _ := budgetEngine(t, -1)
	for _, q := range []string{
		"SELECT VALUE [c.id, a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE a + b + d = 100",
		"SELECT VALUE [c.id, a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE c.kind = 'odd' AND a * b = d + 900",
		"SELECT VALUE [c.id, a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE a < b AND b < d OFFSET 100 LIMIT 30000",
		// ORDER BY read from the index on id returns the rows that are
		// final when the budget runs out: those of the items it has read
		// to their end.
		"SELECT VALUE [c.id, a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE a + b + d = 100 ORDER BY c.id",
	} {
		req := itemsQuery(queryBody(q))
		req.MaxItemCount = -1
		want, wantPages := pagesOf(t, unbounded, req)
		got, gotPages := pagesOf(t, bounded, req)
		if gotPages <= wantPages {
			t.Errorf("%s: %d pages unbounded, %d bounded; want more bounded", q, wantPages, gotPages)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the bounded pages hold %d rows, the unbounded run %d: not the same rows", q, len(got), len(want))
		}
	}
}

// TestQueryBudgetWholeResult: a query that must see every item before it
// returns any row cannot be cut into pages by the budget: it is a 408
// naming the budget and the flag that sets it.
func TestQueryBudgetWholeResult(t *testing.T) {
	e, _ := budgetEngine(t, 20*time.Millisecond)
	for _, q := range []string{
		"SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr",
		"SELECT VALUE [a, b] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr ORDER BY a",
		"SELECT DISTINCT VALUE a + b + d FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr",
	} {
		_, err := e.QueryItems(context.Background(), itemsQuery(queryBody(q)))
		var ee *Error
		if !asError(err, &ee) || ee.Kind != KindRequestTimeout ||
			!strings.Contains(ee.Message, "query page budget of 20ms (--query-page-budget)") || !strings.Contains(ee.Message, "must see every item") {
			t.Errorf("%s: %v; want a request timeout naming the 20ms budget and --query-page-budget", q, err)
		}
	}
}

// TestQueryCancelled: cancelling a query's context stops its page at the
// evaluator's next check, inside the item it is evaluating, with the
// context's error; the query clock is not read again.
func TestQueryCancelled(t *testing.T) {
	e, qc := budgetEngine(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	qc.OnRead = func(n int64) {
		if n == 5 {
			cancel()
		}
	}
	q := "SELECT VALUE 1 FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr JOIN f IN c.arr JOIN g IN c.arr WHERE a = -1"
	done := make(chan error, 1)
	go func() {
		_, err := e.QueryItems(ctx, itemsQuery(queryBody(q)))
		done <- err
	}()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("QueryItems = %v, want context.Canceled", err)
	}
	if n := qc.Reads(); n != 5 {
		t.Errorf("the query clock was read %d times, want 5: work went on after the cancellation", n)
	}
}

// TestQueryLimits: the service's limits on a query are 400s before
// anything runs, worded as the service words them.
func TestQueryLimits(t *testing.T) {
	e, qc := budgetEngine(t, time.Second)
	inList := func(n int) string {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = strconv.Itoa(i)
		}
		return "SELECT * FROM c WHERE c.v IN (" + strings.Join(vals, ",") + ")"
	}
	manyParams := make([]any, 0, 2*(query.MaxParameters+1))
	for i := range query.MaxParameters + 1 {
		manyParams = append(manyParams, "@p"+strconv.Itoa(i), i)
	}
	joins := "SELECT VALUE 1 FROM c"
	for i := range query.MaxJoins + 1 {
		joins += fmt.Sprintf(" JOIN a%d IN c.arr", i)
	}
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"text", queryBody("SELECT * FROM c WHERE c.s = '" + strings.Repeat("x", query.MaxQueryLength) + "'"), "The SQL query text exceeded the maximum limit of 524288 characters."},
		{"IN list", queryBody(inList(query.MaxInItems + 1)), "The SQL query exceeded the maximum number of items in an IN expression. The allowed limit is 16000; this one has 16001."},
		{"joins", queryBody(joins), "The SQL query exceeded the maximum number of joins. The allowed limit is 10."},
		{"parameters", queryBody("SELECT * FROM c", manyParams...), "The query has 32001 parameters, more than the 32000 allowed."},
	}
	for _, tt := range tests {
		_, err := e.QueryItems(context.Background(), itemsQuery(tt.body))
		var ee *Error
		if !asError(err, &ee) || ee.Kind != KindBadRequest || ee.Message != tt.want {
			t.Errorf("%s: %v; want 400 %q", tt.name, err, tt.want)
		}
	}
	if n := qc.Reads(); n != 0 {
		t.Errorf("the query clock was read %d times: a query beyond a limit ran", n)
	}
}
