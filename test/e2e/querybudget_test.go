package e2e

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/server"
)

// runawayItem has an arr of 0…n-1: a three-way JOIN over it is n³
// combinations in one item.
func runawayItem(n int) []byte {
	nums := make([]string, n)
	for i := range nums {
		nums[i] = strconv.Itoa(i)
	}
	return []byte(`{"id":"runaway","pk":"r","arr":[` + strings.Join(nums, ",") + `]}`)
}

// TestRunawayQueryPages: a JOIN that outlasts the server's query page
// budget comes back to the SDK in pages, each with a continuation, some
// of them empty, and the SDK drains them to exactly the query's rows.
func TestRunawayQueryPages(t *testing.T) {
	qc := clocktest.NewStep(epoch)
	// 50 checks of the clock, about 50,000 steps of the JOINs, of the
	// 60³ = 216,000 combinations of the item.
	e := startWith(t, server.Config{Memory: true, QueryPageBudget: 50 * time.Millisecond, QueryClock: qc})
	c := e.container(t, pkProps("runaway", "/pk"))
	pk := azcosmos.NewPartitionKeyString("r")
	const n = 60
	if _, err := c.CreateItem(e.ctx, pk, runawayItem(n), nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for a := range n {
		for b := range n {
			for d := range n {
				if a < b && b < d && a+b+d == 150 {
					want[fmt.Sprintf("[%d,%d,%d]", a, b, d)] = true
				}
			}
		}
	}
	const q = "SELECT VALUE [a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE a < b AND b < d AND a + b + d = 150"
	pager := c.NewQueryItemsPager(q, pk, nil)
	pages := 0
	got := map[string]bool{}
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatalf("page %d: %v", pages+1, err)
		}
		pages++
		for _, it := range page.Items {
			if got[string(it)] {
				t.Errorf("row %s came twice", it)
			}
			got[string(it)] = true
		}
	}
	if pages < 2 {
		t.Errorf("%d page(s); want several, cut by the budget", pages)
	}
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d", len(got), len(want))
	}
	for r := range want {
		if !got[r] {
			t.Errorf("row %s missing", r)
		}
	}

	// A query that must see every row before it returns any cannot be
	// cut into pages: 408, naming the budget and the flag.
	_, err := c.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr", pk, nil).NextPage(e.ctx)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 408 || !strings.Contains(err.Error(), "--query-page-budget") {
		t.Errorf("COUNT over the JOIN: %v; want 408 naming --query-page-budget", err)
	}
}

// TestAbandonedQueryStops: a client that gives up on a query page that
// would run for minutes (10⁹ combinations) does not leave the server
// computing it: the request ends, with 408, as soon as the evaluator sees
// the cancellation.
func TestAbandonedQueryStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The client gives up once the server is deep into the JOIN: at the
	// query clock's fifth read, its fourth check.
	qc := clocktest.NewStep(epoch)
	qc.OnRead = func(n int64) {
		if n == 5 {
			cancel()
		}
	}
	e := startWith(t, server.Config{Memory: true, QueryPageBudget: time.Hour, QueryClock: qc})
	c := e.container(t, pkProps("abandoned", "/pk"))
	pk := azcosmos.NewPartitionKeyString("r")
	if _, err := c.CreateItem(e.ctx, pk, runawayItem(1000), nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.NewQueryItemsPager("SELECT VALUE [a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE a + b + d = -1", pk, nil).NextPage(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("NextPage = %v, want the client's context.Canceled", err)
	}
	// The server answers the abandoned request (408) once its evaluator
	// sees the cancellation; nobody reads the answer, the metrics do.
	abandoned := func() bool { return requestsWithStatus(t, e, "POST /dbs/{db}/colls/{coll}/docs", 408) == 1 }
	clocktest.WaitUntil(t, "the abandoned query's request to end", abandoned)
}

// requestsWithStatus is how many requests of the operation the server
// answered with status.
func requestsWithStatus(t testing.TB, e *env, op string, status int) uint64 {
	t.Helper()
	var m dto.Metric
	h, ok := e.srv.Metrics.RequestDuration.WithLabelValues(op, strconv.Itoa(status)).(prometheus.Histogram)
	if !ok || h.Write(&m) != nil {
		t.Fatal("cannot read the request duration histogram")
	}
	return m.GetHistogram().GetSampleCount()
}

// TestQueryLimitsThroughSDK: an IN list over the service's limit is a 400
// that names the limit, before anything runs.
func TestQueryLimitsThroughSDK(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("limits", "/pk"))
	pk := azcosmos.NewPartitionKeyString("p")
	vals := make([]string, 16001)
	for i := range vals {
		vals[i] = strconv.Itoa(i)
	}
	_, err := c.NewQueryItemsPager("SELECT * FROM c WHERE c.v IN ("+strings.Join(vals, ",")+")", pk, nil).NextPage(e.ctx)
	wantStatus(t, err, 400, "IN list of 16,001 values")
	if !strings.Contains(err.Error(), "maximum number of items in an IN expression. The allowed limit is 16000") {
		t.Errorf("IN list of 16,001 values: %v; want the limit named", err)
	}
	// At the limit it runs.
	if _, err := c.NewQueryItemsPager("SELECT * FROM c WHERE c.v IN ("+strings.Join(vals[:16000], ",")+")", pk, nil).NextPage(e.ctx); err != nil {
		t.Errorf("IN list of 16,000 values: %v", err)
	}
}
