package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/query"
)

// TestPlanCache follows the engine's cache of parsed queries through a
// query's pages and its query plan request (one parse), a read feed
// (none: its plan is built once per process), and one text over
// containers whose computed properties of the same name differ (each
// bound to its own).
func TestPlanCache(t *testing.T) {
	e, _ := newTestEngine(t)
	ctx := context.Background()
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"computedProperties":[{"name":"cp","query":"SELECT VALUE LOWER(c.name) FROM c"}]}`)
	mustCreate(t, e, "db", "d", `{"id":"d","partitionKey":{"paths":["/pk"]},"computedProperties":[{"name":"cp","query":"SELECT VALUE UPPER(c.name) FROM c"}]}`)
	for _, coll := range []string{"c", "d"} {
		for _, id := range []string{"1", "2", "3", "4", "5"} {
			write(t, e, coll, `{"id":"`+id+`","pk":"p","name":"Ada`+id+`"}`)
		}
	}
	stats := func() query.CacheStats { return e.plans.Stats() }
	expect := func(what string, hits, misses int64) {
		t.Helper()
		if st := stats(); st.Hits != hits || st.Misses != misses {
			t.Fatalf("after %s: %d hits and %d misses, want %d and %d", what, st.Hits, st.Misses, hits, misses)
		}
	}

	feed := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: 2}
	for pages := 0; ; pages++ {
		res, err := e.ReadFeed(ctx, feed)
		if err != nil {
			t.Fatal(err)
		}
		if feed.Continuation = res.Continuation; feed.Continuation == "" {
			break
		}
	}
	expect("a read feed", 0, 0)

	const text = `SELECT VALUE c.cp FROM c`
	rows := func(coll string) string {
		t.Helper()
		req := QueryRequest{Ref: ItemRef{DB: "db", Coll: coll, PK: `["p"]`, HasPK: true}, Body: queryBody(text), MaxItemCount: 2}
		var all []string
		for {
			res, err := e.QueryItems(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, bytesToStrings(res.Rows())...)
			if req.Continuation = res.Continuation; req.Continuation == "" {
				return strings.Join(all, ",")
			}
		}
	}
	if got, want := rows("c"), `"ada1","ada2","ada3","ada4","ada5"`; got != want {
		t.Fatalf("container c: %s, want %s", got, want)
	}
	expect("three pages of a query", 2, 1)
	if _, err := e.QueryPlan(ctx, ItemRef{DB: "db", Coll: "c"}, queryBody(text), false); err != nil {
		t.Fatal(err)
	}
	expect("its query plan request", 3, 1)
	if got, want := rows("d"), `"ADA1","ADA2","ADA3","ADA4","ADA5"`; got != want {
		t.Fatalf("container d, the same text over another definition of cp: %s, want %s", got, want)
	}
	expect("the same text over another container", 6, 1)
	if _, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}, Body: queryBody("SELECT FROM c")}); err == nil {
		t.Fatal("a query that does not parse ran")
	}
	if _, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}, Body: queryBody("SELECT FROM c")}); err == nil {
		t.Fatal("a query that does not parse ran")
	}
	expect("a query that does not parse, twice", 6, 3)
	if st := stats(); st.Entries != 1 {
		t.Fatalf("%d entries, want the one query that parsed", st.Entries)
	}
}
