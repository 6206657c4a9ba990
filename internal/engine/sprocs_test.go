package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/script"
)

func scriptBudgets(d time.Duration) script.Budgets { return script.Budgets{Time: d} }

// createSproc stores a stored procedure with body src in container c.
func createSproc(t testing.TB, e *Engine, id, src string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"id": id, "body": src})
	if _, err := e.CreateScript(context.Background(), "db", "c", StoredProcedure, body); err != nil {
		t.Fatal(err)
	}
}

func execSproc(e *Engine, id, pk, args string) (ProcedureResult, error) {
	return e.ExecuteStoredProcedure(context.Background(), ProcedureCall{
		Ref:  ItemRef{DB: "db", Coll: "c", ID: id, PK: pk, HasPK: true},
		Args: []byte(args),
	})
}

func mustExec(t *testing.T, e *Engine, id, pk, args string) string {
	t.Helper()
	res, err := execSproc(e, id, pk, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", id, args, err)
	}
	return string(res.Body)
}

// countItems counts the visible items of partition p.
func countItems(t *testing.T, e *Engine, pk string) int {
	t.Helper()
	res, err := e.QueryItems(context.Background(), QueryRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: pk, HasPK: true}, Body: []byte(`{"query":"SELECT VALUE COUNT(1) FROM c"}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Release()
	var n int
	if err := json.Unmarshal(res.Rows()[0], &n); err != nil {
		t.Fatal(err)
	}
	return n
}

const bulkCreate = `function bulk(n, failAt) {
	var c = getContext().getCollection(), made = 0;
	for (var i = 0; i < n; i++) {
		if (i === failAt) throw new Error("stopped at " + i);
		if (!c.createDocument(c.getSelfLink(), {id: "d" + i, pk: "p", n: i})) break;
		made++;
	}
	getContext().getResponse().setBody(made);
}`

func TestStoredProcedureCommitsOrNothing(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	createSproc(t, e, "bulk", bulkCreate)

	if got := mustExec(t, e, "bulk", `["p"]`, `[100, -1]`); got != "100" {
		t.Fatalf("bulk create returned %s", got)
	}
	if n := countItems(t, e, `["p"]`); n != 100 {
		t.Fatalf("%d items after the bulk create, want 100", n)
	}
	// One that throws half-way commits nothing.
	createSproc(t, e, "bulk2", strings.Replace(bulkCreate, `"d" + i`, `"e" + i`, 1))
	_, err := execSproc(e, "bulk2", `["p"]`, `[100, 50]`)
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != KindBadRequest || !strings.HasPrefix(ee.Message, "Encountered exception while executing function. Exception = Error: stopped at 50") {
		t.Fatalf("got %v, want the thrown error", err)
	}
	if n := countItems(t, e, `["p"]`); n != 100 {
		t.Fatalf("%d items after a procedure threw, want the 100 from before", n)
	}
	// Another partition's items are refused as a client write is.
	createSproc(t, e, "other", `function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: "x", pk: "q"}); }`)
	if _, err := execSproc(e, "other", `["p"]`, `[]`); err == nil || !strings.Contains(err.Error(), "doesn't match the one specified in the header") {
		t.Fatalf("a write to another partition: %v", err)
	}
}

func TestStoredProcedureOperations(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	write(t, e, "c", `{"id":"a","pk":"p","v":1}`)
	createSproc(t, e, "ops", `function () {
		var c = getContext().getCollection(), out = {};
		c.readDocument(c.getAltLink() + "/docs/a", function (err, a) {
			out.read = a.v;
			a.v = 2;
			c.replaceDocument(a._self, a, {etag: a._etag}, function (err, a2) {
				out.replaced = a2.v;
				c.replaceDocument(a._self, a, {etag: a._etag}, function (err) {
					out.stale = err.number;
					c.createDocument(c.getSelfLink(), {pk: "p", auto: true}, function (err, d) {
						out.autoID = d.id.length;
						c.createDocument(c.getSelfLink(), {pk: "p"}, {disableAutomaticIdGeneration: true}, function (err) {
							out.noID = err.number;
							c.deleteDocument(a._self, function (err) {
								c.readDocument("dbs/db/colls/c/docs/a", function (err) {
									out.deleted = err.number;
									c.upsertDocument(c.getSelfLink(), {id: "b", pk: "p"}, function (err, b) {
										out.upserted = b.id;
										getContext().getResponse().setBody(out);
									});
								});
							});
						});
					});
				});
			});
		});
	}`)
	got := mustExec(t, e, "ops", `["p"]`, ``)
	want := `{"read":1,"replaced":2,"stale":412,"autoID":36,"noID":400,"deleted":404,"upserted":"b"}`
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestStoredProcedureQueries(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	for i := range 25 {
		write(t, e, "c", `{"id":"d`+string(rune('a'+i))+`","pk":"p","n":`+string(rune('0'+i%10))+`}`)
	}
	if _, err := e.WriteItem(context.Background(), ItemRef{DB: "db", Coll: "c", PK: `["q"]`, HasPK: true}, Create, []byte(`{"id":"other","pk":"q","n":1}`), ""); err != nil {
		t.Fatal(err)
	}
	createSproc(t, e, "q", `function (sql) {
		var c = getContext().getCollection(), ids = [], pages = 0;
		c.createDocument(c.getSelfLink(), {id: "zz", pk: "p", n: 1});
		function page(cont) {
			var ok = c.queryDocuments(c.getSelfLink(), {query: sql, parameters: [{name: "@n", value: 1}]}, {pageSize: 3, continuation: cont}, function (err, docs, opts) {
				if (err) throw err;
				pages++;
				docs.forEach(function (d) { ids.push(d.id); });
				if (opts.continuation) page(opts.continuation); else getContext().getResponse().setBody({ids: ids, pages: pages});
			});
			if (!ok) throw new Error("not accepted");
		}
		page();
	}`)
	got := mustExec(t, e, "q", `["p"]`, `["SELECT c.id FROM c WHERE c.n = @n"]`)
	// Its own write is seen; the other partition is not.
	if want := `{"ids":["db","dl","dv","zz"],"pages":2}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	createSproc(t, e, "bad", `function () { var c = getContext().getCollection(); c.queryDocuments(c.getSelfLink(), "SELECT FROM"); }`)
	if _, err := execSproc(e, "bad", `["p"]`, `[]`); err == nil || !strings.Contains(err.Error(), "Syntax error") {
		t.Fatalf("a bad query: %v", err)
	}
}

func TestStoredProcedureTTL(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(`,"defaultTtl":10`))
	write(t, e, "c", `{"id":"old","pk":"p"}`)
	write(t, e, "c", `{"id":"kept","pk":"p","ttl":-1}`)
	clk.Advance(11 * time.Second)
	createSproc(t, e, "ttl", `function () {
		var c = getContext().getCollection(), out = {};
		c.readDocument(c.getAltLink() + "/docs/old", function (err) {
			out.read = err.number;
			c.readDocuments(c.getSelfLink(), function (err, docs) {
				out.all = docs.map(function (d) { return d.id; });
				c.createDocument(c.getSelfLink(), {id: "old", pk: "p", ttl: 5}, function (err, d) {
					out.recreated = d._ts;
					c.createDocument(c.getSelfLink(), {id: "bad", pk: "p", ttl: 0}, function (err) {
						out.badTTL = JSON.parse(err.message).Errors[0];
						getContext().getResponse().setBody(out);
					});
				});
			});
		});
	}`)
	got := mustExec(t, e, "ttl", `["p"]`, `[]`)
	var out struct {
		Read      int
		All       []string
		Recreated int64
		BadTTL    string
	}
	if err := json.Unmarshal([]byte(got), &out); err != nil {
		t.Fatal(err)
	}
	_, clientErr := e.WriteItem(context.Background(), ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}, Create, []byte(`{"id":"bad","pk":"p","ttl":0}`), "")
	if out.Read != 404 || strings.Join(out.All, ",") != "kept" || out.Recreated != clk.Now().Unix() || clientErr == nil || out.BadTTL != clientErr.Error() {
		t.Fatalf("got %+v (client ttl error %v)", out, clientErr)
	}
}

// TestStoredProcedureStaleSnapshot: a write that lands while a procedure
// runs makes it run again on a new snapshot; nothing is lost.
func TestStoredProcedureStaleSnapshot(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	write(t, e, "c", `{"id":"counter","pk":"p","n":0}`)
	createSproc(t, e, "inc", `function () {
		var c = getContext().getCollection();
		c.readDocument(c.getAltLink() + "/docs/counter", function (err, d) {
			d.n++;
			c.replaceDocument(d._self, d, function (err, d2) { getContext().getResponse().setBody(d2.n); });
		});
	}`)
	runs := 0
	e.afterSnapshotRun = func() {
		runs++
		if runs <= maxOptimisticRuns+1 { // a writer that always gets in first
			write(t, e, "c", `{"id":"counter","pk":"p","n":`+string(rune('0'+runs))+`}`)
		}
	}
	got := mustExec(t, e, "inc", `["p"]`, `[]`)
	if runs != maxOptimisticRuns || got != string(rune('0'+maxOptimisticRuns+1)) {
		t.Fatalf("%d snapshot runs, result %s; want %d runs and then one holding the transaction", runs, got, maxOptimisticRuns)
	}
}

// TestStoredProcedureTimeBudget: a procedure that never ends is stopped
// with 408 and commits nothing, and while it runs, other writes and
// reads go on.
func TestStoredProcedureTimeBudget(t *testing.T) {
	real := clock.NewManual(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	e, _ := openEngine(t, memStore(t), Options{RealClock: real, ScriptBudgets: scriptBudgets(time.Second)})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	createSproc(t, e, "spin", `function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: "x", pk: "p"}); while (true) {} }`)
	done := make(chan error, 1)
	go func() {
		_, err := execSproc(e, "spin", `["p"]`, `[]`)
		done <- err
	}()
	write(t, e, "c", `{"id":"meanwhile","pk":"p"}`)
	if _, err := e.ReadItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "meanwhile", PK: `["p"]`, HasPK: true}, ""); err != nil {
		t.Fatal(err)
	}
	err := clocktest.AdvanceUntilDone(t, real, 100*time.Millisecond, "the procedure stops", func() error { return <-done })
	if !IsKind(err, KindRequestTimeout) {
		t.Fatalf("got %v, want 408", err)
	}
	if n := countItems(t, e, `["p"]`); n != 1 {
		t.Fatalf("%d items, want only the one written meanwhile", n)
	}
}

// TestStoredProcedureLongUnderContention: a procedure too long to hold
// the write transaction for, on a container another writer always gets
// to first, stays on snapshots and answers 408 once its time budget is
// spent, having committed nothing.
func TestStoredProcedureLongUnderContention(t *testing.T) {
	real := clock.NewManual(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	e, _ := openEngine(t, memStore(t), Options{RealClock: real, ScriptBudgets: scriptBudgets(time.Second)})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	createSproc(t, e, "mark", `function () { var c = getContext().getCollection(); c.upsertDocument(c.getSelfLink(), {id: "mark", pk: "p"}); }`)
	runs := 0
	e.afterSnapshotRun = func() {
		runs++
		real.Advance(maxLockedRun + time.Millisecond) // every run is a long one
		write(t, e, "c", `{"id":"other","pk":"p"}`)
	}
	_, err := execSproc(e, "mark", `["p"]`, `[]`)
	if !IsKind(err, KindRequestTimeout) || runs < maxOptimisticRuns+1 || exists(t, e, "mark") {
		t.Fatalf("after %d runs: %v (marked: %v); want 408 and nothing committed", runs, err, exists(t, e, "mark"))
	}
}
