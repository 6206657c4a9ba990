package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/engine/document"
)

// searchBudgetEngine is an engine whose query clock steps a millisecond
// on every read, with a container of n items that have vectors and text
// and work meters that read it on every step.
func searchBudgetEngine(t *testing.T, n int, opts Options) *Engine {
	t.Helper()
	saved := workCheckEvery
	workCheckEvery = 1
	t.Cleanup(func() { workCheckEvery = saved })
	opts.QueryClock = clocktest.NewStep(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	e, _ := openEngine(t, memStore(t), opts)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"cosine","dimensions":2}]},`+
		`"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t"}]}}`)
	for i := range n {
		write(t, e, "c", fmt.Sprintf(`{"id":"d%04d","pk":"p","v":[%d,%d],"t":"quick brown fox %d"}`, i, i%7+1, i%5, i))
	}
	return e
}

// TestSearchWorkBudget: the work a search does before its executor sees
// a row (reading the vectors, reading the full-text index, counting the
// full-text statistics) stops with a 408 naming it once the page budget
// is spent, and the same searches run whole without a budget.
func TestSearchWorkBudget(t *testing.T) {
	queries := map[string]string{
		"SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])":                                      "reading the container's vectors",
		"SELECT TOP 3 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'fox')":                                   "reading the container's full-text index of /t",
		"SELECT TOP 3 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'fox'), VectorDistance(c.v, [1, 0]))": "counting the full-text statistics",
		"SELECT TOP 3 c.id FROM c WHERE FullTextContains(c.t, 'fox')":                                        "reading the container's full-text index of /t",
	}
	bounded := searchBudgetEngine(t, 300, Options{QueryPageBudget: 100 * time.Millisecond})
	unbounded := searchBudgetEngine(t, 300, Options{QueryPageBudget: -1})
	for q, what := range queries {
		_, err := queryRows(bounded, q)
		if !IsKind(err, KindRequestTimeout) || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), "query page budget of 100ms") {
			t.Errorf("%s: %v, want a 408 naming %q", q, err, what)
		}
		if rows, err := queryRows(unbounded, q); err != nil || len(rows) != 3 {
			t.Errorf("%s without a budget: %v %v", q, rows, err)
		}
	}
}

// TestScriptRIDLookupBudget: a script's lookup of a document by _rid,
// a read of its partition, stops with a 408 the script sees once the
// script time budget is spent.
func TestScriptRIDLookupBudget(t *testing.T) {
	// The query clock steps 1 ms a read: 1,100 items outlast a budget
	// of a second the script's own (real) clock is far from spending.
	e := searchBudgetEngine(t, 1100, Options{ScriptBudgets: scriptBudgets(time.Second)})
	res, err := e.ReadItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "d1099", PK: `["p"]`, HasPK: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Self string `json:"_self"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatal(err)
	}
	createSproc(t, e, "byRID", `function (link) {
		getContext().getCollection().readDocument(link, function (err, d) {
			getContext().getResponse().setBody(err ? [err.number, err.message] : d.id);
		});
	}`)
	got := mustExec(t, e, "byRID", `["p"]`, fmt.Sprintf("[%q]", doc.Self))
	if !strings.HasPrefix(got, "[408,") || !strings.Contains(got, "script's time budget of 1s") {
		t.Fatalf("lookup: %s", got)
	}
}

// TestSkippedItemsBudget: the items a request reads without being given
// them count against its page budget: those of other ranges in a query
// addressed to one range, and the change feed entries of other
// partition keys in a feed for one. Both stop with a 408 naming it.
func TestSkippedItemsBudget(t *testing.T) {
	saved := workCheckEvery
	workCheckEvery = 1
	t.Cleanup(func() { workCheckEvery = saved })
	ctx := context.Background()
	for _, budget := range []time.Duration{100 * time.Millisecond, -1} {
		e, _ := openEngine(t, memStore(t), Options{QueryPageBudget: budget, QueryClock: clocktest.NewStep(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))})
		mustCreateWith(t, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`, ThroughputHeaders{Partitions: "4"})
		// 300 items in logical partition p, which the feed of another
		// partition key of its range reads past; and, for the query of
		// another range, 300 items each in its own logical partition
		// outside that range (the scan seeks past a long run of one
		// partition key's items, so those 300 would cost it little).
		for i := range 300 {
			write(t, e, "c", fmt.Sprintf(`{"id":"d%04d","pk":"p"}`, i))
		}
		c, _ := e.container("db", "c")
		pk, _ := document.ParsePKHeader(`["p"]`)
		other := (c.partitionOf(pk) + 1) % 4
		for i, n := 0, 0; n < 300; i++ {
			key := fmt.Sprintf("s%d", i)
			if c.partitionOf(document.PartitionKey{{Kind: document.PKString, Str: key}}) == other {
				continue
			}
			ref := ItemRef{DB: "db", Coll: "c", PK: `["` + key + `"]`, HasPK: true}
			if _, err := e.WriteItem(ctx, ref, Upsert, []byte(`{"id":"s","pk":"`+key+`"}`), ""); err != nil {
				t.Fatal(err)
			}
			n++
		}
		_, qerr := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c"), RangeID: fmt.Sprint(other)})
		_, ferr := e.ChangeFeed(ctx, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: `["q"]`, HasPK: true}})
		if budget < 0 {
			if qerr != nil || ferr != nil {
				t.Errorf("without a budget: %v, %v", qerr, ferr)
			}
			continue
		}
		if !IsKind(qerr, KindRequestTimeout) || !strings.Contains(qerr.Error(), "other partition key ranges' items") {
			t.Errorf("query of a range: %v, want a 408 naming the other ranges' items", qerr)
		}
		if !IsKind(ferr, KindRequestTimeout) || !strings.Contains(ferr.Error(), "change feed entries of other partition keys") {
			t.Errorf("feed of a partition key: %v, want a 408 naming the other keys' entries", ferr)
		}
	}
}
